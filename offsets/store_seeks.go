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
	if offset < 0 {
		return fmt.Errorf("store %s: stream %q: next offset %d for %s is negative", s.path, stream, offset, p)
	}
	return s.update(stream, func(st *streamTx) error {
		if err := st.next.Put(partitionKey(p), offsetValue(offset)); err != nil {
			return err
		}
		if err := st.markMoved(p, CodeSeek); err != nil {
			return err
		}
		st.meta.Seeks = slices.DeleteFunc(st.meta.Seeks, func(m seekMark) bool { return m.Topic == p.Topic && m.Partition == p.Partition })
		if through > st.meta.LastBatch {
			st.meta.Seeks = append(st.meta.Seeks, seekMark{Topic: p.Topic, Partition: p.Partition, Offset: offset, Through: through})
		}
		return st.record(e, s.maxEvents)
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
		if err := st.next.Put(partitionKey(p), offsetValue(m.Offset)); err != nil {
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
