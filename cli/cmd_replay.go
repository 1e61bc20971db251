package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kbatch-dev/kbatch/filter"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/replay"
)

// replayOptions are the flags of replay.
type replayOptions struct {
	out         string
	toTopic     string
	toPartition int32
	isolation   string
	format      string
	where       string
	dec         decodeFlags
	emit        replayEmitOptions
}

func newReplayCommand(g *globalOptions) *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay RANGE...",
		Short: "Read exact offset ranges; write their records as JSON lines or to a topic",
		Long: `replay reads exactly the offsets [FROM, UNTIL) of each RANGE and writes the
records as JSON lines (stdout or --out FILE) or re-produces them into a topic
(--to-topic). It never touches the offset store and joins no consumer group.

RANGE is TOPIC:PARTITIONS:FROM-UNTIL:
  PARTITIONS  N, N,M,... or * (every partition)
  FROM        an offset, earliest (the log start) or @TIME
  UNTIL       an offset (exclusive), latest (the end of the log) or @TIME
  TIME        RFC 3339 (2026-11-29T10:00:00Z) or a duration ago (@-5m): the
              first offset whose timestamp is at or after it

A partition is read until its position reaches UNTIL, whatever offsets hold
no record (compaction, transaction markers, aborted transactions). UNTIL
beyond the end of the log is capped at the end seen at start: the high
watermark, or with --isolation committed the last stable offset (an open
transaction holds it back); when UNTIL is an offset, a line says the replay
stopped short of it and the exit code is 4. Offsets below the log start no
longer exist: the rest is read, the summary names what is missing, and the
exit code is 3. Several ranges and partitions are read
concurrently; each partition's records come out in offset order.

--where EXPR keeps only the records for which the CEL expression is true
(docs/filters.md): key and value are the decoded message where a schema
applies (--registry, local schemas), else parsed JSON, else text or bytes;
headers, headers_list, topic, partition, offset, timestamp and size too.
A bad expression is refused before anything is read (exit 2). A record
whose expression fails (a missing field) does not match; a line before the
summary says how many matched and how many did not evaluate.

--out FILE is written to a temporary file renamed into place at the end, so
FILE is complete or left as it was. A summary always ends on stderr, with a
progress line before it when stderr is a terminal.

--emit spark reads nothing: it resolves the RANGEs on the cluster and writes
a ready Spark job into the folder --out DIR, kbatch_replay.py (PySpark) and
KbatchReplay.scala, that reads exactly those offsets (assign,
startingOffsets, endingOffsets) and writes them as --spark-format (parquet
or json) to --spark-output PATH: for a replay too big for one machine. The
bootstrap servers and security settings come from the connection (flags,
environment, --cluster profile); secrets are never written, the job reads
the SASL password from $KAFKA_SASL_PASSWORD.

Exit codes: 0 done, 1 failure, 2 bad RANGE or flag, unknown topic or
partition, 3 some requested offsets were below the log start, 4 an UNTIL
offset was beyond the end seen at start (and none was below the log start).`,
		Example: `  kbatch replay events:3:1200-1350 --out incident.jsonl
  kbatch replay 'events:*:earliest-latest' --out /dev/null
  kbatch replay events:1:@2026-11-29T10:00:00Z-@-5m --isolation committed
  kbatch replay events:0,2:100-200 --to-topic events-retry
  kbatch replay 'payments:*:@-24h-latest' --where 'value.amount > 90.0 && value.country == "FR"' --out refunds.jsonl
  kbatch replay events:0:100-200 events:1:5-latest --to-topic retry --to-partition 0
  kbatch replay 'events:*:@-24h-latest' --emit spark --out job/ --spark-output s3a://lake/replay/`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("replay needs at least one RANGE (TOPIC:PARTITIONS:FROM-UNTIL, e.g. events:0:100-200)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			return runReplay(ctx, g, o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "write JSON lines to FILE instead of stdout (- for stdout)")
	f.StringVar(&o.toTopic, "to-topic", "", "re-produce keys, values, headers and timestamps into topic NAME")
	f.Int32Var(&o.toPartition, "to-partition", -1, "with --to-topic: produce into partition N (default: the same partition number)")
	f.StringVar(&o.format, "format", "json", "shape of the record lines: json (kbatch's) or kcat (kcat -J's)")
	addDecodeFlags(f, &o.dec)
	addWhereFlag(f, &o.where)
	f.StringVar(&o.isolation, "isolation", "uncommitted", "committed: skip aborted transactions; uncommitted: read everything, like Kafka's default")
	addReplayEmitFlags(f, &o.emit)
	return cmd
}

// replayPlan is what replay's flags and RANGEs decide before anything is
// opened.
type replayPlan struct {
	committed bool
	enc       record.Appender
	specs     []replay.RangeSpec
	where     *filter.Program // nil without --where
}

// plan checks replay's flags, alone and against each other, and parses the
// RANGEs (relative times against now); it opens nothing.
func (o *replayOptions) plan(args []string, now time.Time) (replayPlan, error) {
	var p replayPlan
	if o.where != "" {
		var err error
		if p.where, err = compileWhere(o.where); err != nil {
			return p, err
		}
		o.dec.forWhere = true
	}
	switch o.isolation {
	case "committed":
		p.committed = true
	case "uncommitted":
	default:
		return p, usagef("invalid --isolation %q: want committed or uncommitted", o.isolation)
	}
	if o.toTopic != "" && o.out != "" {
		return p, usagef("--out and --to-topic exclude each other: pick one output")
	}
	var err error
	if p.enc, err = recordFormat(o.format); err != nil {
		return p, err
	}
	if o.toTopic != "" && o.dec.decode {
		return p, usagef("--decode adds decoded records to JSON lines; --to-topic copies the raw bytes: drop one")
	}
	if o.toTopic != "" && o.format != "json" {
		return p, usagef("--format shapes JSON lines; --to-topic produces records, not lines: drop one")
	}
	if o.toPartition < -1 || o.toPartition >= 0 && o.toTopic == "" {
		if o.toTopic == "" {
			return p, usagef("--to-partition needs --to-topic")
		}
		return p, usagef("invalid --to-partition %d: want a partition number", o.toPartition)
	}
	p.specs = make([]replay.RangeSpec, 0, len(args))
	for _, a := range args {
		s, err := replay.ParseRange(a, now)
		if err != nil {
			return p, err
		}
		p.specs = append(p.specs, s)
	}
	return p, nil
}

// runReplay parses and checks everything it can before it reads anything:
// RANGEs and flags, then topics, partitions and the --to-topic target.
func runReplay(ctx context.Context, g *globalOptions, o *replayOptions, args []string, stdout, stderr io.Writer) error {
	if o.emit.target != "" {
		return runReplayEmit(g, o, args, stdout, stderr)
	}
	p, err := o.plan(args, time.Now())
	if err != nil {
		return err
	}
	if o.out != "-" {
		if err := notTheStore(g, "--out", o.out); err != nil {
			return err
		}
	}
	cc, err := g.clientConfig()
	if err != nil {
		return err
	}
	cc.ReadCommitted = p.committed
	var warnings decodeWarnings
	dec, err := g.openDecoder(&o.dec, o.format, &warnings, nil)
	if err != nil {
		return err
	}
	if dec != nil {
		defer dec.Close()
		if o.dec.decode {
			p.enc = &decodingAppender{inner: p.enc, dec: dec}
		}
	}
	client, err := kafka.Dial(cc) // replay's fetches long-poll 100ms (replay.Run)
	if err != nil {
		return err
	}
	defer client.Close()
	setLeaderLookup(p.enc, client)
	tasks, err := replay.Plan(client, p.specs)
	if err != nil {
		return err
	}
	sink, incomplete, err := o.openSink(cc, tasks, p.enc, stdout, g.warn)
	if err != nil {
		return err
	}
	var where *filter.Where
	if p.where != nil {
		where = filter.NewWhere(p.where, filter.Schemas(dec))
		sink = &whereSink{Sink: sink, where: where}
	}
	rep, err := replay.Run(ctx, client, tasks, sink, progressOptions(stderr))
	warnings.flush(stderr)
	if where != nil {
		printWhere(stderr, where, dec != nil)
	}
	writeSafeLines(stderr, rep.WriteSummary)
	var partial *replay.PartialError
	if err != nil && !errors.As(err, &partial) {
		return fmt.Errorf("%w; %s", err, incomplete)
	}
	if err == nil {
		if short := replay.Short(tasks, p.committed); short != nil {
			return short
		}
	}
	return err
}

// openSink opens replay's output for tasks: the --to-topic producer, the
// --out file (warning about temporary files of it that earlier replays
// left), or stdout. incomplete says what a failure leaves behind, for
// the error message.
func (o *replayOptions) openSink(cc kafka.ClientConfig, tasks []replay.Task, enc record.Appender, stdout io.Writer, warn func(string)) (sink replay.Sink, incomplete string, err error) {
	switch {
	case o.toTopic != "":
		sources := make([]offsets.Partition, len(tasks))
		for i, t := range tasks {
			sources[i] = t.Read.Partition
		}
		s, err := replay.NewTopicSink(cc, o.toTopic, o.toPartition, sources)
		if err != nil {
			return nil, "", err
		}
		return s, fmt.Sprintf("records produced before the failure stay in %s", o.toTopic), nil
	case o.out != "" && o.out != "-":
		s, err := replay.CreateJSONFile(o.out)
		if err != nil {
			return nil, "", err
		}
		if left := s.Leftovers(); len(left) > 0 {
			them := "it"
			if len(left) > 1 {
				them = "them"
			}
			warn(fmt.Sprintf("%s: a replay to this file that did not finish (killed, or running now) left %s; remove %s once no replay is writing to it", o.out, describeFiles(left), them))
		}
		s.SetEncoder(enc)
		return s, fmt.Sprintf("--out %s was left as it was", o.out), nil
	}
	s := replay.NewJSONSink(stdout)
	s.SetEncoder(enc)
	return s, "the output is incomplete", nil
}

// progressOptions shows replay's progress line on stderr when stderr is a
// terminal, as wide as the terminal.
func progressOptions(stderr io.Writer) replay.Options {
	var opts replay.Options
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Progress = stderr
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			opts.ProgressWidth = w
		}
	}
	return opts
}

// writeSafeLines runs write into a buffer and copies its lines to w made
// safe for a terminal (record.String): a summary names topics, and a
// topic's name comes from the cluster.
func writeSafeLines(w io.Writer, write func(io.Writer) error) {
	var b strings.Builder
	_ = write(&b)
	if b.Len() == 0 {
		return
	}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		fmt.Fprintln(w, record.String(line))
	}
}

// describeFiles names files with their sizes: "a (12 MiB)", "a (1 KiB)
// and b (0 B)".
func describeFiles(paths []string) string {
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = p
		if fi, err := os.Stat(p); err == nil {
			parts[i] += " (" + record.FormatSize(fi.Size()) + ")"
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
