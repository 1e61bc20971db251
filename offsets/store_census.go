package offsets

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// A seal proves a value is as kbatch wrote it, not that it is still there:
// a page whose element count lost one drops its last entry with no value
// changed, and bbolt's check does not see it. So a sealed store also keeps
// counts, in sealed values: the number of streams (keyStreamCount in the
// kbatch bucket), and per stream the number of next offsets and jump marks
// and the id of the planned batch (streamMeta.Entries, Planned). Reads
// compare them with what is there; a missing stream, position, jump mark
// or pending batch is damage, never a start per --reset.

// keyStreamCount holds the number of streams, sealed as the value of a
// stream named "" in the bucket "kbatch".
var keyStreamCount = []byte("streams")

// entryCounts counts a stream's next offsets and jump marks.
type entryCounts struct {
	Next  int `json:"next"`
	Moved int `json:"moved"`
}

// readStreamCount is the number of streams the store says it holds; ok is
// false in a schema 1 store, which keeps none.
func readStreamCount(tx *bolt.Tx) (n uint64, ok bool, err error) {
	if storeSchema(tx) < sealedSchema {
		return 0, false, nil
	}
	v := tx.Bucket(bucketMeta).Get(keyStreamCount)
	payload, sealOK := unsealValue("", bucketMeta, keyStreamCount, v)
	if v == nil || !sealOK || len(payload) != 8 {
		return 0, false, fmt.Errorf("the count of streams is missing or fails its checksum: %w", ErrCorrupt)
	}
	return binary.BigEndian.Uint64(payload), true, nil
}

func putStreamCount(tx *bolt.Tx, n uint64) error {
	return tx.Bucket(bucketMeta).Put(keyStreamCount, appendSealed(nil, "", bucketMeta, keyStreamCount, binary.BigEndian.AppendUint64(nil, n)))
}

// checkStreamCount compares the stream count with the streams there are.
func checkStreamCount(tx *bolt.Tx) error {
	want, ok, err := readStreamCount(tx)
	if err != nil || !ok {
		return err
	}
	var have uint64
	if err := tx.Bucket(bucketStreams).ForEachBucket(func([]byte) error { have++; return nil }); err != nil {
		return err
	}
	if have != want {
		return fmt.Errorf("the store holds %d streams, its count says %d: a stream was lost: %w", have, want, ErrCorrupt)
	}
	return nil
}

// countEntries counts the keys of b (nil: none).
func countEntries(b *bolt.Bucket) int {
	n := 0
	if b != nil {
		_ = b.ForEach(func(_, v []byte) error {
			if v != nil {
				n++
			}
			return nil
		})
	}
	return n
}

// addedNext and the others keep st.meta.Entries in step with a write; the
// caller stores st.meta (putMeta) before its transaction ends. A stream of
// a schema 1 store keeps no counts.
func (st *streamTx) addedNext(key []byte) {
	if st.meta.Entries != nil && st.next.Get(key) == nil {
		st.meta.Entries.Next++
	}
}

func (st *streamTx) addedMoved(key []byte) {
	if st.meta.Entries != nil && st.moved.Get(key) == nil {
		st.meta.Entries.Moved++
	}
}

func (st *streamTx) removedMoved(key []byte) {
	if st.meta.Entries != nil && st.moved.Get(key) != nil {
		st.meta.Entries.Moved--
	}
}

// checkEntries compares the counts of a sealed stream with the next
// offsets and jump marks read (next, moved).
func (st *streamTx) checkEntries(next, moved int) error {
	if !st.sealed {
		return nil
	}
	if st.meta.Entries == nil {
		return fmt.Errorf("stream %q: its record has no entry counts: %w", st.name, ErrCorrupt)
	}
	if c := st.meta.Entries; c.Next != next || c.Moved != moved {
		return fmt.Errorf("stream %q holds %d next offsets and %d jump marks, its record says %d and %d: entries were lost: %w",
			st.name, next, moved, c.Next, c.Moved, ErrCorrupt)
	}
	return nil
}

// checkPlanned compares the planned batch the stream's record names with
// the batch log: pending is the batch LastBatch+1 when it is planned.
func (st *streamTx) checkPlanned(pending *Batch) error {
	if !st.sealed {
		return nil
	}
	var id uint64
	if pending != nil {
		id = pending.ID
	}
	if id != st.meta.Planned {
		return fmt.Errorf("stream %q: its record names planned batch %d, the log holds %d (0: none): %w",
			st.name, st.meta.Planned, id, ErrCorrupt)
	}
	return nil
}
