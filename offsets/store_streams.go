package offsets

import (
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// StreamInfo is one stream as stored: where it reads from and where it is.
type StreamInfo struct {
	Name string
	// ClusterID is the cluster the stream was last run against; "" when
	// unknown.
	ClusterID string
	Brokers   []string
	Topics    []string
	// Next is the next offset per partition, as of the last acked batch or
	// SetNext; never nil.
	Next map[Partition]int64
	// LastBatch is the id of the last acked batch, 0 before the first.
	LastBatch uint64
	// Updated is when EnsureStream, Ack or SetNext last wrote the stream.
	Updated time.Time
	// Seeks are the seeks made while batches cut before them are still
	// to be acked (Store.Seek), by partition; nil when there are none. A
	// restart that re-delivers a pending batch moves these partitions to
	// their seek's offset after it.
	Seeks map[Partition]int64
}

// Streams returns every stream in the store, ordered by name.
func (s *Store) Streams() (out []StreamInfo, err error) {
	defer s.recoverCorrupt(&err)
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStreams).ForEachBucket(func(k []byte) error {
			st, err := openStream(tx, string(k))
			if err != nil {
				return err
			}
			info, err := st.info()
			out = append(out, info)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.path, err)
	}
	return out, nil
}

// Stream returns one stream; ok is false when there is none by that name.
func (s *Store) Stream(name string) (info StreamInfo, ok bool, err error) {
	err = s.view(name, func(st *streamTx) error {
		ok = true
		info, err = st.info()
		return err
	})
	return info, ok, err
}

// EnsureStream creates the stream, or records new brokers and topics for an
// existing one; its positions and logs are kept. Every other write needs the
// stream to exist. A name is 1 to 1024 bytes. A stored cluster id is kept.
func (s *Store) EnsureStream(name string, brokers, topics []string) error {
	return s.EnsureStreamOn(name, "", brokers, topics)
}

// EnsureStreamOn is EnsureStream that also records the cluster id the
// stream runs against (kept as it is when clusterID is ""). Callers compare
// it first with StreamChanges.
func (s *Store) EnsureStreamOn(name, clusterID string, brokers, topics []string) (err error) {
	if name == "" || len(name) > 1024 {
		return fmt.Errorf("store %s: stream name must be 1 to 1024 bytes, got %d", s.path, len(name))
	}
	if err := s.writable(); err != nil {
		return err
	}
	defer s.recoverCorrupt(&err)
	err = s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketStreams).CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return err
		}
		for _, sub := range [][]byte{bucketNext, bucketBatches, bucketEvents} {
			if _, err := b.CreateBucketIfNotExists(sub); err != nil {
				return err
			}
		}
		st := &streamTx{name: name, bucket: b}
		if b.Get(keyStreamMeta) != nil {
			if st, err = openStream(tx, name); err != nil {
				return err
			}
		}
		st.meta.Brokers, st.meta.Topics = slices.Clone(brokers), slices.Clone(topics)
		if clusterID != "" {
			st.meta.ClusterID = clusterID
		}
		st.meta.Updated = time.Now()
		return st.putMeta()
	})
	if err != nil {
		return fmt.Errorf("store %s: stream %q: %w", s.path, name, err)
	}
	return nil
}

// SetNext sets the next offsets of the partitions in next (others keep
// theirs) and records e in the event log, in one transaction: `offsets set`,
// imports and persisted seeks. e is not recorded when e.Code is empty.
//
// A pending planned batch is left alone: acking it later still moves its
// partitions to its Untils, and a restart re-delivers it. Offline callers
// should look at Pending first and say so.
func (s *Store) SetNext(stream string, next map[Partition]int64, e Event) error {
	for p, off := range next {
		if off < 0 {
			return fmt.Errorf("store %s: stream %q: next offset %d for %s is negative", s.path, stream, off, p)
		}
	}
	return s.update(stream, func(st *streamTx) error {
		for p, off := range next {
			if err := st.next.Put(partitionKey(p), offsetValue(off)); err != nil {
				return err
			}
		}
		return st.record(e, s.maxEvents)
	})
}

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
		st.meta.Seeks = slices.DeleteFunc(st.meta.Seeks, func(m seekMark) bool { return m.Topic == p.Topic && m.Partition == p.Partition })
		if through > st.meta.LastBatch {
			st.meta.Seeks = append(st.meta.Seeks, seekMark{Topic: p.Topic, Partition: p.Partition, Offset: offset, Through: through})
		}
		return st.record(e, s.maxEvents)
	})
}

// ResetSeeks is for a stream starting: the seeks kept from its last run
// apply up to batch through at most (the pending batch it re-delivers),
// or, with through 0, no longer (nothing is re-delivered).
func (s *Store) ResetSeeks(stream string, through uint64) error {
	return s.update(stream, func(st *streamTx) error {
		kept := st.meta.Seeks[:0]
		for _, m := range st.meta.Seeks {
			if through > st.meta.LastBatch {
				m.Through = min(m.Through, through)
				kept = append(kept, m)
			}
		}
		st.meta.Seeks = kept
		if len(kept) == 0 {
			st.meta.Seeks = nil
		}
		return st.putMeta()
	})
}

// record ends a write of positions: e goes to the event log (when it has
// a code), and the stream is marked updated at e's time (or now).
func (st *streamTx) record(e Event, maxEvents int) error {
	if e.Code != "" {
		if err := st.addEvent(e, maxEvents); err != nil {
			return err
		}
	}
	st.meta.Updated = e.Time
	if st.meta.Updated.IsZero() {
		st.meta.Updated = time.Now()
	}
	return st.putMeta()
}

// applySeeks stores again the seeks the ack of batch id just undid, and
// forgets those no batch left to ack was cut before.
func (st *streamTx) applySeeks(id uint64) error {
	kept := st.meta.Seeks[:0]
	for _, m := range st.meta.Seeks {
		if id > m.Through {
			continue
		}
		if err := st.next.Put(partitionKey(Partition{Topic: m.Topic, Partition: m.Partition}), offsetValue(m.Offset)); err != nil {
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

func (s *Store) writable() error {
	if s.readOnly {
		return &StoreError{Path: s.path, Kind: ErrReadOnly, Msg: "is open read-only"}
	}
	return nil
}

// recoverCorrupt turns a bbolt panic over a damaged page into ErrCorrupt;
// bbolt's managed transactions roll back before the panic reaches here.
func (s *Store) recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = &StoreError{Path: s.path, Kind: ErrCorrupt,
			Msg: fmt.Sprintf("is damaged (%v); move it away or pass --store to use another file", r)}
	}
}

// update runs fn in a write transaction on an existing stream.
func (s *Store) update(stream string, fn func(st *streamTx) error) (err error) {
	if err := s.writable(); err != nil {
		return err
	}
	defer s.recoverCorrupt(&err)
	err = s.db.Update(func(tx *bolt.Tx) error {
		st, err := openStream(tx, stream)
		if err != nil {
			return err
		}
		if st == nil {
			return ErrUnknownStream
		}
		return fn(st)
	})
	if err != nil {
		return fmt.Errorf("store %s: stream %q: %w", s.path, stream, err)
	}
	return nil
}

// view runs fn in a read transaction on a stream; fn is not called when
// there is no such stream.
func (s *Store) view(stream string, fn func(st *streamTx) error) (err error) {
	defer s.recoverCorrupt(&err)
	err = s.db.View(func(tx *bolt.Tx) error {
		st, err := openStream(tx, stream)
		if err != nil || st == nil {
			return err
		}
		return fn(st)
	})
	if err != nil {
		return fmt.Errorf("store %s: stream %q: %w", s.path, stream, err)
	}
	return nil
}
