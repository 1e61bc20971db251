package offsets

import (
	"fmt"
	"slices"
)

// Seek stores a running stream's seek of p to offset at once. through is
// the id of the last batch the stream cut before the seek: while batches
// up to it are not acked, the seek is kept in the stream as well, and the
// ack of each of them (Ack, AckAndPlan) stores offset again after moving
// the partition to the batch's Until, in the same transaction. So a batch
// cut before a seek never undoes it, even across a crash.
func (s *Store) Seek(stream string, p Partition, offset int64, through uint64, e Event) error {
	return s.SeekAll(stream, []SeekMove{{Partition: p, Offset: offset, Through: through, Event: e}})
}

// SeekMove is one partition's seek for SeekAll, as Seek takes it.
type SeekMove struct {
	Partition Partition
	Offset    int64
	Through   uint64
	Event     Event
	// Jump marks the partition's next range (CodeSeek when empty).
	Jump string
	// TopicID, when set, is stored as the topic's id (KIP-516) with the
	// move: the topic was created again, and the move is to the new
	// topic's start.
	TopicID string
}

// SeekAll stores the seeks of many partitions as Seek stores one, in
// order, in one transaction: seeking every partition of a wide topic is
// one write to disk, not one per partition.
func (s *Store) SeekAll(stream string, moves []SeekMove) error {
	for _, m := range moves {
		if m.Offset < 0 {
			return fmt.Errorf("store %s: stream %q: next offset %d for %s is negative", s.path, stream, m.Offset, m.Partition)
		}
	}
	if len(moves) == 0 {
		return nil
	}
	return s.update(stream, func(st *streamTx) error {
		last := make(map[Partition]int, len(moves)) // a partition moved twice: the last move stands
		for i, m := range moves {
			if err := st.putNext(m.Partition, m.Offset); err != nil {
				return err
			}
			jump := m.Jump
			if jump == "" {
				jump = CodeSeek
			}
			if err := st.markMoved(m.Partition, jump); err != nil {
				return err
			}
			if m.TopicID != "" {
				if st.meta.TopicIDs == nil {
					st.meta.TopicIDs = map[string]string{}
				}
				st.meta.TopicIDs[m.Partition.Topic] = m.TopicID
			}
			last[m.Partition] = i
		}
		st.meta.Seeks = slices.DeleteFunc(st.meta.Seeks, func(m seekMark) bool {
			_, moved := last[Partition{Topic: m.Topic, Partition: m.Partition}]
			return moved
		})
		for i, m := range moves {
			if last[m.Partition] == i && m.Through > st.meta.LastBatch {
				st.meta.Seeks = append(st.meta.Seeks, seekMark{Topic: m.Partition.Topic, Partition: m.Partition.Partition, Offset: m.Offset, Through: m.Through})
			}
		}
		for _, m := range moves[:len(moves)-1] {
			if m.Event.Code != "" {
				if err := st.addEvent(m.Event, s.maxEvents); err != nil {
					return err
				}
			}
		}
		return st.record(moves[len(moves)-1].Event, s.maxEvents) // and the stream's meta, once
	})
}

// ResetSeeks is for a stream starting: the seeks kept from its last run
// apply, up to its id at most, to the partitions of the pending batch it
// re-delivers; with pending nil (nothing is re-delivered), and for every
// other partition (it starts at the seek's stored offset), they are spent.
func (s *Store) ResetSeeks(stream string, pending *Batch) error {
	return s.update(stream, func(st *streamTx) error {
		if pending == nil || pending.ID <= st.meta.LastBatch {
			st.meta.Seeks = nil
			return st.putMeta()
		}
		in := map[Partition]bool{}
		for _, r := range pending.Ranges {
			in[r.Partition] = true
		}
		st.dropSeeks(func(p Partition) bool { return !in[p] })
		for i := range st.meta.Seeks {
			st.meta.Seeks[i].Through = min(st.meta.Seeks[i].Through, pending.ID)
		}
		return st.putMeta()
	})
}

// dropSeeks forgets the kept seeks of the partitions drop says.
func (st *streamTx) dropSeeks(drop func(Partition) bool) {
	st.meta.Seeks = slices.DeleteFunc(st.meta.Seeks, func(m seekMark) bool {
		return drop(Partition{Topic: m.Topic, Partition: m.Partition})
	})
	if len(st.meta.Seeks) == 0 {
		st.meta.Seeks = nil
	}
}

// applySeeks stores again the seeks the ack of batch id just undid, and
// forgets those no batch left to ack was cut before.
func (st *streamTx) applySeeks(id uint64) error {
	kept := st.meta.Seeks[:0]
	for _, m := range st.meta.Seeks {
		if id > m.Through {
			continue
		}
		p := Partition{Topic: m.Topic, Partition: m.Partition}
		if err := st.putNext(p, m.Offset); err != nil {
			return err
		}
		if err := st.markMoved(p, CodeSeek); err != nil {
			return err
		}
		if id < m.Through {
			kept = append(kept, m)
		}
	}
	st.meta.Seeks = kept
	if len(kept) == 0 {
		st.meta.Seeks = nil
	}
	return nil
}
