package tui

import (
	"bytes"
	"sync"
	"sync/atomic"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// The tail view (t) shows every record as the stream reads it, not only
// the samples of batches. Records reach it through a Tail, the stream's
// tap (consumer.Config.Tap), which copies them only while the view is
// open: with the view closed a read costs one atomic load per chunk.
//
// Memory (docs/design.md §2.6): the screen keeps the last DefaultTailRecords
// records (--tail-records) and at most tailMaxBytes of them, whichever is
// less; each record keeps at most tailValueBytes of its value,
// tailKeyBytes of its key and tailHeaders headers of tailHeaderBytes
// (key and value each); the detail says when a value was cut. A paused
// view holds its own list of up to as many records, so the worst case is
// twice tailMaxBytes, 64 MiB.
const (
	DefaultTailRecords = 10_000
	MaxTailRecords     = 1_000_000
	tailMaxBytes       = 32 << 20
	tailValueBytes     = 4 << 10
	tailKeyBytes       = 512
	tailHeaders        = 8
	tailHeaderBytes    = 256
)

// Tail is the stream's tap for the tail view: Read copies records while
// the view is open and hands them to the screen, which takes them every
// frame. The zero value is not usable; see NewTail.
type Tail struct {
	max  int
	open atomic.Bool

	mu      sync.Mutex
	pending []*record // copied, not yet taken by the screen (at most max)
	bytes   int
	lost    int64 // dropped from pending before the screen took them
	notify  chan struct{}
}

// NewTail returns a tap that keeps up to records records for the screen
// (<= 0: DefaultTailRecords, capped at MaxTailRecords).
func NewTail(records int) *Tail {
	if records <= 0 {
		records = DefaultTailRecords
	}
	return &Tail{max: min(records, MaxTailRecords), notify: make(chan struct{}, 1)}
}

// Read implements consumer.Tap: it copies msgs (bounded per record) while
// the tail view is open and does nothing otherwise.
func (t *Tail) Read(msgs []*krecord.Record) {
	if !t.open.Load() {
		return
	}
	recs := copyTail(msgs)
	n := 0
	for _, r := range recs {
		n += r.size()
	}
	t.mu.Lock()
	t.pending = append(t.pending, recs...)
	t.bytes += n
	for len(t.pending) > t.max || t.bytes > tailMaxBytes && len(t.pending) > 1 {
		// The screen fell behind by a whole ring: the oldest go.
		t.bytes -= t.pending[0].size()
		t.pending[0] = nil
		t.pending = t.pending[1:]
		t.lost++
	}
	t.mu.Unlock()
	select {
	case t.notify <- struct{}{}:
	default:
	}
}

// setOpen starts or stops copying records.
func (t *Tail) setOpen(open bool) {
	t.open.Store(open)
	if !open {
		t.mu.Lock()
		t.pending, t.bytes = nil, 0
		t.mu.Unlock()
	}
}

// take returns the records copied since the last take and how many were
// dropped before the screen took them.
func (t *Tail) take() ([]*record, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	recs, lost := t.pending, t.lost
	t.pending, t.bytes, t.lost = nil, 0, 0
	return recs, lost
}

// copyTail copies a chunk of records with the tail's per-record bounds
// into one array of records and one of bytes, three allocations a chunk
// (and one per record with headers) instead of several a record: the tap
// runs on the stream's loop.
func copyTail(msgs []*krecord.Record) []*record {
	size, nh := 0, 0
	for _, m := range msgs {
		size += min(len(m.Key), tailKeyBytes) + min(len(m.Value), tailValueBytes)
		for j, h := range m.Headers {
			if j == tailHeaders {
				break
			}
			size += min(len(h.Key), tailHeaderBytes) + min(len(h.Value), tailHeaderBytes)
			nh++
		}
	}
	hdrs := make([]header, 0, nh)
	slab := make([]byte, 0, size)
	take := func(b []byte, limit int) field {
		if b == nil {
			return field{Size: -1}
		}
		n := min(len(b), limit)
		slab = append(slab, b[:n]...)
		return field{Data: slab[len(slab)-n : len(slab) : len(slab)], Size: len(b)}
	}
	arr := make([]record, len(msgs))
	out := make([]*record, len(msgs))
	for i, m := range msgs {
		r := &arr[i]
		r.Topic, r.Partition.Partition = m.Topic, m.Partition
		r.Offset, r.Timestamp, r.LogAppendTime = m.Offset, m.Timestamp, m.LogAppendTime
		r.Key, r.Value = take(m.Key, tailKeyBytes), take(m.Value, tailValueBytes)
		from := len(hdrs)
		for j, h := range m.Headers {
			if j == tailHeaders {
				break
			}
			k := take(h.Key, tailHeaderBytes)
			hdrs = append(hdrs, header{Key: k.Data, Value: take(h.Value, tailHeaderBytes)})
		}
		if len(hdrs) > from {
			r.Headers = hdrs[from:len(hdrs):len(hdrs)]
		}
		out[i] = r
	}
	return out
}

// newTailRecord copies m with the tail's per-record bounds.
func newTailRecord(m *krecord.Record) *record {
	r := &record{
		Offset: m.Offset, Timestamp: m.Timestamp, LogAppendTime: m.LogAppendTime,
		Key: capField(m.Key, tailKeyBytes), Value: capField(m.Value, tailValueBytes),
	}
	r.Topic, r.Partition.Partition = m.Topic, m.Partition
	for i, h := range m.Headers {
		if i == tailHeaders {
			break
		}
		r.Headers = append(r.Headers, header{Key: append([]byte(nil), h.Key[:min(len(h.Key), tailHeaderBytes)]...), Value: capField(h.Value, tailHeaderBytes)})
	}
	return r
}

// capField is newField keeping at most limit bytes.
func capField(b []byte, limit int) field {
	if b == nil {
		return field{Size: -1}
	}
	n := min(len(b), limit)
	return field{Data: bytes.Clone(b[:n]), Size: len(b)}
}

// tailRing is the records the screen keeps of the tail, oldest first:
// the last max records and at most maxBytes.
type tailRing struct {
	recs     []*record
	bytes    int
	max      int
	maxBytes int
	total    int64 // records ever added
	lost     int64 // records the tap dropped because the screen lagged
}

func newTailRing(records int) *tailRing {
	if records <= 0 {
		records = DefaultTailRecords
	}
	return &tailRing{max: min(records, MaxTailRecords), maxBytes: tailMaxBytes}
}

// add appends recs and drops the oldest beyond the bounds; it returns how
// many were dropped from the front.
func (r *tailRing) add(recs []*record) int {
	for _, x := range recs {
		r.bytes += x.size()
	}
	r.recs = append(r.recs, recs...)
	r.total += int64(len(recs))
	drop := 0
	for len(r.recs)-drop > r.max || r.bytes > r.maxBytes && len(r.recs)-drop > 1 {
		r.bytes -= r.recs[drop].size()
		drop++
	}
	if drop > 0 {
		clear(r.recs[:drop]) // not pinned by the array's front
		r.recs = r.recs[drop:]
	}
	return drop
}
