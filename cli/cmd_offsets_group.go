package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// toGroupOptions are export's flags for writing a stream's offsets to a
// consumer group.
type toGroupOptions struct {
	group   string
	execute bool
	batch   uint64
	at      string
}

// The ends of a batch --to-group --batch N can put a group at.
const (
	toGroupAtFrom  = "from"  // the batch's start: the group reads it again
	toGroupAtUntil = "until" // the batch's end: the group goes on after it
)

// check checks the --to-group flags against each other and export's
// own; the booleans say whether --format, --ending, --at and --to-group
// were given.
func (o *toGroupOptions) check(formatChanged, endingChanged, atChanged, groupChanged bool) error {
	if groupChanged && strings.TrimSpace(o.group) == "" {
		return usagef("--to-group needs a consumer group name")
	}
	if o.group == "" {
		switch {
		case o.execute:
			return usagef("--execute applies to --to-group GROUP")
		case o.batch != 0:
			return usagef("--batch applies to --to-group GROUP")
		case atChanged:
			return usagef("--at applies to --to-group GROUP --batch N")
		}
		return nil
	}
	switch {
	case formatChanged || endingChanged:
		return usagef("--to-group writes offsets to a consumer group; --format and --ending print them: give one or the other")
	case o.at != toGroupAtFrom && o.at != toGroupAtUntil:
		return usagef("invalid --at %q: want from (the batch's start) or until (its end)", o.at)
	case atChanged && o.batch == 0:
		return usagef("--at applies to --batch N")
	}
	return nil
}

// runOffsetsToGroup prints the plan that puts group at the stream's next
// offsets (or at one end of batch --batch), and with --execute writes it.
// A group with live members is refused either way.
func runOffsetsToGroup(out, stderr io.Writer, g *globalOptions, o *offsetsExportOptions, st *offsets.Store, info offsets.StreamInfo, topics []string) error {
	tg := &o.toGroup
	next, what, err := toGroupTargets(st, info, tg)
	if err != nil {
		return err
	}
	next, _ = offsets.FilterTopics(next, topics)
	if len(next) == 0 {
		return usagef("%s has no offsets for the chosen topics: nothing to write to group %s", what, offsets.QuoteName(tg.group))
	}
	client, _, err := offsetsCluster(g)
	if err != nil {
		return err
	}
	if client == nil {
		return usagef("--to-group needs the cluster: pass -b host:port or set KBATCH_BROKERS")
	}
	defer client.Close()
	if err := toGroupCheckPartitions(stderr, client, next); err != nil {
		return err
	}
	state, err := kafka.DescribeGroup(client, tg.group)
	if err != nil {
		return err
	}
	if state.Active() {
		return &kafka.GroupActiveError{Group: tg.group, State: state.State, Members: state.Members}
	}
	committed, err := kafka.GroupOffsets(client, tg.group)
	if err != nil {
		return err
	}
	plan := offsets.GroupPlan(committed, next)
	if err := writeGroupPlan(out, tg.group, state, what, plan); err != nil {
		return err
	}
	changes := offsets.GroupPlanChanges(plan)
	switch {
	case changes == 0:
		_, err = fmt.Fprintf(out, "group %s is already at these offsets: nothing to write\n", offsets.SafeName(tg.group))
		return err
	case !tg.execute:
		_, err = fmt.Fprintf(out, "plan only, nothing written: add --execute to write %s\n", offsets.CountPartitions(changes))
		return err
	}
	if err := kafka.CommitGroupOffsets(client, tg.group, next); err != nil {
		return err
	}
	back, err := kafka.GroupOffsets(client, tg.group)
	if err != nil {
		return fmt.Errorf("written, but reading group %s back failed: %w", offsets.QuoteName(tg.group), err)
	}
	for _, p := range offsets.SortedPartitions(next) {
		if got, ok := back[p]; !ok || got != next[p] {
			return fmt.Errorf("group %s reads back %s at %d after writing %d: another client committed meanwhile?", offsets.QuoteName(tg.group), p, got, next[p])
		}
	}
	_, err = fmt.Fprintf(out, "wrote %s to group %s (read back: the same)\n", offsets.CountPartitions(len(next)), offsets.SafeName(tg.group))
	return err
}

// toGroupTargets are the offsets --to-group writes: the stream's next
// offsets, or with --batch N those that make a consumer read batch N
// again (--at from) or go on after it (--at until), offsets.BatchSpan.
// what describes them for messages.
func toGroupTargets(st *offsets.Store, info offsets.StreamInfo, tg *toGroupOptions) (map[offsets.Partition]int64, string, error) {
	what := "stream " + offsets.QuoteName(info.Name)
	if tg.batch == 0 {
		return info.Next, what + " (its next offsets)", nil
	}
	log, err := st.Batches(info.Name, 0)
	if err != nil {
		return nil, "", err
	}
	start, end, ok := offsets.BatchSpan(log, tg.batch, info.Next)
	if !ok {
		return nil, "", usagef("stream %s has no batch %d in its log%s", offsets.QuoteName(info.Name), tg.batch, offsetsBatchSpan(st, info.Name))
	}
	if tg.at == toGroupAtUntil {
		return end, fmt.Sprintf("%s batch %d until (the group goes on after it)", what, tg.batch), nil
	}
	return start, fmt.Sprintf("%s batch %d from (the group reads it again)", what, tg.batch), nil
}

// toGroupCheckPartitions refuses partitions the cluster does not have
// and notes offsets outside a partition's log: the group's consumers
// then start per their auto.offset.reset.
func toGroupCheckPartitions(stderr io.Writer, client *kafka.Client, next map[offsets.Partition]int64) error {
	follows := "the group's consumers will start per their auto.offset.reset"
	return checkAgainstCluster(stderr, client, next, clusterCheckWords{
		unknown: " (is -b the right cluster?)", below: follows, above: follows,
	})
}

// writeGroupPlan prints the plan: per partition the group's committed
// offset now, the new one and the difference.
func writeGroupPlan(out io.Writer, group string, state kafka.GroupState, what string, plan []offsets.GroupMove) error {
	s := state.State
	if s == "" {
		s = "new"
	}
	fmt.Fprintf(out, "consumer group %s (%s, no members) ← %s\n", offsets.SafeName(group), record.String(s), record.String(what))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  PARTITION\tCOMMITTED\tNEW\tDIFF")
	for _, m := range plan {
		committed, diff := "-", "-"
		if m.Committed >= 0 {
			committed = fmt.Sprint(m.Committed)
		}
		if d, ok := m.Diff(); ok {
			diff = fmt.Sprintf("%+d", d)
		}
		fmt.Fprintf(w, "  %s\t%s\t%d\t%s\n", offsets.SafeName(m.Partition.String()), committed, m.NextOffset, diff)
	}
	return w.Flush()
}
