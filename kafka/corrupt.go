package kafka

import (
	"errors"
	"fmt"
)

// DefaultMaxRecordBytes is how many bytes one record batch may take once
// decompressed, unless the client is told otherwise
// (ClientConfig.MaxRecordBytes): a record lies in one batch, so it is
// also the largest record kbatch reads. Kafka's own records are at most
// max.message.bytes (1 MiB by default, rarely above 100 MiB, compressed);
// a batch of a few MiB that expands to more than this is a compression
// bomb far more often than data.
const DefaultMaxRecordBytes = 64 << 20

// maxRecordBytesCap is the most MaxRecordBytes may be raised to: what a
// byte slice of one batch may hold on every platform kbatch runs on.
const maxRecordBytesCap = 1 << 30

// Limits bound what decoding one answer may take in memory.
type Limits struct {
	// Budget is how much memory (InMemory) the decoded records of the
	// answer may take: once they take that much, the answer's later
	// batches are left undecoded (Block.Next stops before them; they
	// are fetched again later). The answer's first batch is decoded
	// whatever its size, so a batch larger than the budget still makes
	// progress alone. NoBudget: no bound.
	Budget int64
	// MaxBatch is how many bytes one record batch may decompress to
	// (DefaultMaxRecordBytes when 0): a batch that would take more is a
	// CorruptBatchError with Limit set, and is never allocated whole.
	MaxBatch int64
}

// NoBudget is Limits.Budget for a decode without one.
const NoBudget int64 = 1<<63 - 1

func (l Limits) maxBatch() int {
	if l.MaxBatch <= 0 {
		return DefaultMaxRecordBytes
	}
	return int(min(l.MaxBatch, maxRecordBytesCap))
}

// CorruptBatchError is a record batch (or legacy message) of an answer
// that cannot be delivered: its CRC does not match, its lengths or
// varints run past its bytes, its records' offsets do not strictly
// increase inside [base, last], it does not decompress, or it would
// decompress to more than Limits.MaxBatch. Another fetch of the same
// offset brings the same bytes, so it is not retried: nothing of the
// batch is delivered, and a reader's position stays at Offset or below.
type CorruptBatchError struct {
	// Offset is the batch's base offset (a legacy message's offset).
	Offset int64
	// Reason says what is wrong with it.
	Reason string
	// Limit is set (the limit in bytes) when the batch is too large
	// rather than damaged: raising --max-record-bytes reads it.
	Limit int64
}

func (e *CorruptBatchError) Error() string {
	if e.Limit > 0 {
		return fmt.Sprintf("record batch at offset %d too large: %s, above the limit of %s (--max-record-bytes)", e.Offset, e.Reason, FormatBytes(e.Limit))
	}
	return fmt.Sprintf("corrupt record batch at offset %d: %s", e.Offset, e.Reason)
}

// IsCorrupt reports whether err is, or wraps, a CorruptBatchError, and
// returns it.
func IsCorrupt(err error) (*CorruptBatchError, bool) {
	var c *CorruptBatchError
	ok := errors.As(err, &c)
	return c, ok
}

// tooLargeError is what a decompressor returns when its output would pass
// its limit.
type tooLargeError struct {
	limit int
	claim int64 // what the batch claims, -1 when it did not say
}

func (e *tooLargeError) Error() string {
	if e.claim >= 0 {
		return fmt.Sprintf("it claims %d bytes decompressed", e.claim)
	}
	return fmt.Sprintf("it decompresses to more than %d bytes", e.limit)
}

// corrupt makes err, met decoding the batch at offset, a
// CorruptBatchError (as it is when it already is one).
func corrupt(offset int64, err error) error {
	if c, ok := IsCorrupt(err); ok {
		return c
	}
	var tl *tooLargeError
	if errors.As(err, &tl) {
		return &CorruptBatchError{Offset: offset, Reason: tl.Error(), Limit: int64(tl.limit)}
	}
	return &CorruptBatchError{Offset: offset, Reason: err.Error()}
}

// FormatBytes writes n in the largest binary unit it is a whole number
// of (64 MiB, 1536 KiB, 1000 B), as ParseBytes reads it.
func FormatBytes(n int64) string {
	for _, u := range byteUnits {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

var byteUnits = []struct {
	name string
	n    int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
