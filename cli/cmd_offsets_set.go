package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

type offsetsSetOptions struct {
	force  bool
	dryRun bool
}

func newOffsetsSetCommand(g *globalOptions) *cobra.Command {
	o := &offsetsSetOptions{}
	cmd := &cobra.Command{
		Use:   "set SPEC... [--name STREAM]",
		Short: "Move partitions of a stream to new next offsets",
		Long: `set stores new next offsets for partitions of a stream; the next watch of
that stream starts there (source "stored"). It is recorded as a "set" event.

SPEC is any offset SPEC: TOPIC:PARTITION=OFFSET, =earliest, =latest, =-N,
=@TIME, or TOPIC=... for every partition of the topic. Forms other than
TOPIC:PARTITION=OFFSET need the cluster (-b or KBATCH_BROKERS). With the
cluster, every partition must exist and an offset outside [log start, high
watermark] is refused unless --force; without it, TOPIC:PARTITION=OFFSET is
stored as given (a note says it was not checked).

--name defaults to the store's only stream. Partitions of a batch that is
planned but not acked cannot be set: the next watch would re-deliver that
batch and move them again.`,
		Example: `  kbatch offsets set events:0=1200 --name events
  kbatch offsets set events=earliest -b localhost:9092 --name events
  kbatch offsets set 'events:1=@2026-11-29T10:00:00Z' events:2=-500 -b localhost:9092`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runOffsetsSet(cmd, g, o, args) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "store offsets outside [log start, high watermark] as given")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would change; write nothing")
	return cmd
}

func runOffsetsSet(cmd *cobra.Command, g *globalOptions, o *offsetsSetOptions, args []string) error {
	if len(args) == 0 {
		return usagef("offsets set needs at least one SPEC, e.g. events:0=1200 or events=earliest")
	}
	now := time.Now()
	specs := make([]offsets.Spec, 0, len(args))
	for _, a := range args {
		sp, err := offsets.ParseSpec(a, now)
		if err != nil {
			return err
		}
		specs = append(specs, sp)
	}
	if err := offsets.CheckDistinct(specs); err != nil {
		return err
	}
	st, err := offsetsOpenStore(g, o.dryRun, false, "change")
	if err != nil {
		return err
	}
	defer st.Close()
	info, err := offsetsPickStream(st, g.name)
	if err != nil {
		return err
	}
	specTopics, err := setSpecTopics(info, specs)
	if err != nil {
		return err
	}
	client, _, err := offsetsCluster(g)
	if err != nil {
		return err
	}
	var next map[offsets.Partition]int64
	if client == nil {
		if next, err = setOffline(specs); err != nil {
			return err
		}
		offsetsNote(cmd.ErrOrStderr(), "no -b/KBATCH_BROKERS: the offsets were not checked against the cluster (partition exists, within log start and high watermark)")
	} else {
		defer client.Close()
		if next, err = setOnline(client, specs, specTopics, o.force); err != nil {
			return err
		}
	}
	event := offsets.ChangeEvent(now, offsets.CodeSet, info.Next, next, "offsets set "+strings.Join(args, " "))
	return offsetsApply(cmd.OutOrStdout(), st, info, next, event, o.dryRun, false)
}

// setSpecTopics checks that every spec names a topic the stream reads and
// returns those topics, each once, in spec order.
func setSpecTopics(info offsets.StreamInfo, specs []offsets.Spec) ([]string, error) {
	topics := info.AllTopics()
	var specTopics []string
	for _, sp := range specs {
		if !slices.Contains(topics, sp.Topic) {
			return nil, usagef("offset spec %q: topic %s is not read by stream %s (%s)", sp.Text, sp.Topic,
				offsets.QuoteName(info.Name), offsetsQuoteJoin(topics, "it has no topics yet"))
		}
		if !slices.Contains(specTopics, sp.Topic) {
			specTopics = append(specTopics, sp.Topic)
		}
	}
	return specTopics, nil
}

// setOffline is what specs set without the cluster: only
// TOPIC:PARTITION=OFFSET specs can be resolved, as given.
func setOffline(specs []offsets.Spec) (map[offsets.Partition]int64, error) {
	if i := slices.IndexFunc(specs, offsets.Spec.NeedsCluster); i >= 0 {
		return nil, usagef("offset spec %q needs the cluster to resolve (only TOPIC:PARTITION=OFFSET works without one): pass -b host:port or set KBATCH_BROKERS", specs[i].Text)
	}
	next := map[offsets.Partition]int64{}
	for _, sp := range specs {
		next[offsets.Partition{Topic: sp.Topic, Partition: sp.Partition}] = sp.Offset
	}
	return next, nil
}

// setOnline resolves specs against the cluster (partitions, bounds,
// timestamp lookups) and refuses offsets outside the bounds unless force.
func setOnline(client *kafka.Client, specs []offsets.Spec, specTopics []string, force bool) (map[offsets.Partition]int64, error) {
	_, bounds, err := offsetsClusterPartitions(client, specTopics)
	if err != nil {
		return nil, err
	}
	var timeOffsets map[offsets.Partition]int64
	if lookups := offsets.TimeLookups(bounds, specs); len(lookups) > 0 {
		if timeOffsets, err = kafka.ListOffsetsForTimes(client, lookups); err != nil {
			return nil, fmt.Errorf("looking up offsets by time: %w", err)
		}
	}
	next, err := offsets.ResolveTargets(bounds, specs, timeOffsets)
	if err != nil {
		return nil, err
	}
	if err := offsetsCheckBounds(next, bounds, force); err != nil {
		return nil, err
	}
	return next, nil
}

// offsetsCheckBounds refuses next offsets outside [log start, high
// watermark] unless force: watch would report them as data loss (and read
// from the log start) or out of range (and reset them), which is seldom
// what the user meant.
func offsetsCheckBounds(next map[offsets.Partition]int64, bounds map[offsets.Partition]offsets.Bounds, force bool) error {
	if force {
		return nil
	}
	for _, p := range offsets.SortedPartitions(next) {
		off, b := next[p], bounds[p]
		var where, then string
		switch b.Jump(off) {
		case offsets.CodeDataLoss:
			where = fmt.Sprintf("below the log start %d (offsets before it were deleted)", b.LogStart)
			then = "watch then reports data loss and reads on at the log start"
		case offsets.CodeOutOfRange:
			where = fmt.Sprintf("above the high watermark %d", b.HighWatermark)
			then = "watch then reports it and continues per --reset"
		default:
			continue
		}
		return usagef("%s: offset %d is %s; valid next offsets are %d..%d. Pass --force to store it anyway (%s)",
			p, off, where, b.LogStart, b.HighWatermark, then)
	}
	return nil
}

// offsetsApply checks the pending-batch rule, writes next and the event in
// one transaction (unless dryRun), and prints what changed. create makes
// the stream first (import into a new stream). st may be nil for a dry run
// against a store that does not exist yet.
func offsetsApply(out io.Writer, st *offsets.Store, info offsets.StreamInfo, next map[offsets.Partition]int64, e offsets.Event, dryRun, create bool) error {
	if st == nil && !dryRun {
		return fmt.Errorf("internal error: no store to write to")
	}
	if !create && st != nil {
		if err := offsetsCheckPending(st, info.Name, next); err != nil {
			return err
		}
	}
	verb := "set"
	if e.Code == offsets.CodeImport {
		verb = "imported"
	}
	head := fmt.Sprintf("stream %s: %s %s (recorded as a %q event)", offsets.SafeName(info.Name), verb, offsets.CountPartitions(len(next)), e.Code)
	if dryRun {
		head = fmt.Sprintf("stream %s: would have %s %s (--dry-run: nothing written)", offsets.SafeName(info.Name), verb, offsets.CountPartitions(len(next)))
	} else {
		if create {
			if err := st.EnsureStream(info.Name, info.Brokers, info.Topics); err != nil {
				return err
			}
			head += "; created the stream"
		}
		if err := st.SetNext(info.Name, next, e); err != nil {
			return err
		}
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, "  PARTITION\tBEFORE\tAFTER")
	for _, p := range offsets.SortedPartitions(next) {
		old := "-"
		if off, ok := info.Next[p]; ok {
			old = fmt.Sprint(off)
		}
		fmt.Fprintf(w, "  %s\t%s\t%d\n", offsets.SafeName(p.String()), old, next[p])
	}
	return w.Flush()
}
