package tui

import (
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// maxKeptBytes caps how much of one key, value or header value the screen
// keeps in memory. Larger ones keep their first maxKeptBytes and their
// real size; the screen says so.
const maxKeptBytes = 1 << 20

// record is a record as the screen keeps it: its bytes copied out of the
// fetch buffer they came in (so a kept sample does not pin a whole fetch
// response), capped at maxKeptBytes each.
type record struct {
	offsets.Partition
	Offset    int64
	Timestamp time.Time
	// LogAppendTime: Timestamp is the broker's, not the producer's.
	LogAppendTime bool
	Key           field
	Value         field
	Headers       []header
	// Batch is the id of the batch the record came in (0: a replay).
	Batch uint64
	// Aborted is set for a record of an aborted transaction, which only
	// a stream reading uncommitted delivers (consumer.Batch.IsAborted).
	Aborted bool
	// decoded keeps what the schema decoder made of the key and value,
	// once the screen needed it (schema.go).
	decoded decodedFields
}

// field is a key or value: nil when absent, else its first bytes and size.
type field struct {
	Data []byte
	Size int // the real size; -1 when absent (null)
}

func (f field) null() bool      { return f.Size < 0 }
func (f field) truncated() bool { return f.Size > len(f.Data) }

type header struct {
	Key   []byte
	Value field
}

// newField copies b's first maxKeptBytes (capField).
func newField(b []byte) field { return capField(b, maxKeptBytes) }

// adoptField is newField for bytes the screen may keep as they are (a
// stream's own copy: consumer.Batch.Samples). Only bytes longer than
// maxKeptBytes are copied, their first maxKeptBytes, so the rest is freed.
func adoptField(b []byte) field {
	if len(b) > maxKeptBytes {
		return newField(b)
	}
	if b == nil {
		return field{Size: -1}
	}
	return field{Data: b, Size: len(b)}
}

// newRecord copies m; batch is the id of the batch it came in.
func newRecord(m *krecord.Record, batch uint64) *record { return keepRecord(m, batch, newField) }

// adoptRecord is newRecord for a record the screen may keep without a
// copy (adoptField): a batch's sample, which the stream copied already.
func adoptRecord(m *krecord.Record, batch uint64) *record { return keepRecord(m, batch, adoptField) }

func keepRecord(m *krecord.Record, batch uint64, keep func([]byte) field) *record {
	r := &record{
		Partition: offsets.Partition{Topic: m.Topic, Partition: m.Partition},
		Offset:    m.Offset, Timestamp: m.Timestamp, LogAppendTime: m.LogAppendTime, Batch: batch,
		Key: keep(m.Key), Value: keep(m.Value),
	}
	if len(m.Headers) > 0 {
		r.Headers = make([]header, 0, len(m.Headers))
	}
	for _, h := range m.Headers {
		k := keep(h.Key).Data
		if len(k) == 0 {
			k = nil // as before: an empty key is kept as nil
		}
		r.Headers = append(r.Headers, header{Key: k, Value: keep(h.Value)})
	}
	return r
}

// complete reports whether nothing of the record was cut.
func (r *record) complete() bool {
	if r.Key.truncated() || r.Value.truncated() {
		return false
	}
	for _, h := range r.Headers {
		if h.Value.truncated() {
			return false
		}
	}
	return true
}

// message rebuilds the record for JSON output.
func (r *record) message() *krecord.Record {
	m := &krecord.Record{Topic: r.Topic, Partition: r.Partition.Partition, Offset: r.Offset, Timestamp: r.Timestamp, LogAppendTime: r.LogAppendTime}
	if !r.Key.null() {
		m.Key = r.Key.Data
	}
	if !r.Value.null() {
		m.Value = r.Value.Data
	}
	for _, h := range r.Headers {
		var v []byte
		if !h.Value.null() {
			v = h.Value.Data
		}
		m.Headers = append(m.Headers, &krecord.Header{Key: h.Key, Value: v})
	}
	return m
}

// size is the memory a record holds, for budgets.
func (r *record) size() int {
	n := 128 + len(r.Key.Data) + len(r.Value.Data) + len(r.Topic)
	for _, h := range r.Headers {
		n += 48 + len(h.Key) + len(h.Value.Data)
	}
	return n
}

// containsFold is a case-insensitive (ASCII) substring test that does not
// allocate, so filtering MiB values on every key press stays cheap. The
// records filter reaches it through matches (match.go).
func containsFold[T string | []byte](b T, q string) bool {
	n := len(q)
	if n == 0 {
		return true
	}
	for i := 0; i+n <= len(b); i++ {
		j := 0
		for ; j < n; j++ {
			if lower(b[i+j]) != lower(q[j]) {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
