package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/exchange"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/record"
)

type offsetsExportOptions struct {
	format  string
	ending  bool
	topics  []string
	toGroup toGroupOptions
}

func newOffsetsExportCommand(g *globalOptions) *cobra.Command {
	o := &offsetsExportOptions{}
	cmd := &cobra.Command{
		Use:   "export (--format json|spark|kcat | --to-group GROUP [--execute]) [--name STREAM]",
		Short: "Print a stream's next offsets as JSON, Spark startingOffsets, or kcat commands, or write them to a consumer group",
		Long: `export prints the stream's stored next offsets on stdout:

  json   {"stream":"events","topics":["events"],"next":{"events":{"0":80,"1":120}}}
         (kbatch offsets import --from-json reads it back)
  spark  the value of Spark's startingOffsets option, {"events":{"0":80,"1":120}};
         with --ending, of endingOffsets (batch queries). Spark requires every
         partition of each subscribed topic: with the cluster (-b or
         KBATCH_BROKERS) partitions without a stored offset are listed as -2
         (earliest) in startingOffsets and -1 (latest) in endingOffsets; without
         it only stored partitions are listed and a note on stderr says so.
  kcat   one "kcat -C -b BROKERS -t TOPIC -p PARTITION -o OFFSET" line per stored
         partition (brokers from -b, else the ones the stream last used)

With --to-group GROUP (needs -b) export puts a consumer group at the
stream's next offsets, so the group's consumers start where the stream
stands. It prints the plan, per partition the group's committed offset now,
the new one and the difference, and changes nothing; --execute writes it
(an OffsetCommit with generation -1, as kafka-consumer-groups does: kbatch
never joins the group) and reads it back. A group with live members is
refused (exit 1): stop its consumers first. --batch N takes batch N's
offsets instead: --at from (the default) puts the group at the batch's start,
so it reads the batch again; --at until at its end, so it goes on after it.
Partitions the batch did not read are put where they were at the batch.
Partitions the group committed on other topics keep their offsets.

--name defaults to the store's only stream; --topic limits the output to some
of its topics (a Spark query must list exactly the topics it subscribes to).`,
		Example: `  kbatch offsets export --name events --format json > events.json
  kbatch offsets export --name events --format spark -b localhost:9092
  kbatch offsets export --name events --format kcat
  kbatch offsets export --name events --to-group billing -b localhost:9092
  kbatch offsets export --name events --to-group billing --batch 12 --at until --execute -b localhost:9092`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runOffsetsExport(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "json", "json, spark or kcat")
	f.BoolVar(&o.ending, "ending", false, "with --format spark: print endingOffsets instead of startingOffsets")
	f.StringArrayVarP(&o.topics, "topic", "t", nil, "only these topics of the stream (repeatable)")
	f.StringVar(&o.toGroup.group, "to-group", "", "print the plan that puts consumer GROUP at the stream's offsets (needs -b)")
	f.BoolVar(&o.toGroup.execute, "execute", false, "with --to-group: write the plan to the group")
	f.Var(batchNumber{&o.toGroup.batch}, "batch", "with --to-group: batch N's offsets instead of the stream's next ones")
	f.StringVar(&o.toGroup.at, "at", toGroupAtFrom, "with --batch: from (the group reads batch N again) or until (it goes on after it)")
	return cmd
}

func runOffsetsExport(cmd *cobra.Command, g *globalOptions, o *offsetsExportOptions) error {
	fl := cmd.Flags()
	if err := o.toGroup.check(fl.Changed("format"), fl.Changed("ending"), fl.Changed("at"), fl.Changed("to-group")); err != nil {
		return err
	}
	switch o.format {
	case "json", "spark", "kcat":
	default:
		return usagef("invalid --format %q: want json, spark or kcat", o.format)
	}
	if o.ending && o.format != "spark" {
		return usagef("--ending applies to --format spark (Spark's endingOffsets)")
	}
	st, err := offsetsReadStore(g, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer st.Close()
	info, err := offsetsPickStream(st, g.name)
	if err != nil {
		return err
	}
	if err := offsetsUndamaged(st, info); err != nil {
		return err
	}
	topics, err := exportTopics(info, o.topics)
	if err != nil {
		return err
	}
	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.toGroup.group != "" {
		return runOffsetsToGroup(out, stderr, g, o, st, info, topics)
	}
	next, _ := offsets.FilterTopics(info.Next, topics)
	switch o.format {
	case "json":
		return exchange.Write(out, exchange.Document{Stream: info.Name, Topics: topics, Next: next})
	case "kcat":
		return exportKcat(g, info, next, out, stderr)
	}
	return exportSpark(g, info, topics, next, o.ending, out, stderr)
}

// exportTopics are the topics export covers: the stream's, or those of
// --topic (each one the stream reads), sorted.
func exportTopics(info offsets.StreamInfo, only []string) ([]string, error) {
	topics := info.AllTopics()
	if len(only) == 0 {
		return topics, nil
	}
	for _, t := range only {
		if !slices.Contains(topics, t) {
			return nil, usagef("topic %s is not read by stream %s (%s)", offsets.QuoteName(t), offsets.QuoteName(info.Name), offsetsQuoteJoin(topics, "it has no topics yet"))
		}
	}
	topics = dedupe(only)
	slices.Sort(topics)
	return topics, nil
}

// exportKcat prints one kcat command per partition of next.
func exportKcat(g *globalOptions, info offsets.StreamInfo, next map[offsets.Partition]int64, out, stderr io.Writer) error {
	// Only the broker list is needed: connection() resolves it from
	// flags, env and config without asking for a SASL password.
	conn, err := g.connection()
	if err != nil && !errors.Is(err, errNoBrokers) {
		return err
	}
	brokers := conn.Brokers
	if len(brokers) == 0 {
		brokers = info.Brokers
	}
	if len(brokers) == 0 {
		return usagef("no brokers known for stream %s: pass -b host:port", offsets.QuoteName(info.Name))
	}
	if len(next) == 0 {
		offsetsNote(stderr, "stream %s has no stored offsets: nothing to print", offsets.QuoteName(info.Name))
	}
	_, err = fmt.Fprint(out, offsetsLines(offsets.KcatCommands(brokers, next)))
	return err
}

// exportSpark prints Spark's startingOffsets (endingOffsets when ending)
// for next; with the cluster, every partition of topics is listed.
func exportSpark(g *globalOptions, info offsets.StreamInfo, topics []string, next map[offsets.Partition]int64, ending bool, out, stderr io.Writer) error {
	client, _, err := offsetsCluster(g)
	if err != nil {
		return err
	}
	var counts map[string]int32
	if client == nil {
		offsetsNote(stderr, "no -b/KBATCH_BROKERS: only the %d stored partitions are listed; Spark needs every partition of each topic, pass -b to add the missing ones", len(next))
	} else {
		defer client.Close()
		if counts, _, err = offsetsClusterPartitions(client, topics); err != nil {
			return err
		}
		for _, p := range offsets.SortedPartitions(next) {
			if p.Partition >= counts[p.Topic] {
				return usagef("stream %s has an offset for %s, but the topic has %s on this cluster (is -b the right cluster?)",
					offsets.QuoteName(info.Name), p, offsets.CountPartitions(int(counts[p.Topic])))
			}
		}
	}
	text := spark.StartingOffsetsJSON(next, counts)
	if ending {
		text = spark.EndingOffsetsJSON(next, counts)
	}
	_, err = fmt.Fprintln(out, string(record.SafeJSON([]byte(text))))
	return err
}

func offsetsLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
