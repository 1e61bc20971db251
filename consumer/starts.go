package consumer

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// usablePending keeps a pending batch for re-delivery unless explicit or
// imported offsets name one of its partitions (the user chose where to
// start), or one of its partitions is not among this run's (a stream
// taken over with other topics) or is of a topic deleted and created
// again: it cannot be read again with the same ranges. Then the batch is dropped from the log, why says why, and its
// id is taken by the first new batch; the partitions keep their stored
// positions, so nothing is skipped.
//
// moved and seeks are the stream's stored jump codes and kept moves
// (StreamInfo.Moved, StreamInfo.Seeks). A range on a partition that a
// running stream moved to a recreated topic's start is of the old topic
// when the move came after the batch was cut (the move is kept for the
// batch's ack), or when the range does not start at the move itself.
func usablePending(p *offsets.Batch, parts map[offsets.Partition]offsets.Bounds, recreated map[string]bool, moved map[offsets.Partition]string, seeks map[offsets.Partition]int64, explicit []offsets.Spec, imported bool) (keep *offsets.Batch, why string) {
	if p == nil {
		return nil, ""
	}
	if imported {
		return nil, "imported offsets (--from-spark) choose where its partitions start"
	}
	var gone []string
	for _, r := range p.Ranges {
		for _, sp := range explicit {
			if sp.Matches(r.Partition) {
				return nil, "-o names one of its partitions"
			}
		}
		if recreated[r.Partition.Topic] {
			return nil, "topic " + r.Partition.Topic + " was deleted and created again"
		}
		_, after := seeks[r.Partition]
		if moved[r.Partition] == offsets.CodeRecreated && (after || r.Jump != offsets.CodeRecreated) {
			return nil, "topic " + r.Partition.Topic + " was deleted and created again after it was planned"
		}
		if _, ok := parts[r.Partition]; !ok {
			gone = append(gone, r.Partition.String())
		}
	}
	if len(gone) > 0 {
		return nil, fmt.Sprintf("%s %s not among this run's partitions (other topics) and %s stored %s",
			strings.Join(gone, ", "), plural(len(gone), "is", "are"), plural(len(gone), "keeps its", "keep their"), plural(len(gone), "position", "positions"))
	}
	return p, ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// explainRecreated rewrites the topic-recreated events of the start for
// topics whose every partition starts where -o (or an import) says, not
// at a stored position: nothing of the new topic is left out because of
// the old positions then. It returns the other recreated topics, whose
// new records below the stored positions are not read: for
// --fail-on-data-loss, a loss.
func explainRecreated(notices []offsets.Event, starts []offsets.Start) (atStake map[string]bool) {
	for i := range notices {
		e := &notices[i]
		if e.Code != offsets.CodeRecreated {
			continue
		}
		chosen, any := true, false
		for _, st := range starts {
			if st.Partition.Topic == e.Topic {
				any = true
				chosen = chosen && st.Source != offsets.SourceStored
			}
		}
		if any && chosen {
			e.Message = fmt.Sprintf("topic %s has another id than when this stream last ran: it was deleted and created again, "+
				"or its id was changed; its partitions start where this run says, not at the stored positions", e.Topic)
			continue
		}
		if atStake == nil {
			atStake = map[string]bool{}
		}
		atStake[e.Topic] = true
	}
	return atStake
}

// droppedEvent says why the pending batch p is not re-delivered.
func droppedEvent(p *offsets.Batch, why string) offsets.Event {
	e := offsets.NewEvent(time.Now(), offsets.CodeDropped, offsets.Partition{}, fmt.Sprintf(
		"batch %d was planned and never acked; it is not re-delivered because %s; the next batch takes its id", p.ID, why))
	e.Partition = -1
	return e
}

// markMoved sets the Jump of the starts that are not where the store's
// last acked range of the partition left it (docs/design.md §2.3): a start that
// moves a stored position (-o, an import, @TIME) is a reset, and a stored
// position that was moved without an ack since (data loss or a reset at a
// start that had no batch, `offsets set`, a seek) keeps its code. The
// partitions of the batch re-delivered start with its ranges.
func markMoved(starts []offsets.Start, info offsets.StreamInfo, redeliver *offsets.Batch) {
	for i := range starts {
		st := &starts[i]
		if st.Jump != "" || (redeliver != nil && hasRange(redeliver, st.Partition)) {
			continue
		}
		prev, ok := info.Next[st.Partition]
		switch {
		case ok && prev != st.NextOffset:
			st.Jump = offsets.CodeReset
		case ok && info.Moved[st.Partition] != "":
			st.Jump = info.Moved[st.Partition]
		}
	}
}

// persistStarts writes the resolved start of every partition whose stored
// next offset differs, so a restart resumes where this run began even for
// partitions that never get a batch, and marks each moved with its Jump
// (reset when it has none) until its first range is acked: a restart
// before then marks that range all the same. The partitions of the batch
// being re-delivered keep theirs: its ack moves them.
func persistStarts(cfg Config, starts []offsets.Start, redeliver *offsets.Batch) error {
	info, _, err := cfg.Store.Stream(cfg.Name)
	if err != nil {
		return err
	}
	next := map[offsets.Partition]int64{}
	jumps := map[offsets.Partition]string{}
	var moved []offsets.Start
	for _, st := range starts {
		if redeliver != nil && hasRange(redeliver, st.Partition) {
			continue
		}
		if cur, ok := info.Next[st.Partition]; !ok || cur != st.NextOffset {
			next[st.Partition] = st.NextOffset
			moved = append(moved, st)
			if st.Jump != "" {
				jumps[st.Partition] = st.Jump
			}
		}
	}
	if len(next) == 0 {
		return nil
	}
	// The message lists the first partitions in partition order and
	// counts the rest: a topic of 10,000 partitions made an event of
	// 300 KB, formatted at every start.
	slices.SortFunc(moved, func(a, b offsets.Start) int { return offsets.ComparePartitions(a.Partition, b.Partition) })
	list := offsets.JoinSome(len(moved), offsets.MaxListed, func(i int) string {
		return fmt.Sprintf("%s=%d (%s)", moved[i].Partition, moved[i].NextOffset, moved[i].Source)
	})
	e := offsets.NewEvent(time.Now(), offsets.CodeReset, offsets.Partition{}, "start positions: "+list)
	e.Partition = -1
	return cfg.Store.SetStarts(cfg.Name, next, jumps, e)
}

// DataLossError ends a stream under Config.FailOnDataLoss: a position
// below the log start (data loss) or above the high watermark. The event
// is recorded in the store first and, while running, sent on Events.
type DataLossError struct{ Event offsets.Event }

// Error is the event's message, which says the stream stops.
func (e *DataLossError) Error() string { return e.Event.Message }

// stopping rewrites a data-loss or offset-out-of-range event for
// --fail-on-data-loss: the stream stops there instead of going on.
func stopping(e offsets.Event) offsets.Event {
	p := offsets.Partition{Topic: e.Topic, Partition: e.Partition}
	switch {
	case e.Code == offsets.CodeRecreated:
		e.Message = fmt.Sprintf("topic %s was deleted and created again since this stream last ran: its stored positions are the old topic's, "+
			"and records of the new topic below them would not be read; stopping (--fail-on-data-loss; -o %s=earliest reads the new topic from its start)", e.Topic, e.Topic)
	case e.Code == offsets.CodeDataLoss && e.To >= 0 && e.To < e.Expected:
		e.Message = fmt.Sprintf("%s: the log was truncated at offset %d (an unclean leader election): the %d offsets read at %d to %d are no longer in it; stopping (--fail-on-data-loss)",
			p, e.To, e.Lost, e.To, e.Expected-1)
	case e.Code == offsets.CodeDataLoss:
		e.Message = fmt.Sprintf("%s: offset %d is below the log start %d: %d offsets were deleted before they were read; stopping (--fail-on-data-loss)",
			p, e.Expected, e.LogStart, e.Lost)
	default:
		e.Message = fmt.Sprintf("%s: offset %d is above the high watermark %d; stopping (--fail-on-data-loss)", p, e.Expected, e.HighWatermark)
	}
	e.To = -1
	return e
}
