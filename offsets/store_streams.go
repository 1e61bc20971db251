package offsets

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
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
	// TopicIDs are the topics' ids (KIP-516) as the stream last saw
	// them, by name; nil or missing when unknown (an older store or
	// cluster). A topic deleted and created again has another id.
	TopicIDs map[string]string
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
	// Moved names, by partition, why its next offset moved without an ack
	// since its last acked range (a jump code: data-loss, reset, set,
	// import, seek…); nil when none did. The first range a watch reads
	// from such a position is marked with it (docs/design.md §2.3).
	Moved map[Partition]string
	// StartChoice is what the topic picker last answered to "where to
	// start" for this stream ("resume", "latest", "-100", "@-1h"…); ""
	// when it never asked. Only the picker reads it: it is its default.
	StartChoice string
	// Damaged are the partitions whose next offset or jump mark fails its
	// checksum (changed outside kbatch), in key order; they are left out
	// of Next and Moved. Only Streams returns such a stream (offsets show
	// lists them, offsets set stores them anew); Stream, which a start
	// reads, refuses it with Check's error.
	Damaged []*ChecksumError
}

// Check is the error of the first damaged partition, or nil.
func (i StreamInfo) Check() error {
	if len(i.Damaged) == 0 {
		return nil
	}
	return i.Damaged[0]
}

// Streams returns every stream in the store, ordered by name, with their
// damaged partitions (StreamInfo.Damaged) listed rather than refused.
func (s *Store) Streams() (out []StreamInfo, err error) {
	if s.folder != nil {
		return s.folder.streams()
	}
	defer s.recoverCorrupt(&err)
	err = s.db.View(func(tx *bolt.Tx) error {
		if err := checkStreamCount(tx); err != nil {
			return err
		}
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
// A stream with a partition whose next offset or jump mark fails its
// checksum is a *ChecksumError naming the partition, what it reads and
// where the log's last acked batch with it ended it: never a start from a
// position kbatch did not write.
func (s *Store) Stream(name string) (info StreamInfo, ok bool, err error) {
	err = s.view(name, func(st *streamTx) error {
		ok = true
		if info, err = st.info(); err != nil {
			return err
		}
		return info.Check()
	})
	return info, ok, err
}

// EnsureStream creates the stream, or records new brokers and topics for an
// existing one; its positions and logs are kept. Every other write needs the
// stream to exist. A name is 1 to 1024 bytes. A stored cluster id is kept.
func (s *Store) EnsureStream(name string, brokers, topics []string) error {
	return s.EnsureStreamOn(name, "", brokers, topics, nil)
}

// EnsureStreamOn is EnsureStream that also records the cluster id the
// stream runs against (kept as it is when clusterID is ""). Callers compare
// it first with StreamChanges.
func (s *Store) EnsureStreamOn(name, clusterID string, brokers, topics []string, topicIDs map[string]string) (err error) {
	if name == "" || len(name) > 1024 {
		return fmt.Errorf("store %s: stream name must be 1 to 1024 bytes, got %d", s.path, len(name))
	}
	if err := s.writable(); err != nil {
		return err
	}
	if s.folder != nil {
		f, err := s.folder.file(name, true)
		if err != nil {
			return err
		}
		return f.EnsureStreamOn(name, clusterID, brokers, topics, topicIDs)
	}
	defer s.recoverCorrupt(&err)
	err = s.db.Update(func(tx *bolt.Tx) error {
		isNew := tx.Bucket(bucketStreams).Bucket([]byte(name)) == nil
		b, err := tx.Bucket(bucketStreams).CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return err
		}
		if n, counted, err := readStreamCount(tx); err != nil {
			return err
		} else if counted && isNew {
			if err := putStreamCount(tx, n+1); err != nil {
				return err
			}
		}
		for _, sub := range [][]byte{bucketNext, bucketBatches, bucketEvents, bucketMoved} {
			if _, err := b.CreateBucketIfNotExists(sub); err != nil {
				return err
			}
		}
		st := &streamTx{name: name, bucket: b, sealed: storeSchema(tx) >= sealedSchema}
		if st.sealed {
			st.meta.Entries = &entryCounts{}
		}
		if b.Get(keyStreamMeta) != nil {
			if st, err = openStream(tx, name); err != nil {
				return err
			}
		}
		st.meta.Brokers, st.meta.Topics = slices.Clone(brokers), slices.Clone(topics)
		if clusterID != "" {
			st.meta.ClusterID = clusterID
		}
		for t, id := range topicIDs {
			if st.meta.TopicIDs == nil {
				st.meta.TopicIDs = map[string]string{}
			}
			st.meta.TopicIDs[t] = id
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
// imports, the starts a stream stores. e is not recorded when e.Code is
// empty.
//
// A pending planned batch is left alone: acking it later still moves its
// partitions to its Untils, and a restart re-delivers it. Offline callers
// should look at Pending first and say so. A seek kept for the partitions
// set (Store.Seek) is forgotten: the newer position wins, and the pending
// batch's ack does not store the seek's offset over it.
//
// A partition that had a next offset and gets another one is marked as
// moved with e.Code (StreamInfo.Moved), unless e.Code is empty.
func (s *Store) SetNext(stream string, next map[Partition]int64, e Event) error {
	return s.SetStarts(stream, next, nil, e)
}

// SetStarts is SetNext where each partition moved carries its own jump
// code: jumps[p] when set (data-loss, offset-out-of-range at a start),
// else e.Code. A watch stores its resolved starts with it.
func (s *Store) SetStarts(stream string, next map[Partition]int64, jumps map[Partition]string, e Event) error {
	for p, off := range next {
		if off < 0 {
			return fmt.Errorf("store %s: stream %q: next offset %d for %s is negative", s.path, stream, off, p)
		}
	}
	// In key order: bbolt inserts each key into its sorted node, and keys
	// in a map's order shift half the node every time (10,000 partitions:
	// BenchmarkSetStarts10k).
	parts := slices.SortedFunc(maps.Keys(next), ComparePartitions)
	return s.update(stream, func(st *streamTx) error {
		for _, p := range parts {
			off := next[p]
			key := partitionKey(p)
			old := st.next.Get(key)
			code := jumps[p]
			if code == "" {
				code = e.Code
			}
			value := st.seal(bucketNext, key, offsetValue(off))
			if old != nil && code != "" && (!bytes.Equal(old, value) || st.movedDamaged(key)) {
				if err := st.markMoved(p, code); err != nil {
					return err
				}
			}
			if old == nil && st.meta.Entries != nil {
				st.meta.Entries.Next++
			}
			if err := st.next.Put(key, value); err != nil {
				return err
			}
		}
		st.dropSeeks(func(p Partition) bool { _, set := next[p]; return set })
		return st.record(e, s.maxEvents)
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
			Msg: fmt.Sprintf("is damaged (%s); move it away or pass --store to use another file", unreadable(r))}
	}
}

// update runs fn in a write transaction on an existing stream.
func (s *Store) update(stream string, fn func(st *streamTx) error) (err error) {
	if err := s.writable(); err != nil {
		return err
	}
	if s.folder != nil {
		f, err := s.folder.file(stream, false)
		if err != nil {
			return err
		}
		if f == nil {
			return fmt.Errorf("store %s: stream %q: %w", s.path, stream, ErrUnknownStream)
		}
		return f.update(stream, fn)
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
	if s.folder != nil {
		// A writer takes the stream's file, and its lock, at the first
		// read: what it reads stays true until it writes (a second
		// writer cannot run and finish the stream in between).
		f, err := s.folder.file(stream, !s.readOnly)
		if f == nil || err != nil {
			return err
		}
		return f.view(stream, fn)
	}
	defer s.recoverCorrupt(&err)
	err = s.db.View(func(tx *bolt.Tx) error {
		st, err := openStream(tx, stream)
		if st == nil && err == nil {
			return checkStreamCount(tx) // none by that name, or one lost?
		}
		if err != nil {
			return err
		}
		return fn(st)
	})
	if err != nil {
		return fmt.Errorf("store %s: stream %q: %w", s.path, stream, err)
	}
	return nil
}

// SetStartChoice remembers the topic picker's answer to "where to start"
// for an existing stream, so the next pick of it offers the same. It
// moves no position.
func (s *Store) SetStartChoice(stream, choice string) error {
	return s.update(stream, func(st *streamTx) error {
		st.meta.StartChoice = choice
		return st.putMeta()
	})
}

// unreadable says what a bbolt panic over a damaged page (r, or the text of
// the error tx.Check makes of one) found, without the words of a panic: a
// user reads "a page bbolt cannot read", not "panic: assertion failed".
func unreadable(r any) string {
	msg := fmt.Sprint(r)
	for _, prefix := range []string{"panic: ", "runtime error: ", "assertion failed: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return "a page bbolt cannot read: " + msg
}
