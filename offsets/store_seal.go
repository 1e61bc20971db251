package offsets

import (
	"encoding/binary"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"
)

// Every value a stream keeps (its meta record, next offsets, batches,
// events, jump marks) is sealed from schema 2 on: the value's bytes are
// followed by a CRC-32C of the stream's name, the sub-bucket's name, the
// key and the value's bytes:
//
//	value = payload ‖ uint32be(crc32c(stream 0x00 bucket 0x00 key payload))
//
// So one changed byte anywhere in a value, in its key, or in the name of
// its stream is seen when the value is read, and a value never moves to
// another key or stream unnoticed. bbolt checks its own pages and meta
// pages, not the values in them: an unsealed next offset edited from 1017
// to 1273 reads as stored, and the 256 records between are never
// delivered.
//
// A schema 1 store (made before seals) is read as it is; the first
// writable open seals every value and writes schema 2 in one transaction
// (migrate). A CRC-32C catches every error burst up to 32 bits, hence every
// single-byte edit, and all but 1 in 2^32 of the others.
const (
	sealedSchema = 2
	sealSize     = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealSum is the checksum of payload stored under key in bucket of stream.
// The bucket of a stream's meta record is "".
func sealSum(stream string, bucket, key, payload []byte) uint32 {
	h := crc32.Update(0, castagnoli, []byte(stream))
	h = crc32.Update(h, castagnoli, []byte{0})
	h = crc32.Update(h, castagnoli, bucket)
	h = crc32.Update(h, castagnoli, []byte{0})
	h = crc32.Update(h, castagnoli, key)
	return crc32.Update(h, castagnoli, payload)
}

// appendSealed appends payload and its seal to dst.
func appendSealed(dst []byte, stream string, bucket, key, payload []byte) []byte {
	dst = append(dst, payload...)
	return binary.BigEndian.AppendUint32(dst, sealSum(stream, bucket, key, payload))
}

// unsealValue returns the payload of v and whether its seal holds. A value
// too short to hold a seal has none: its payload is v, and ok is false.
func unsealValue(stream string, bucket, key, v []byte) (payload []byte, ok bool) {
	if len(v) < sealSize {
		return v, false
	}
	payload = v[:len(v)-sealSize]
	return payload, binary.BigEndian.Uint32(v[len(payload):]) == sealSum(stream, bucket, key, payload)
}

// storeSchema is the schema version a transaction sees; 0 when it is not
// a number.
func storeSchema(tx *bolt.Tx) int {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0
	}
	n := 0
	for _, c := range meta.Get(keySchema) {
		if c < '0' || c > '9' || n > 1<<20 {
			return 0
		}
		n = 10*n + int(c-'0')
	}
	return n
}

// seal is v as st stores it under key in bucket: sealed from schema 2 on.
func (st *streamTx) seal(bucket, key, v []byte) []byte {
	if !st.sealed {
		return v
	}
	return appendSealed(make([]byte, 0, len(v)+sealSize), st.name, bucket, key, v)
}

// unseal is the payload of a value st read under key in bucket, and whether
// it may be used: always in a schema 1 store, else when its seal holds.
func (st *streamTx) unseal(bucket, key, v []byte) ([]byte, bool) {
	if !st.sealed {
		return v, true
	}
	return unsealValue(st.name, bucket, key, v)
}

// migrate seals every value of every stream of a schema 1 store and writes
// schema 2, in one transaction; a store already sealed is left as it is,
// without a write. Open calls it after verify, so the values it seals are
// the ones a reader decoded.
func (s *Store) migrate(db *bolt.DB) (err error) {
	defer s.recoverCorrupt(&err)
	var sealed bool
	if err := db.View(func(tx *bolt.Tx) error { sealed = storeSchema(tx) >= sealedSchema; return nil }); err != nil || sealed {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		streams := tx.Bucket(bucketStreams)
		var names [][]byte
		if err := streams.ForEachBucket(func(k []byte) error {
			names = append(names, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		for _, name := range names {
			b := streams.Bucket(name)
			if _, err := b.CreateBucketIfNotExists(bucketMoved); err != nil {
				return err // schema 2 streams always have one; see openStream
			}
			if err := countStream(tx, string(name)); err != nil {
				return err
			}
			if err := sealAll(b, string(name), nil, func(k []byte) bool { return string(k) == string(keyStreamMeta) }); err != nil {
				return err
			}
			for _, sub := range [][]byte{bucketNext, bucketBatches, bucketEvents, bucketMoved} {
				if sb := b.Bucket(sub); sb != nil {
					if err := sealAll(sb, string(name), sub, func([]byte) bool { return true }); err != nil {
						return err
					}
				}
			}
		}
		if err := putStreamCount(tx, uint64(len(names))); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, []byte{'0' + sealedSchema})
	})
	if err != nil {
		return &StoreError{Path: s.path, Cause: err, Msg: "cannot be upgraded to checksummed values: " + err.Error()}
	}
	return nil
}

// sealAll rewrites the values of b that want picks (not sub-buckets) with
// their seals. Values are copied out first: bbolt does not allow a Put
// while ForEach walks the bucket.
func sealAll(b *bolt.Bucket, stream string, bucket []byte, want func(k []byte) bool) error {
	type kv struct{ k, v []byte }
	var all []kv
	if err := b.ForEach(func(k, v []byte) error {
		if v != nil && want(k) {
			all = append(all, kv{append([]byte(nil), k...), appendSealed(nil, stream, bucket, k, v)})
		}
		return nil
	}); err != nil {
		return err
	}
	for _, e := range all {
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

// countStream writes the counts of a schema 1 stream into its record
// (still unsealed): its next offsets, jump marks and planned batch.
func countStream(tx *bolt.Tx, name string) error {
	st, err := openStream(tx, name) // schema 1: read as it is
	if err != nil {
		return err
	}
	st.meta.Entries = &entryCounts{Next: countEntries(st.next), Moved: countEntries(st.moved)}
	pending, err := st.pending()
	if err != nil {
		return err
	}
	st.meta.Planned = 0
	if pending != nil {
		st.meta.Planned = pending.ID
	}
	return st.putMeta()
}
