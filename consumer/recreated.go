package consumer

import (
	"fmt"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// topicIDs is kafka.TopicIDs. The tests of a truncated log replace it with
// one that knows no ids, as a cluster before Kafka 2.8 does: kfake has no
// unclean election, so they create the topic again instead.
var topicIDs = kafka.TopicIDs

// topicID asks the cluster for topic's id; "" when it does not say (an
// older broker, an error: no check then).
func (l *loop) topicID(topic string) string {
	ids, err := topicIDs(l.cfg.Client, []string{topic})
	if err != nil {
		return ""
	}
	return ids[topic]
}

// topicBounds reads the bounds of every partition topic has now.
func (l *loop) topicBounds(topic string) (map[offsets.Partition]offsets.Bounds, error) {
	if err := l.cfg.Client.RefreshMetadata(topic); err != nil {
		return nil, err
	}
	parts, err := kafka.TopicPartitions(l.cfg.Client, []string{topic})
	if err != nil {
		return nil, err
	}
	return kafka.ListBoundsContext(l.ctx, l.cfg.Client, parts)
}

// onRecreated takes a topic deleted and created again under the running
// stream: the cluster gives it id, not the one the stream read it under.
// The old topic's offsets mean nothing in the new one: kept, a position
// below the new log's end skipped its first records, and one above it
// was taken for a truncation. So every partition of the topic moves to
// the new topic's log start (bounds are the new topic's; 0 for a
// partition it does not have), with one event.
// Batches already cut stay as they were; records of the old topic held
// for the next batch are dropped, as records of a truncated log are
// (onDiverged): the topic they came from no longer exists, and the range
// before them is delivered. The moves and the new id are stored in one
// transaction, so a restart goes on in the new topic and does not report
// the recreation again; the acks of the batches cut before the move store
// it again (Store.SeekAll). A batch re-delivered from the last run that
// has a range on the topic cannot be read as planned any more: it is
// dropped, as it is when a start finds the topic recreated.
func (l *loop) onRecreated(topic, id string, bounds map[offsets.Partition]offsets.Bounds) error {
	was := l.ids[topic]
	l.ids[topic] = id
	now := time.Now()
	var moved []*partState
	var dropped int64
	for _, ps := range l.states {
		if ps.p.Topic == topic {
			moved = append(moved, ps)
			dropped += int64(len(ps.recs))
		}
	}
	in := 0 // the new topic's partitions
	for p := range bounds {
		if p.Topic == topic {
			in++
		}
	}
	e := offsets.NewEvent(now, offsets.CodeRecreated, offsets.Partition{Topic: topic, Partition: -1}, "")
	if l.cfg.FailOnDataLoss {
		e.Message = fmt.Sprintf("topic %s was deleted and created again while the stream ran: "+
			"the stream's positions are the old topic's; stopping (--fail-on-data-loss) (topic id %s, was %s)", topic, id, was)
		l.notice(e)
		return &DataLossError{Event: e}
	}
	// What happens first, the ids last: a screen's events pane shows the
	// start of the line.
	e.Message = fmt.Sprintf("topic %s was deleted and created again while the stream ran: "+
		"every partition is read from the new topic's log start (it has %d %s); what was not read of the old topic is gone", topic, in, plural(in, "partition", "partitions"))
	if dropped > 0 {
		e.Message += fmt.Sprintf(", and %d %s read but not yet in a batch %s dropped", dropped, plural(int(dropped), "record", "records"), plural(int(dropped), "is", "are"))
	}
	e.Message += fmt.Sprintf(" (topic id %s, was %s)", id, was)
	if err := l.dropRedeliveryOn(topic); err != nil {
		return err
	}
	moves := make([]offsets.SeekMove, 0, len(moved))
	for _, ps := range moved {
		// A partition the new topic does not have (yet) starts at 0, as
		// one added to it later would; its reader reports the broker's
		// errors meanwhile, and --until-end does not wait for it.
		b := bounds[ps.p]
		ps.bounds = b
		if l.cfg.UntilEnd {
			ps.target = b.HighWatermark
		}
		moves = append(moves, offsets.SeekMove{Partition: ps.p, Offset: b.LogStart, Through: l.nextID - 1, Jump: offsets.CodeRecreated, TopicID: id})
	}
	if len(moves) > 0 {
		moves[len(moves)-1].Event = e
	}
	if l.cfg.Store != nil {
		l.flushEvents() // the events before the move, first
		if len(moves) == 0 {
			l.events = append(l.events, e)
		} else if err := l.cfg.Store.SeekAll(l.cfg.Name, moves); err != nil {
			return err
		}
	}
	for _, ps := range moved {
		// This event says what the partition's errors meant (a topic
		// that was gone): the new topic's reader reports its own, and
		// the screen does not show the partition in error until records
		// come (a new topic may have none for a while).
		ps.unknownID, ps.errored, ps.errKind = nil, false, ""
		off := bounds[ps.p].LogStart
		if l.cfg.Store != nil {
			ps.stored = off
			if l.waiting != nil || l.busy != nil || l.processed != nil {
				l.seeks[ps.p] = seekMark{offset: off, through: l.nextID - 1}
			}
		}
		source := ps.source
		l.moveTo(ps, off, offsets.CodeRecreated)
		ps.source = source
	}
	l.emit(&Notice{e})
	return nil
}

// dropRedeliveryOn drops the batch re-delivered from the last run while it
// is still to be cut and has a range on topic, which was created again:
// its records are gone. Its other partitions read on from their ranges'
// starts, which are their stored positions, into new batches.
func (l *loop) dropRedeliveryOn(topic string) error {
	pend := l.redeliver
	if pend == nil {
		return nil
	}
	on := false
	for _, r := range pend.Ranges {
		on = on || r.Partition.Topic == topic
	}
	if !on {
		return nil
	}
	e := droppedEvent(pend, fmt.Sprintf("topic %s was deleted and created again while it was re-read", topic))
	if l.cfg.Store != nil {
		l.flushEvents()
		if err := l.cfg.Store.DropPending(l.cfg.Name, pend.ID, e); err != nil {
			return err
		}
	}
	l.redeliver = nil
	for _, r := range pend.Ranges {
		ps := l.parts[r.Partition]
		if ps == nil {
			continue
		}
		if ps.reader != nil {
			ps.reader.setNeed(0, 0)
		}
		delete(l.seeks, r.Partition)
		if ps.afterRedeliver {
			ps.afterRedeliver = false
			l.moveTo(ps, ps.afterRedeliverTo, offsets.CodeSeek)
		}
	}
	l.emit(&Notice{e})
	return nil
}

// adoptID takes the id of a topic the stream had none for: the lookup at
// start failed (a seed broker down, say) or the cluster gave none then.
// The topic's readers fetch under it from their next fetch, so that from
// now on a broker refuses the old topic's offsets in a new topic of the
// same name; they are not started again, which would forget the leader
// epoch of what they read and with it the check of the log after an
// unclean election (the unclean suite's "frozen" case shows it). The
// store keeps the id, so a restart tells a topic created again while
// kbatch was stopped. Whether the topic was created again before this
// refresh, nothing can tell.
func (l *loop) adoptID(topic, id string) error {
	l.ids[topic] = id
	if l.cfg.Store != nil {
		if err := l.cfg.Store.EnsureStreamOn(l.cfg.Name, "", l.cfg.Brokers, l.cfg.Topics, map[string]string{topic: id}); err != nil {
			return err
		}
	}
	tid := kafka.ParseTopicID(id)
	for _, ps := range l.states {
		if ps.p.Topic == topic && ps.reader != nil {
			ps.reader.setID(tid)
		}
	}
	return nil
}
