package offsets

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// File layout (schema 2):
//
//	kbatch/                 app = "kbatch", schema = "2"
//	streams/NAME/meta       JSON streamMeta
//	streams/NAME/next/      topic 0x00 uint32be(partition) → uint64be(next offset)
//	streams/NAME/batches/   uint64be(batch id) → JSON Batch
//	streams/NAME/events/    uint64be(sequence) → JSON Event
//	streams/NAME/moved/     topic 0x00 uint32be(partition) → jump code
//
// Every value under streams/NAME is sealed with a checksum (store_seal.go);
// schema 1 is the same layout without the seals.
//
// moved holds the partitions whose next offset was moved by something
// other than an ack (data loss or a reset at start, `offsets set`, a
// seek) since their last acked range: the next watch marks its first
// range of them as a jump with the code. Schema 1 stores made before it
// have no moved bucket until a stream is written, and readers take none
// as empty; sealing a store (schema 2) gives every stream one.
//
// Big-endian keys make cursor order numeric order, so the newest batch or
// event is Cursor.Last and pruning walks from Cursor.First.
var (
	bucketMeta    = []byte("kbatch")
	bucketStreams = []byte("streams")
	bucketNext    = []byte("next")
	bucketBatches = []byte("batches")
	bucketEvents  = []byte("events")
	bucketMoved   = []byte("moved")
	keyApp        = []byte("app")
	keySchema     = []byte("schema")
	keyStreamMeta = []byte("meta")
)

// streamMeta is the JSON value of streams/NAME/meta.
type streamMeta struct {
	// ClusterID is the id of the cluster the stream was last run against
	// ("" when unknown: an older store, or a cluster too old to tell).
	ClusterID string    `json:"cluster_id,omitempty"`
	Brokers   []string  `json:"brokers"`
	Topics    []string  `json:"topics"`
	LastBatch uint64    `json:"last_batch"`
	Updated   time.Time `json:"updated"`
	// Seeks are seeks made while batches cut before them were not yet
	// acked; see Store.Seek.
	Seeks []seekMark `json:"seeks,omitempty"`
	// StartChoice is the answer to the topic picker's "where to start"
	// the last time this stream was picked; see Store.SetStartChoice.
	StartChoice string `json:"start_choice,omitempty"`
	// TopicIDs are the stream's topics' ids (KIP-516) as last seen, by
	// name; a topic the cluster gave none for is missing.
	TopicIDs map[string]string `json:"topic_ids,omitempty"`
	// Entries counts next offsets and jump marks, and Planned is the id
	// of the batch planned and not acked (0: none); schema 2 only, see
	// store_census.go.
	Entries *entryCounts `json:"entries,omitempty"`
	Planned uint64       `json:"planned,omitempty"`
}

// seekMark is a seek of Partition to Offset made while batches up to
// Through were cut and not acked: the ack of each of them stores Offset
// again after moving the partition to the batch's Until.
type seekMark struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Through   uint64 `json:"through"`
}

// streamTx is one stream's buckets inside a transaction.
type streamTx struct {
	name    string
	bucket  *bolt.Bucket
	meta    streamMeta
	next    *bolt.Bucket
	batches *bolt.Bucket
	events  *bolt.Bucket
	moved   *bolt.Bucket // nil in a store that predates it, read-only
	sealed  bool         // values carry seals (store_seal.go)
}

// openStream returns the stream's buckets, or nil when there is no such
// stream.
func openStream(tx *bolt.Tx, name string) (*streamTx, error) {
	b := tx.Bucket(bucketStreams).Bucket([]byte(name))
	if b == nil {
		return nil, nil
	}
	st := &streamTx{name: name, bucket: b, next: b.Bucket(bucketNext),
		batches: b.Bucket(bucketBatches), events: b.Bucket(bucketEvents), moved: b.Bucket(bucketMoved),
		sealed: storeSchema(tx) >= sealedSchema}
	// A schema 2 stream always has its moved bucket: one gone is a
	// damaged name or flag, and reading none would drop jump marks.
	if st.next == nil || st.batches == nil || st.events == nil || (st.sealed && st.moved == nil) {
		return nil, fmt.Errorf("stream %q is missing a bucket: %w", name, ErrCorrupt)
	}
	v, ok := st.unseal(nil, keyStreamMeta, b.Get(keyStreamMeta))
	if !ok {
		return nil, &ChecksumError{Stream: name, What: "the stream's record (brokers, topics, last batch)"}
	}
	if err := json.Unmarshal(v, &st.meta); err != nil {
		return nil, fmt.Errorf("stream %q meta: %w: %v", name, ErrCorrupt, err)
	}
	return st, nil
}

func (st *streamTx) putMeta() error {
	v, err := json.Marshal(st.meta)
	if err != nil {
		return err
	}
	return st.bucket.Put(keyStreamMeta, st.seal(nil, keyStreamMeta, v))
}

// markMoved records that p's next offset moved for code without an ack,
// creating the moved bucket in a store that predates it.
func (st *streamTx) markMoved(p Partition, code string) error {
	if st.moved == nil {
		b, err := st.bucket.CreateBucketIfNotExists(bucketMoved)
		if err != nil {
			return err
		}
		st.moved = b
	}
	k := partitionKey(p)
	st.addedMoved(k)
	return st.moved.Put(k, st.seal(bucketMoved, k, []byte(code)))
}

// movedDamaged reports whether the jump mark kept under key fails its
// checksum.
func (st *streamTx) movedDamaged(key []byte) bool {
	if st.moved == nil {
		return false
	}
	v := st.moved.Get(key)
	if v == nil {
		return false
	}
	_, ok := st.unseal(bucketMoved, key, v)
	return !ok
}

// putNext stores off as p's next offset.
func (st *streamTx) putNext(p Partition, off int64) error {
	k := partitionKey(p)
	st.addedNext(k)
	return st.next.Put(k, st.seal(bucketNext, k, offsetValue(off)))
}

// clearMoved forgets the moves of the partitions of ranges: an acked
// range starts where the jump was.
func (st *streamTx) clearMoved(ranges []BatchRange) error {
	if st.moved == nil {
		return nil
	}
	if k, _ := st.moved.Cursor().First(); k == nil {
		return nil // the usual case: nothing moved since the last acks
	}
	for _, r := range ranges {
		st.removedMoved(partitionKey(r.Partition))
		if err := st.moved.Delete(partitionKey(r.Partition)); err != nil {
			return err
		}
	}
	return nil
}

// prune deletes the entries of a log bucket whose id is below keepFrom.
func prune(b *bolt.Bucket, keepFrom uint64) error {
	c := b.Cursor()
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) < keepFrom; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// keepFrom is the lowest id kept when newest is the newest of a log capped
// at limit entries.
func keepFrom(newest uint64, limit int) uint64 {
	if newest < uint64(limit) {
		return 0
	}
	return newest - uint64(limit) + 1
}

// newestFirst decodes up to limit values (all when limit ≤ 0) of the log
// bucket named bucket of st, newest first; what names an entry in errors
// ("batch", "event").
func newestFirst[T any](st *streamTx, b *bolt.Bucket, bucket []byte, what string, limit int) ([]T, error) {
	var out []T
	c := b.Cursor()
	for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
		var x T
		v, err := st.unsealEntry(bucket, what, k, v)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, fmt.Errorf("entry %d: %w: %v", binary.BigEndian.Uint64(k), ErrCorrupt, err)
		}
		out = append(out, x)
	}
	return out, nil
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

func offsetValue(off int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(off)) }

// partitionKey is topic, 0x00, big-endian partition; topics never hold a
// 0x00, and non-negative partitions sort numerically.
func partitionKey(p Partition) []byte {
	return appendPartitionKey(make([]byte, 0, len(p.Topic)+5), p)
}

func appendPartitionKey(k []byte, p Partition) []byte {
	k = append(k, p.Topic...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(p.Partition))
}

func decodePartitionKey(k []byte) (Partition, bool) {
	i := bytes.IndexByte(k, 0)
	if i < 0 || len(k)-i-1 != 4 {
		return Partition{}, false
	}
	return Partition{Topic: string(k[:i]), Partition: int32(binary.BigEndian.Uint32(k[i+1:]))}, true
}

// unsealEntry is the payload of the log entry k of bucket, or a
// ChecksumError naming it (what: "batch", "event") when its seal fails.
func (st *streamTx) unsealEntry(bucket []byte, what string, k, v []byte) ([]byte, error) {
	payload, ok := st.unseal(bucket, k, v)
	if !ok {
		id := "?"
		if len(k) == 8 {
			id = fmt.Sprint(binary.BigEndian.Uint64(k))
		}
		return nil, &ChecksumError{Stream: st.name, What: what + " " + id}
	}
	return payload, nil
}
