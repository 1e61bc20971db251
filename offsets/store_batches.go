package offsets

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Plan durably writes b as planned, before its records are processed
// (docs/design.md §2.4). b.ID must be the stream's LastBatch+1. If that batch is
// already planned and not acked, this is a re-delivery after a crash: b
// replaces it and is marked Redelivered. Any other id is ErrBatchOrder.
// Every range must have 0 ≤ From ≤ Until. The stream's next offsets do not
// move; the oldest batches beyond the log cap are pruned in the same
// transaction.
func (s *Store) Plan(stream string, b Batch) error {
	if err := s.checkRanges(stream, b); err != nil {
		return err
	}
	var enc []byte
	err := s.update(stream, func(st *streamTx) (err error) {
		enc, err = s.planTx(st, &b)
		return err
	})
	if err == nil {
		s.rememberPlanned(stream, b, enc)
	}
	return err
}

// AckAndPlan acks batch id as Ack does and writes next ahead as Plan does,
// in one transaction: the stream's store work for a batch cut right after
// the previous one was processed. next.ID must be id+1. Either both are
// stored or neither is.
func (s *Store) AckAndPlan(stream string, id uint64, at time.Time, next Batch) error {
	if err := s.checkRanges(stream, next); err != nil {
		return err
	}
	if next.ID != id+1 {
		return fmt.Errorf("%w: batch %d planned with the ack of batch %d", ErrBatchOrder, next.ID, id)
	}
	var enc []byte
	err := s.update(stream, func(st *streamTx) (err error) {
		if err := s.ackTx(st, stream, id, at); err != nil {
			return err
		}
		enc, err = s.planTx(st, &next)
		return err
	})
	s.forget(stream)
	if err == nil {
		s.rememberPlanned(stream, next, enc)
		s.releasePages()
	}
	return err
}

func (s *Store) checkRanges(stream string, b Batch) error {
	for _, r := range b.Ranges {
		if r.From < 0 || r.From > r.Until {
			return fmt.Errorf("store %s: stream %q: batch %d: bad range %s", s.path, stream, b.ID, r.Range)
		}
	}
	return nil
}

// planTx writes b as planned in st and returns its stored bytes.
func (s *Store) planTx(st *streamTx, b *Batch) ([]byte, error) {
	if want := st.meta.LastBatch + 1; b.ID != want {
		return nil, fmt.Errorf("%w: planned batch %d, want %d (last acked %d)", ErrBatchOrder, b.ID, want, st.meta.LastBatch)
	}
	key := idKey(b.ID)
	if st.batches.Get(key) != nil {
		b.Redelivered = true
	}
	b.State, b.AckedAt = StatePlanned, time.Time{}
	v, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	v = st.seal(bucketBatches, key, v)
	if err := st.batches.Put(key, v); err != nil {
		return nil, err
	}
	if st.sealed {
		st.meta.Planned = b.ID
		if err := st.putMeta(); err != nil {
			return nil, err
		}
	}
	return v, prune(st.batches, keepFrom(b.ID, s.batchesKept(len(b.Ranges))))
}

// batchesKept is how many batches of the log are kept when the newest has
// ranges ranges: maxBatches, fewer when batches are wide (maxRanges over
// all of them, taking the newest as typical), never fewer than
// minBatchesKept.
func (s *Store) batchesKept(ranges int) int {
	if ranges == 0 || s.maxRanges == 0 {
		return s.maxBatches
	}
	return min(s.maxBatches, max(s.maxRanges/ranges, minBatchesKept))
}

func (s *Store) rememberPlanned(stream string, b Batch, enc []byte) {
	b.Ranges = slices.Clone(b.Ranges)
	s.remember(stream, plannedBatch{batch: b, enc: enc})
}

// plannedBatch is the last batch Plan wrote for a stream and its stored
// bytes. Ack takes the batch from here instead of decoding it again
// (decoding a batch of 1000 ranges is most of an ack's work), but only
// when the stored bytes are still exactly these.
type plannedBatch struct {
	batch Batch
	enc   []byte
}

func (s *Store) remember(stream string, p plannedBatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.planned == nil {
		s.planned = map[string]plannedBatch{}
	}
	s.planned[stream] = p
}

// plannedFor returns the batch Plan last wrote for stream if it is id and
// its stored bytes are v.
func (s *Store) plannedFor(stream string, id uint64, v []byte) (Batch, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.planned[stream]
	if !ok || p.batch.ID != id || !bytes.Equal(p.enc, v) {
		return Batch{}, false
	}
	return p.batch, true
}

func (s *Store) forget(stream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.planned, stream)
}

// Ack marks the planned batch id acked at at and, in the same transaction,
// moves the stream's next offset of every partition in the batch to its
// range's Until and LastBatch to id (docs/design.md §2.4). Acking the newest acked
// batch again is a no-op; any other id that is not the pending batch is
// ErrBatchOrder.
func (s *Store) Ack(stream string, id uint64, at time.Time) error {
	defer s.forget(stream)
	err := s.update(stream, func(st *streamTx) error { return s.ackTx(st, stream, id, at) })
	if err == nil {
		s.releasePages()
	}
	return err
}

func (s *Store) ackTx(st *streamTx, stream string, id uint64, at time.Time) error {
	if id == st.meta.LastBatch && id > 0 {
		return nil
	}
	key := idKey(id)
	v := st.batches.Get(key)
	if id != st.meta.LastBatch+1 || v == nil {
		return fmt.Errorf("%w: ack of batch %d, but the pending batch is %d (last acked %d)",
			ErrBatchOrder, id, st.meta.LastBatch+1, st.meta.LastBatch)
	}
	b, ok := s.plannedFor(stream, id, v)
	if !ok {
		payload, err := st.unsealEntry(bucketBatches, "batch", key, v)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(payload, &b); err != nil {
			return fmt.Errorf("batch %d: %w: %v", id, ErrCorrupt, err)
		}
	}
	b.State, b.AckedAt = StateAcked, at
	if v, err := json.Marshal(b); err != nil {
		return err
	} else if err := st.batches.Put(key, st.seal(bucketBatches, key, v)); err != nil {
		return err
	}
	// bbolt keeps keys and values until the transaction ends: one buffer
	// holds them all rather than two allocations per range.
	size := 0
	for _, r := range b.Ranges {
		size += len(r.Topic) + 5 + 8 + sealSize
	}
	buf := make([]byte, 0, size)
	var until [8]byte
	for _, r := range b.Ranges {
		n := len(buf)
		buf = appendPartitionKey(buf, r.Partition)
		k := buf[n:len(buf):len(buf)]
		st.addedNext(k)
		binary.BigEndian.PutUint64(until[:], uint64(r.Until))
		if st.sealed {
			buf = appendSealed(buf, st.name, bucketNext, k, until[:])
		} else {
			buf = append(buf, until[:]...)
		}
		if err := st.next.Put(k, buf[n+len(k):len(buf):len(buf)]); err != nil {
			return err
		}
	}
	if err := st.clearMoved(b.Ranges); err != nil {
		return err
	}
	if err := st.applySeeks(id); err != nil {
		return err
	}
	st.meta.LastBatch, st.meta.Updated, st.meta.Planned = id, at, 0
	return st.putMeta()
}

// Pending returns the batch that was planned but not acked, or nil. After a
// crash it is the batch to re-deliver, with the same ranges.
func (s *Store) Pending(stream string) (*Batch, error) {
	var pending *Batch
	err := s.view(stream, func(st *streamTx) error {
		var err error
		pending, err = st.pending()
		return err
	})
	return pending, err
}

// Batches returns up to limit batches of the log (all when limit ≤ 0),
// newest first, a pending one included. An unknown stream has none.
func (s *Store) Batches(stream string, limit int) ([]Batch, error) {
	var out []Batch
	err := s.view(stream, func(st *streamTx) error {
		var err error
		out, err = newestFirst[Batch](st, st.batches, bucketBatches, "batch", limit)
		return err
	})
	return out, err
}

// Batch returns one batch of the log; ok is false when it is not there
// (never planned, pruned, or unknown stream).
func (s *Store) Batch(stream string, id uint64) (b Batch, ok bool, err error) {
	err = s.view(stream, func(st *streamTx) error {
		key := idKey(id)
		v := st.batches.Get(key)
		if v == nil {
			return nil
		}
		v, err := st.unsealEntry(bucketBatches, "batch", key, v)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("batch %d: %w: %v", id, ErrCorrupt, err)
		}
		ok = true
		return nil
	})
	return b, ok, err
}

// DropPending is for a stream starting that will not re-deliver its
// pending batch id (explicit or imported offsets chose where its
// partitions start): the batch leaves the log and e is recorded, in one
// transaction, so the new batch that takes the id is a new batch, not a
// re-delivery. An id that is not the pending batch is ErrBatchOrder.
func (s *Store) DropPending(stream string, id uint64, e Event) error {
	defer s.forget(stream)
	return s.update(stream, func(st *streamTx) error {
		key := idKey(id)
		if id != st.meta.LastBatch+1 || st.batches.Get(key) == nil {
			return fmt.Errorf("%w: drop of batch %d, but the pending batch is %d (last acked %d)",
				ErrBatchOrder, id, st.meta.LastBatch+1, st.meta.LastBatch)
		}
		if err := st.batches.Delete(key); err != nil {
			return err
		}
		st.meta.Planned = 0
		st.dropSeeks(func(Partition) bool { return true })
		return st.record(e, s.maxEvents)
	})
}

// pending is the batch planned and not acked, or nil, checked against the
// stream's record (checkPlanned).
func (st *streamTx) pending() (*Batch, error) {
	key := idKey(st.meta.LastBatch + 1)
	v := st.batches.Get(key)
	if v == nil {
		return nil, st.checkPlanned(nil)
	}
	v, err := st.unsealEntry(bucketBatches, "batch", key, v)
	if err != nil {
		return nil, err
	}
	var b Batch
	if err := json.Unmarshal(v, &b); err != nil {
		return nil, fmt.Errorf("batch %d: %w: %v", st.meta.LastBatch+1, ErrCorrupt, err)
	}
	if b.State != StatePlanned {
		return nil, st.checkPlanned(nil)
	}
	return &b, st.checkPlanned(&b)
}
