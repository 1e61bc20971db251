package offsets

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// verify reads the whole file before a writable open lets anything be
// written to it, so a damaged store is refused rather than written on top
// of: a bounded walk of the page tree (preflight, which makes the next
// step safe to run), bbolt's page check (tx.Check: reachable pages,
// freelist, key order),
// then every value of every stream decoded as a reader (offsets show,
// watch's start) would decode it. Values are decoded one at a time and
// dropped, so memory stays that of one value. Its cost grows with the
// file (BenchmarkOpenWritable); the batch and event logs are capped, and
// so is it.
func (s *Store) verify(db *bolt.DB) (err error) {
	defer s.recoverCorrupt(&err)
	// A damaged offset read through bbolt's memory map faults; make that a
	// panic recoverCorrupt turns into ErrCorrupt, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if err := preflight(s.path); err != nil {
		return s.damaged(err)
	}
	if _, err := repairMeta(s.path); err != nil {
		return s.damaged(err)
	}
	return db.View(func(tx *bolt.Tx) error {
		var first error
		for cerr := range tx.Check() { // drain: Check's goroutine sends every error
			if first == nil {
				first = cerr
			}
		}
		if first != nil && strings.HasPrefix(first.Error(), "panic: ") {
			return s.damaged(errors.New(unreadable(first)))
		}
		if first != nil {
			return s.damaged(first)
		}
		if err := checkStreamCount(tx); err != nil {
			return s.damaged(err)
		}
		return tx.Bucket(bucketStreams).ForEachBucket(func(k []byte) error {
			st, err := openStream(tx, string(k))
			if err != nil {
				return s.damaged(err)
			}
			if _, err := st.info(); err != nil {
				return s.damaged(err)
			}
			if _, err := st.pending(); err != nil {
				return s.damaged(err)
			}
			if err := decodeEach[Batch](st, st.batches, bucketBatches, "batch"); err != nil {
				return s.damaged(err)
			}
			if err := decodeEach[Event](st, st.events, bucketEvents, "event"); err != nil {
				return s.damaged(err)
			}
			return nil
		})
	})
}

// decodeEach decodes every value of the log bucket named bucket of st,
// one at a time; a value that fails its checksum is a ChecksumError.
func decodeEach[T any](st *streamTx, b *bolt.Bucket, bucket []byte, what string) error {
	return b.ForEach(func(k, v []byte) error {
		var x T
		if len(k) != 8 {
			return fmt.Errorf("stream %q: a log key of %d bytes: %w", st.name, len(k), ErrCorrupt)
		}
		v, err := st.unsealEntry(bucket, what, k, v)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("stream %q: entry %d: %w: %v", st.name, binary.BigEndian.Uint64(k), ErrCorrupt, err)
		}
		return nil
	})
}

// damaged is the error of a file verify found damaged.
func (s *Store) damaged(cause error) error {
	var sum *ChecksumError
	if errors.As(cause, &sum) {
		return &StoreError{Path: s.path, Kind: ErrCorrupt, Cause: cause,
			Msg: "stream " + QuoteName(sum.Stream) + ": " + sum.Error()}
	}
	return &StoreError{Path: s.path, Kind: ErrCorrupt, Cause: cause,
		Msg: fmt.Sprintf("is damaged (%v); kbatch writes nothing to it: move it away (its streams restart per --reset) or pass --store to use another file", cause)}
}
