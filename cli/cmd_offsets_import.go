package cli

import (
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/exchange"
)

type offsetsImportOptions struct {
	fromJSON  string
	fromGroup string
	fromSpark string
	source    int
	topics    []string
	dryRun    bool
}

func newOffsetsImportCommand(g *globalOptions) *cobra.Command {
	o := &offsetsImportOptions{}
	cmd := &cobra.Command{
		Use:   "import (--from-json FILE | --from-group GROUP | --from-spark DIR) [--name STREAM]",
		Short: "Take a stream's next offsets from a JSON file, a consumer group or a Spark checkpoint",
		Long: `import stores next offsets for a stream, recorded as an "import" event; the
next watch of the stream starts there (source "stored"). Partitions the
source has no offset for keep theirs.

  --from-json FILE   kbatch's export document (offsets export --format json),
                     or Spark offset JSON like {"events":{"0":80}}; "-" is stdin.
                     In Spark JSON, -2 (earliest) and -1 (latest) are not
                     positions: those partitions are left out, with a note.
  --from-group GROUP the consumer group's committed offsets (OffsetFetch; needs
                     -b). The group is only read: never joined, never changed.
  --from-spark DIR   the offsets a Spark Structured Streaming query last
                     committed (offsets/C of the newest commits/C, or the
                     initial offsets before any commit); --source N picks the
                     source when the query has several Kafka sources.

The stream is --name, else the "stream" of a kbatch JSON document, else the
name watch derives from the imported topics (sorted, joined with "+"); it is
created if the store has none by that name. Into an existing stream only its
topics are imported unless --topic says otherwise. With the cluster (-b),
every partition must exist, and offsets outside [log start, high watermark]
are noted (watch reports them as data loss or out of range). Partitions of a
batch that is planned but not acked cannot be imported into.`,
		Example: `  kbatch offsets import --name events --from-json events.json
  kbatch offsets import --name events --from-group billing -b localhost:9092
  kbatch offsets import --name events --from-spark /data/checkpoints/query1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runOffsetsImport(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.fromJSON, "from-json", "", "read offsets from a JSON FILE (- for stdin)")
	f.StringVar(&o.fromGroup, "from-group", "", "read the committed offsets of consumer GROUP (needs -b)")
	f.StringVar(&o.fromSpark, "from-spark", "", "read the last committed offsets of a Spark checkpoint DIR")
	f.IntVar(&o.source, "source", -1, "with --from-spark: the source index of the Kafka source (default: the only one)")
	f.StringArrayVarP(&o.topics, "topic", "t", nil, "import only these topics (repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would change; write nothing")
	return cmd
}

// offsetsImported is what an import source yielded: the offsets, and a
// kbatch document's stream name and topics.
type offsetsImported struct {
	exchange.Document
	from string // for messages: `consumer group "billing"`
}

func runOffsetsImport(cmd *cobra.Command, g *globalOptions, o *offsetsImportOptions) error {
	if err := o.check(cmd.Flags().Changed("source")); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	client, cc, err := offsetsCluster(g)
	if err != nil {
		return err
	}
	if client != nil {
		defer client.Close()
	}
	imp, err := offsetsReadImport(cmd, o, client)
	if err != nil {
		return err
	}
	if len(o.topics) > 0 {
		imp.keepTopics(stderr, dedupe(o.topics))
	}
	if len(imp.Next) == 0 {
		return usagef("nothing to import: %s has no offsets for the chosen topics", imp.from)
	}
	st, err := offsetsOpenImportStore(g, o.dryRun)
	if err != nil {
		return err
	}
	if st == nil {
		offsetsNote(stderr, "the store does not exist yet; the import would create it")
	} else {
		defer st.Close()
	}
	info, exists, err := offsetsImportStream(stderr, st, g.name, &imp, len(o.topics) > 0)
	if err != nil {
		return err
	}
	if !exists {
		info.Brokers = cc.Brokers
	}
	if client != nil {
		if err := offsetsCheckImported(stderr, client, imp.Next); err != nil {
			return err
		}
	}
	event := offsets.ChangeEvent(time.Now(), offsets.CodeImport, info.Next, imp.Next, "imported from "+imp.from)
	return offsetsApply(cmd.OutOrStdout(), st, info, imp.Next, event, o.dryRun, !exists)
}

// check checks import's flags against each other; sourceChanged says
// whether --source was given.
func (o *offsetsImportOptions) check(sourceChanged bool) error {
	n := 0
	for _, s := range []string{o.fromJSON, o.fromGroup, o.fromSpark} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return usagef("offsets import needs exactly one of --from-json FILE, --from-group GROUP, --from-spark DIR")
	}
	if sourceChanged && o.fromSpark == "" {
		return usagef("--source applies to --from-spark")
	}
	if o.source < -1 {
		return usagef("invalid --source %d: want a source index, 0 or more", o.source)
	}
	return nil
}

// keepTopics keeps the imported offsets of the --topic topics, with a note
// on stderr for the topics it dropped and for each kept topic the source
// had no offsets for.
func (imp *offsetsImported) keepTopics(stderr io.Writer, keep []string) {
	var dropped []string
	imp.Next, dropped = offsets.FilterTopics(imp.Next, keep)
	if len(dropped) > 0 {
		offsetsNote(stderr, "skipped topics %s (not in --topic)", strings.Join(dropped, ", "))
	}
	for _, t := range keep {
		if !slices.Contains(offsets.TopicsOf(imp.Next), t) {
			offsetsNote(stderr, "%s has no offsets for topic %s", imp.from, offsets.QuoteName(t))
		}
	}
}

// offsetsReadImport reads the offsets of the one source the flags name.
// Topic names are checked, as they come from files and other tools.
func offsetsReadImport(cmd *cobra.Command, o *offsetsImportOptions, client *kafka.Client) (offsetsImported, error) {
	var imp offsetsImported
	var err error
	switch {
	case o.fromJSON != "":
		imp, err = offsetsReadJSONFile(cmd.InOrStdin(), cmd.ErrOrStderr(), o.fromJSON)
	case o.fromSpark != "":
		imp, err = offsetsReadSpark(cmd.ErrOrStderr(), o.fromSpark, o.source)
	case client == nil:
		return imp, usagef("--from-group needs the cluster: pass -b host:port or set KBATCH_BROKERS")
	default:
		imp = offsetsImported{from: "consumer group " + offsets.QuoteName(o.fromGroup)}
		imp.Next, err = kafka.GroupOffsets(client, o.fromGroup)
		if err == nil && len(imp.Next) == 0 {
			err = usagef("consumer group %s has no committed offsets on this cluster (is the name right?)", offsets.QuoteName(o.fromGroup))
		}
	}
	if err != nil {
		return imp, err
	}
	for p := range imp.Next {
		if err := offsets.CheckTopic(p.Topic); err != nil {
			return imp, usagef("%s names an invalid topic: %v", imp.from, err)
		}
	}
	for _, t := range imp.Topics {
		if err := offsets.CheckTopic(t); err != nil {
			return imp, usagef("%s lists an invalid topic: %v", imp.from, err)
		}
	}
	return imp, nil
}

// offsetsImportStream finds the stream to import into: name, else the
// document's stream, else the name watch derives from the topics. An
// existing stream takes only offsets of its topics unless topicsGiven
// (imp.Next is filtered); a new one is described for creation.
func offsetsImportStream(stderr io.Writer, st *offsets.Store, name string, imp *offsetsImported, topicsGiven bool) (info offsets.StreamInfo, exists bool, err error) {
	if name == "" {
		name = imp.Stream
	}
	if name == "" {
		name = strings.Join(offsets.TopicsOf(imp.Next), "+")
	}
	if st != nil {
		if info, exists, err = st.Stream(name); err != nil {
			return info, false, err
		}
	}
	if !exists {
		topics := imp.Topics
		if len(topics) == 0 {
			topics = offsets.TopicsOf(imp.Next)
		}
		return offsets.StreamInfo{Name: name, Topics: topics, Next: map[offsets.Partition]int64{}}, false, nil
	}
	topics := info.AllTopics()
	if topicsGiven || len(topics) == 0 {
		return info, true, nil
	}
	var dropped []string
	imp.Next, dropped = offsets.FilterTopics(imp.Next, topics)
	if len(dropped) > 0 {
		offsetsNote(stderr, "skipped topics %s: stream %s reads %s (pass --topic to import them anyway)",
			strings.Join(dropped, ", "), offsets.QuoteName(name), offsetsQuoteJoin(topics, ""))
	}
	if len(imp.Next) == 0 {
		return info, true, usagef("nothing to import: %s has no offsets for the topics of stream %s (%s)",
			imp.from, offsets.QuoteName(name), offsetsQuoteJoin(topics, ""))
	}
	return info, true, nil
}

// offsetsOpenImportStore opens the store read-write, or for a dry run
// read-only; a dry run on a store that does not exist yet gets nil.
func offsetsOpenImportStore(g *globalOptions, dryRun bool) (*offsets.Store, error) {
	if dryRun {
		loc, err := g.storeLocation()
		if err != nil {
			return nil, err
		}
		if !loc.exists() {
			return nil, nil
		}
	}
	return offsetsOpenStore(g, dryRun, !dryRun, "change")
}

// offsetsCheckImported checks imported offsets against the cluster: unknown
// topics and partitions are usage errors; offsets outside the bounds are
// noted, since they are real positions some consumer had, and watch reports
// them loudly (data-loss, offset-out-of-range) when it starts.
func offsetsCheckImported(stderr io.Writer, client *kafka.Client, next map[offsets.Partition]int64) error {
	return checkAgainstCluster(stderr, client, next, clusterCheckWords{
		below: "watch will report data-loss and read on at the log start",
		above: "watch will report offset-out-of-range and continue per --reset",
	})
}

// clusterCheckWords say, for checkAgainstCluster, what an unknown
// partition's error adds and what follows from an offset below the log
// start or above the high watermark.
type clusterCheckWords struct{ unknown, below, above string }

// checkAgainstCluster refuses partitions of next the cluster does not
// have (a usage error) and notes on stderr the offsets outside their
// partition's log, with what follows from them.
func checkAgainstCluster(stderr io.Writer, client *kafka.Client, next map[offsets.Partition]int64, w clusterCheckWords) error {
	_, bounds, err := offsetsClusterPartitions(client, offsets.TopicsOf(next))
	if err != nil {
		return err
	}
	for _, p := range offsets.SortedPartitions(next) {
		b, ok := bounds[p]
		if !ok {
			return usagef("unknown partition %s: the topic has no partition %d on this cluster%s", p, p.Partition, w.unknown)
		}
		switch off := next[p]; b.Jump(off) {
		case offsets.CodeDataLoss:
			offsetsNote(stderr, "%s: offset %d is below the log start %d; %s", p, off, b.LogStart, w.below)
		case offsets.CodeOutOfRange:
			offsetsNote(stderr, "%s: offset %d is above the high watermark %d; %s", p, off, b.HighWatermark, w.above)
		}
	}
	return nil
}
