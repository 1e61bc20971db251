package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/filter"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/tui"
)

// watchOptions are the flags of watch (and of the root command).
type watchOptions struct {
	// tempStore is set by the demo when its store is a temporary file,
	// removed at the end: quitting says so instead of naming the file.
	tempStore       bool
	topics          []string
	offsets         []string
	reset           string
	interval        time.Duration
	maxPerPartition int
	samples         int
	tailRecords     int
	ack             string
	sink            string
	format          string
	noStore         bool
	strict          bool
	failOnDataLoss  bool
	fromSpark       string
	noTUI           bool
	batches         int
	untilEnd        bool
	isolation       string
	log             string
	debugAddr       string
	commitGroup     givenString
	where           string
	dec             decodeFlags

	// startChoice is the picker's answer to where the stream starts,
	// remembered in the store once the stream has started.
	startChoice string
	// screen is the screen's decoder, when a registry or a local schema
	// is configured (open sets it).
	screen screenDecoder
}

func newWatchCommand(g *globalOptions) *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Run the direct stream and show it batch by batch (the default command)",
		Long: `watch reads the given topics with a direct consumer (no consumer group),
cuts the stream into batches every --interval (or sooner in a catch-up, once
every partition with a backlog holds --max-per-partition records or all the
broker had for it), and shows each batch's ranges [from, until).
A batch is written ahead to the store as planned, then processed (screen,
--sink), then acked; only acked batches move the stored next offsets.

With --no-tui it writes one JSON object per line on stdout: start, batch,
event and end (docs/json-output.md). --sink - writes the records to stdout
instead, and the event lines then go to stderr; --format kcat writes the
records in kcat -J's shape. --where EXPR writes to the --sink only the
records for which the CEL expression is true (docs/filters.md); batches keep
their whole ranges and are acked as read, and each batch line says how many
records "matched".

--commit-group GROUP also commits the acked next offsets to a consumer group
after each batch (docs/offsets-and-batches.md), so a consumer of that group
starts where the stream stands; the store stays the source of truth.`,
		Example: `  kbatch -b localhost:9092 -t events
  kbatch watch -b localhost:9092 -t events -o events:0=50 -o events:1=-100
  kbatch watch -t events --no-tui --until-end --sink records.jsonl
  kbatch watch -t events --no-tui --until-end --sink - --format kcat | jq -r .payload
  kbatch watch -t payments --no-tui --sink refunds.jsonl --where 'value.type == "refund"'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWatch(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addWatchFlags(cmd, o)
	return cmd
}

// addWatchFlags declares watch's flags on cmd (watch, demo, the root).
func addWatchFlags(cmd *cobra.Command, o *watchOptions) {
	f := cmd.Flags()
	f.StringArrayVarP(&o.topics, "topic", "t", nil, "topic to read (repeatable)")
	f.StringArrayVarP(&o.offsets, "offset", "o", nil, "start offset SPEC, e.g. events:0=50, events=earliest, events:1=-100, events:0=@-15m (repeatable)")
	f.StringVar(&o.reset, "reset", "latest", "where partitions with no explicit or stored offset, or one above the high watermark, start: earliest|latest (data loss always reads on at the log start)")
	f.DurationVar(&o.interval, "interval", time.Second, "batch interval")
	f.IntVar(&o.maxPerPartition, "max-per-partition", 10000, "records per partition per batch")
	f.IntVar(&o.samples, "samples", 5, "sample records kept per partition per batch for the records pane (TUI; headless shows none)")
	f.IntVar(&o.tailRecords, "tail-records", tui.DefaultTailRecords, fmt.Sprintf("records the TUI's tail view (t) keeps, at most 32 MiB of them (0: no tail view; up to %d)", tui.MaxTailRecords))
	f.StringVar(&o.ack, "ack", "auto", "auto: ack after processing; manual: wait for a key press (TUI)")
	f.StringVar(&o.sink, "sink", "", "append every batch's records as JSON lines to FILE, fsynced before the ack (- for stdout, with --no-tui)")
	f.StringVar(&o.format, "format", "json", "shape of the --sink records: json (kbatch's) or kcat (kcat -J's)")
	f.BoolVar(&o.noStore, "no-store", false, "read-only: write nothing to the offset store")
	f.BoolVar(&o.strict, "strict-offsets", false, "every partition must have an explicit --offset")
	f.BoolVar(&o.failOnDataLoss, "fail-on-data-loss", false, "exit 1 on data loss or an out-of-range offset, after reporting it")
	f.StringVar(&o.fromSpark, "from-spark", "", "start from a Spark checkpoint's last committed offsets")
	f.BoolVar(&o.noTUI, "no-tui", false, "headless: JSON lines on stdout")
	f.IntVar(&o.batches, "batches", 0, "stop after N batches (headless)")
	f.BoolVar(&o.untilEnd, "until-end", false, "stop when every partition reached the high watermark it had at start")
	f.StringVar(&o.isolation, "isolation", "committed", "committed: skip aborted transactions, read up to the last stable offset; uncommitted: read everything, records of aborted transactions marked")
	addDecodeFlags(f, &o.dec)
	addWhereFlag(f, &o.where)
	f.StringVar(&o.log, "log", "", "append a debug log for a bug report to FILE (connections, metadata, fetches, batches, store writes; never secrets nor record bytes)")
	f.Var(&o.commitGroup, "commit-group", "after each acked batch, commit the acked next offsets to consumer GROUP too (never joined; stops if the group has live members or a permission is missing)")
	f.StringVar(&o.debugAddr, "debug-addr", "", "serve Go's pprof profiles (goroutines, heap, CPU) on this loopback HOST:PORT, e.g. 127.0.0.1:6060")
}

// givenString is a string flag that knows whether it was given, so an
// empty value given on purpose (--commit-group "") is told from none.
type givenString struct {
	value string
	given bool
}

func (s *givenString) String() string { return s.value }
func (s *givenString) Type() string   { return "string" }
func (s *givenString) Set(v string) error {
	s.value, s.given = v, true
	return nil
}

// streamName is --name, else the sorted topics joined with "+".
func streamName(g *globalOptions, topics []string) string {
	if g.name != "" {
		return g.name
	}
	t := append([]string(nil), topics...)
	sort.Strings(t)
	return strings.Join(t, "+")
}

// watchConfig turns flags into a stream configuration (without client,
// store and processor).
func (o *watchOptions) streamConfig(g *globalOptions) (consumer.Config, error) {
	cfg := consumer.Config{
		Topics: dedupe(o.topics), Interval: o.interval, MaxPerPartition: o.maxPerPartition, Samples: o.samples,
		Strict: o.strict, FailOnDataLoss: o.failOnDataLoss, UntilEnd: o.untilEnd, MaxBatches: o.batches,
	}
	if o.commitGroup.given && strings.TrimSpace(o.commitGroup.value) == "" {
		return cfg, usagef("--commit-group needs a consumer group name")
	}
	if o.interval <= 0 {
		return cfg, usagef("invalid --interval %s: must be positive", o.interval)
	}
	if o.maxPerPartition <= 0 {
		return cfg, usagef("invalid --max-per-partition %d: must be positive", o.maxPerPartition)
	}
	if err := checkSamples(o.samples); err != nil {
		return cfg, err
	}
	if o.noTUI {
		// Samples are for the records pane; no JSON line carries them.
		// Headless, each would be a copy of records nobody reads (a
		// copy of 1 MiB for each sample of a topic of 1 MiB values).
		cfg.Samples = 0
	}
	if o.tailRecords < 0 || o.tailRecords > tui.MaxTailRecords {
		return cfg, usagef("invalid --tail-records %d: must be 0 to %d", o.tailRecords, tui.MaxTailRecords)
	}
	if o.batches < 0 {
		return cfg, usagef("invalid --batches %d: must be 0 or more", o.batches)
	}
	if o.isolation != "committed" && o.isolation != "uncommitted" {
		return cfg, usagef("invalid --isolation %q: want committed or uncommitted", o.isolation)
	}
	reset, err := offsets.ParseReset(o.reset)
	if err != nil {
		return cfg, usageError{err}
	}
	cfg.Reset = reset
	switch o.ack {
	case "auto":
	case "manual":
		cfg.ManualAck = true
	default:
		return cfg, usagef("invalid --ack %q: want auto or manual", o.ack)
	}
	now := time.Now()
	for _, s := range o.offsets {
		sp, err := offsets.ParseSpec(s, now)
		if err != nil {
			return cfg, err
		}
		cfg.Explicit = append(cfg.Explicit, sp)
	}
	if err := offsets.CheckDistinct(cfg.Explicit); err != nil {
		return cfg, err
	}
	if len(cfg.Topics) == 0 {
		return cfg, errNoTopic
	}
	cfg.Name, cfg.NameExplicit = streamName(g, cfg.Topics), g.name != ""
	return cfg, nil
}

// errNoTopic is streamConfig's error when no topic was given; it comes
// after every other flag check, so the TUI can open its topic picker
// knowing the rest is valid.
var errNoTopic = usagef("no topic: pass -t TOPIC (repeatable)")

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" && !seen[part] {
				seen[part] = true
				out = append(out, part)
			}
		}
	}
	return out
}

// watchPlan is what watch's flags decide before anything is opened.
type watchPlan struct {
	cfg consumer.Config
	enc record.Appender
	// pick: no -t was given and the TUI's topic picker asks for the topics.
	pick bool
	// where keeps the --sink's matching records; nil without --where.
	where *filter.Program
}

// plan checks watch's flags, alone and against each other, and builds the
// stream's configuration; it opens nothing. With neither topics nor
// brokers, the brokers are what to ask for first: a first run learns how
// to reach a cluster (or that the demo exists) before it hears about
// topics.
func (o *watchOptions) plan(g *globalOptions) (watchPlan, error) {
	cfg, err := o.streamConfig(g)
	if errors.Is(err, errNoTopic) {
		if _, cerr := g.connection(); errors.Is(cerr, errNoBrokers) {
			return watchPlan{}, cerr
		}
	}
	pick := errors.Is(err, errNoTopic) && !o.noTUI // the TUI asks for the topics
	if err != nil && !pick {
		return watchPlan{}, err
	}
	if cfg.ManualAck && o.noTUI {
		return watchPlan{}, usagef("--ack manual needs the TUI (a key press acks a batch); drop --no-tui")
	}
	if !o.noTUI && (o.batches > 0 || o.untilEnd) {
		return watchPlan{}, usagef("--batches and --until-end are headless stop conditions; add --no-tui")
	}
	enc, err := recordFormat(o.format)
	if err != nil {
		return watchPlan{}, err
	}
	if o.sink == "-" && !o.noTUI {
		return watchPlan{}, usagef("--sink - writes records to stdout, where the screen is drawn; add --no-tui (event lines then go to stderr) or name a file")
	}
	if o.dec.decode && o.sink == "" {
		return watchPlan{}, usagef("--decode adds the decoded records to the --sink lines: add --sink FILE")
	}
	var where *filter.Program
	if o.where != "" {
		if o.sink == "" {
			return watchPlan{}, usagef("--where chooses the records written to the --sink: add --sink FILE (on the screen, / takes an expression after ?)")
		}
		if where, err = compileWhere(o.where); err != nil {
			return watchPlan{}, err
		}
		o.dec.forWhere = true
	}
	if err := o.checkFiles(g); err != nil {
		return watchPlan{}, err
	}
	return watchPlan{cfg: cfg, enc: enc, pick: pick, where: where}, nil
}

// cleanups are Close calls run in reverse order, as defers would run: a
// function that opens several things hands them to its caller's one defer.
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }

func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

// runWatch runs the stream; when the user switches to another cluster
// profile on the screen (c), the stream has closed as on quit and it runs
// again on that profile, from the topic picker.
func runWatch(ctx context.Context, g *globalOptions, o *watchOptions, stdout, stderr io.Writer) error {
	for {
		err := runWatchOnce(ctx, g, o, stdout, stderr)
		var sw *tui.SwitchCluster
		if !errors.As(err, &sw) {
			return err
		}
		g.switchProfile(sw.Profile)
		o.topics, o.offsets, o.fromSpark = nil, nil, ""
	}
}

func runWatchOnce(ctx context.Context, g *globalOptions, o *watchOptions, stdout, stderr io.Writer) (rerr error) {
	p, err := o.plan(g)
	if err != nil {
		return err
	}
	cc, err := g.clientConfig()
	if err != nil {
		return err
	}
	if !o.noTUI {
		// After the brokers are known (a first run without them is told
		// how to give them), before reaching them.
		if err := checkTerminal(g); err != nil {
			return err
		}
	}
	cc.ReadCommitted = o.isolation == "committed"
	var done cleanups
	defer done.run()
	if o.log != "" {
		log, closeLog, err := openDebugLog(o.log)
		if err != nil {
			return err
		}
		done.add(closeLog)
		done.add(func() {
			if rerr != nil {
				log.Info("end", "error", rerr.Error())
			} else {
				log.Info("end")
			}
		})
		p.cfg.Log = log
	}
	if o.debugAddr != "" {
		stopDebug, err := startDebugListener(o.debugAddr)
		if err != nil {
			return err
		}
		done.add(stopDebug)
	}
	cfg, events, err := o.open(ctx, g, p, cc, stdout, stderr, &done)
	if err != nil || cfg == nil {
		return err // a nil config: the topic picker was quit, which is not an error
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if !o.noTUI && o.tailRecords > 0 {
		cfg.Tap = tui.NewTail(o.tailRecords) // copies records only while the tail view is open
	}
	if !o.noTUI {
		cfg.SampleGate = tui.NewSampleGate() // no samples for batches cut while the screen is behind
	}
	var resume *tui.Resume
	if !o.noTUI {
		resume = resumeInfo(cfg.Store, cfg.Name) // before the start writes the stream
	}
	stream, _, err := consumer.Start(ctx, *cfg)
	var lossErr *consumer.DataLossError
	if errors.As(err, &lossErr) && o.noTUI {
		// --fail-on-data-loss at start: the event line first, as while
		// running, then the error.
		if line, jerr := consumer.AppendEventJSON(nil, &consumer.Notice{Event: lossErr.Event}); jerr == nil {
			_, _ = stdout.Write(line)
		}
	}
	if err != nil {
		return err
	}
	rememberStartChoice(cfg.Store, cfg.Name, o.startChoice)
	if !o.noTUI {
		err := runTUI(ctx, stream, *cfg, g, resume, cc, o.screen)
		if o.tempStore {
			fmt.Fprintln(stderr, "kbatch: the demo's positions were kept in a temporary store, now removed (demo --store FILE keeps them)")
			return err
		}
		path, _ := g.storePath()
		printStored(stderr, *cfg, path)
		return err
	}
	return writeJSONLines(stream, events)
}

// open opens what the stream of plan p reads from and writes to, in this
// order: the cluster when the topic picker must ask for topics first, the
// --from-spark offsets, the --sink, the store, the cluster. Each Close goes
// on done. It returns the complete configuration and where event lines go
// (stdout, or stderr when --sink - takes stdout); a nil configuration when
// the picker was quit.
func (o *watchOptions) open(ctx context.Context, g *globalOptions, p watchPlan, cc kafka.ClientConfig, stdout, stderr io.Writer, done *cleanups) (*consumer.Config, io.Writer, error) {
	cfg := p.cfg
	var client *kafka.Client
	var err error
	if p.pick {
		if client, err = kafka.Dial(cc); err != nil {
			return nil, nil, err
		}
		done.add(func() { _ = client.Close() })
		// The store first: the start question says what it holds.
		if err := o.openStore(g, &cfg, done); err != nil {
			return nil, nil, err
		}
		popts := tui.PickerOptions{Cluster: g.conn.Cluster, Brokers: cc.Brokers}
		var st startStore
		if s, ok := cfg.Store.(startStore); ok {
			st = s
		}
		if len(cfg.Explicit) == 0 { // -o says where already
			path, _ := g.storePath()
			popts.Ask = o.startAsker(g, st, path)
		}
		topics, choice, err := tui.PickStream(ctx, topicLister{client: client}, popts)
		if err != nil || topics == nil {
			return nil, nil, err
		}
		o.topics, o.startChoice = topics, choice
		log, store := cfg.Log, cfg.Store
		if cfg, err = o.streamConfig(g); err != nil {
			return nil, nil, err
		}
		cfg.Log, cfg.Store = log, store
		stored := false
		if st != nil {
			info, ok, _ := st.Stream(cfg.Name)
			stored = ok && len(info.Next) > 0
		}
		if o.startChoice, err = applyStartChoice(&cfg, choice, stored, time.Now()); err != nil {
			return nil, nil, err
		}
	}
	if o.fromSpark != "" {
		if cfg.Imported, err = importSpark(o.fromSpark); err != nil {
			return nil, nil, err
		}
	}
	o.screen = screenDecoder{}   // a run after a profile switch builds its own
	var warnings *decodeWarnings // printed when the stream is over; the screen would be drawn over
	var notes *tui.SchemaNotes   // the screen's: it decodes whenever a schema source is configured
	if o.noTUI {
		warnings = &decodeWarnings{}
	} else {
		notes = tui.NewSchemaNotes()
	}
	dec, err := g.openDecoder(&o.dec, o.format, warnings, notes)
	if err != nil {
		return nil, nil, err
	}
	enc := p.enc
	if dec != nil {
		if warnings != nil {
			done.add(func() { warnings.flush(stderr) })
		}
		done.add(dec.Close)
		if o.dec.decode {
			enc = &decodingAppender{inner: enc, dec: dec}
		}
		if notes != nil {
			o.screen = screenDecoder{dec: dec, notes: notes}
		}
	}
	sink, events, err := o.openSink(enc, stdout, stderr)
	if err != nil {
		return nil, nil, err
	}
	if sink != nil && sink.Repair != "" {
		g.warn("--sink " + o.sink + ": " + sink.Repair)
	}
	if sink != nil {
		done.add(func() { _ = sink.Close() })
		cfg.Processor = sink
		if p.where != nil {
			w := filter.NewWhere(p.where, filter.Schemas(dec))
			cfg.Processor = &whereProcessor{inner: sink, where: w}
			done.add(func() { printWhere(stderr, w, dec != nil) })
		}
	}
	if err := o.openStore(g, &cfg, done); err != nil {
		return nil, nil, err
	}
	// Again now that both files exist: a link made before the store was,
	// or a name that differs only in case on a filesystem that ignores it.
	if err := o.checkFiles(g); err != nil {
		return nil, nil, err
	}
	if client == nil {
		if client, err = kafka.Dial(cc); err != nil {
			return nil, nil, err
		}
		done.add(func() { _ = client.Close() })
	}
	cfg.Client, cfg.Brokers = client, cc.Brokers
	if o.commitGroup.given {
		cfg.GroupCommit = kafka.NewGroupWriter(client, o.commitGroup.value)
	}
	logCluster(cfg.Log, cc, client, cfg.Topics)
	setLeaderLookup(p.enc, client)
	return &cfg, events, nil
}

// openStore opens the store into cfg unless --no-store or it is open.
func (o *watchOptions) openStore(g *globalOptions, cfg *consumer.Config, done *cleanups) error {
	if o.noStore || cfg.Store != nil {
		return nil
	}
	st, err := g.openStore(offsets.OpenOptions{})
	if err != nil {
		return err
	}
	done.add(func() { _ = st.Close() })
	cfg.Store = st
	return nil
}

// openSink opens --sink with the record encoder enc: the file, or for "-"
// stdout, and then event lines go to stderr, so `kbatch --no-tui --sink - |
// jq` sees nothing but records. Without --sink it returns no sink, and
// stdout for the event lines.
func (o *watchOptions) openSink(enc record.Appender, stdout, stderr io.Writer) (*consumer.FileSink, io.Writer, error) {
	switch o.sink {
	case "":
		return nil, stdout, nil
	case "-":
		sink := consumer.NewStdoutSink(stdout)
		sink.SetEncoder(enc)
		return sink, stderr, nil
	}
	sink, err := consumer.OpenFileSink(o.sink)
	if err != nil {
		return nil, nil, err
	}
	sink.SetEncoder(enc)
	return sink, stdout, nil
}

// setLeaderLookup lets a kcat encoder name each partition's leader, as
// kcat's "broker" does; other encoders need nothing.
func setLeaderLookup(enc record.Appender, client *kafka.Client) {
	if k, ok := enc.(*record.KcatEncoder); ok {
		k.Leader = func(topic string, partition int32) int32 {
			if b, err := client.Leader(offsets.Partition{Topic: topic, Partition: partition}); err == nil {
				return b.ID
			}
			return -1
		}
	}
}

// sinkFormats are the values of --format (watch's --sink, replay).
var sinkFormats = []string{"json", "kcat"}

// recordFormat is the record encoder of --format.
func recordFormat(format string) (record.Appender, error) {
	switch format {
	case "json":
		return &record.JSONEncoder{}, nil
	case "kcat":
		return &record.KcatEncoder{}, nil
	}
	return nil, usagef("invalid --format %q: want json (kbatch's record lines) or kcat (kcat -J's shape)", format)
}

// writeJSONLines prints the stream's events until it ends; the stream's
// own error, if any, is returned after the end line.
func writeJSONLines(stream *consumer.Stream, stdout io.Writer) error {
	w := bufio.NewWriterSize(stdout, 64<<10)
	var buf []byte
	var end error
	for ev := range stream.Events() {
		var err error
		if buf, err = consumer.AppendEventJSON(buf[:0], ev); err != nil {
			return err
		}
		if _, err := w.Write(buf); err != nil {
			_ = stream.Close()
			return fmt.Errorf("writing to stdout: %w", err)
		}
		if _, ok := ev.(*consumer.Progress); !ok {
			if err := w.Flush(); err != nil {
				_ = stream.Close()
				return fmt.Errorf("writing to stdout: %w", err)
			}
		}
		if e, ok := ev.(*consumer.Ended); ok {
			end = e.Err
		}
	}
	if err := stream.Close(); err != nil && end == nil {
		end = err
	}
	return end
}

// importSpark reads the offsets a Spark query last committed (--from-spark).
func importSpark(dir string) (map[offsets.Partition]int64, error) {
	cp, done, err := openSparkCheckpoint(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	defer done()
	pos, err := cp.CommittedOffsets(-1)
	if err != nil {
		return nil, err
	}
	return pos.Offsets, nil
}
