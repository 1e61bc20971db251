package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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
		return fmt.Sprintf("record batch at offset %d too large: %s (a larger --max-record-bytes reads it)", e.Offset, e.Reason)
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
	// decoded names what its records or headers take in memory once
	// decoded (claim), when that is what passes the limit.
	decoded string
}

func (e *tooLargeError) Error() string {
	if e.decoded != "" {
		return fmt.Sprintf("%s take %d bytes in memory once decoded, above the limit of %s", e.decoded, e.claim, FormatBytes(int64(e.limit)))
	}
	if e.claim >= 0 {
		return fmt.Sprintf("%d bytes decompressed, above the limit of %s", e.claim, FormatBytes(int64(e.limit)))
	}
	return fmt.Sprintf("more than %s decompressed", FormatBytes(int64(e.limit)))
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
// of (64MiB, 1536KiB, 1000B), as ParseBytes reads it.
func FormatBytes(n int64) string {
	for _, u := range byteUnits {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d%s", n/u.n, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

var byteUnits = []struct {
	name string
	n    int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// ParseBytes reads a size for MaxRecordBytes: a number of bytes, or one
// of KiB, MiB or GiB ("64MiB", "512 KiB"); at least 1 KiB, at most 1 GiB.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(t, u.name); ok {
			t, mult = strings.TrimSpace(rest), u.n
			break
		}
	}
	t = strings.TrimSpace(strings.TrimSuffix(t, "B"))
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err != nil || n < 0:
		return 0, fmt.Errorf("want a size like 64MiB, 512KiB or a number of bytes")
	case n > maxRecordBytesCap/mult || n*mult > maxRecordBytesCap:
		return 0, fmt.Errorf("at most %s", FormatBytes(maxRecordBytesCap))
	case n*mult < 1<<10:
		return 0, fmt.Errorf("at least 1 KiB")
	}
	return n * mult, nil
}
