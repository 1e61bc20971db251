package kafka

import (
	"math"

	"github.com/kbatch-dev/kbatch/record"
)

// NoEnd is the until of DecodeRecords for a reader without an end (the
// stream).
const NoEnd int64 = math.MaxInt64

// Block is what one partition's fetch answer holds from a position up to
// an end. The stream and replay both read through it.
type Block struct {
	// Msgs are the deliverable records in [pos, until), in offset order:
	// no control records and, under read_committed, none of aborted
	// transactions. They are one slab per answer, and their byte slices
	// point into the answer, which is never reused.
	Msgs []record.Record
	// Bytes is the size of their keys, values and headers.
	Bytes int64
	// Headers counts their headers, each taking HeaderOverhead in memory
	// beside its bytes.
	Headers int64
	// Next is the position after the answer: one past the last offset of
	// its last complete batch, at most until, so transaction markers,
	// aborted batches and compacted gaps move it as records do; pos when
	// the answer held no complete batch.
	Next int64
	// Batches counts the complete batches (record batches, or legacy
	// message sets) in the answer.
	Batches int
	// Partial is set when the answer held only the start of a batch
	// larger than the fetch size: fetch again with more.
	Partial bool
	// Txn lists, under read_uncommitted only, the answer's transactional
	// batches and transaction markers in offset order. Kafka lists a
	// fetch's aborted transactions only to read_committed readers, so a
	// read_uncommitted reader learns that records were aborted from the
	// abort marker that follows them (see abortMarks).
	Txn []TxnMark
}

// TxnMark is a transactional record batch of a producer, [From, Until),
// or (Marker) the control batch at From that ends the producer's
// transaction: committed, or aborted (Abort).
type TxnMark struct {
	ProducerID  int64
	From, Until int64
	Marker      bool
	Abort       bool
}

// Memory is what the block's records take in memory once decoded: their
// bytes, decompressed, the message each is held in and their headers.
// Read-aheads count it, so that their bounds hold whatever the
// compression ratio.
func (d Block) Memory() int64 {
	return InMemory(int64(len(d.Msgs)), d.Bytes) + d.Headers*HeaderOverhead
}

// HeaderOverhead is what a decoded header takes in memory beside its
// bytes: its record.Header and the pointer to it. A header takes two
// bytes decompressed, so headers can take 28 times what their batch
// does: the limit on one batch (Limits.MaxBatch) counts them, and the
// records' RecordOverhead, too.
const HeaderOverhead = 56

// RecordOverhead is what a decoded record takes in memory beside its
// bytes: its record.Record and the pointer to it.
const RecordOverhead = 160

// InMemory is what n decoded records of bytes (record.Record.Bytes) take
// in memory: their bytes, decompressed, and RecordOverhead each. The
// stream's and replay's read-aheads count this, so their bounds hold
// whatever the records' compression ratio and size (docs/design.md §2.6).
func InMemory(n, bytes int64) int64 { return bytes + n*RecordOverhead }
