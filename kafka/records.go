package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// This file reads the records of a Fetch answer straight from its bytes:
// record batches (message format v2, Kafka 0.11 and later) and the
// message sets of formats v0 and v1 before them, every codec. kbatch
// reads them itself, not through sarama, because sarama decodes every
// record into a heap object of its own (and every header into another),
// which kbatch would then copy into its slab: twice the work of the
// fastest clients on small records (BENCHMARKS.md). Here each
// record is written once, into the answer's slab, and its key, value and
// headers point into the answer or into its batch's decompressed bytes.

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	// errTruncated is a record batch or message whose declared sizes run
	// past its bytes: a malformed answer.
	errTruncated = errors.New("truncated record batch")
	// errCRC is a batch or message whose checksum does not match its
	// bytes.
	errCRC = errors.New("CRC mismatch")
)

// batchHeader is the size of a v2 record batch's header: base offset (8),
// length (4), partition leader epoch (4), magic (1), CRC (4), attributes
// (2), last offset delta (4), first and max timestamp (8+8), producer id
// (8), producer epoch (2), base sequence (4), record count (4).
const batchHeader = 61

// batch is a v2 record batch's header and its records' bytes.
type batch struct {
	base           int64
	attrs          int16
	lastDelta      int32
	firstTS, maxTS int64
	producerID     int64
	count          int32
	records        []byte // possibly compressed
	codec          int8
	logAppend      bool
	transactional  bool
	control        bool
}

func (b *batch) last() int64 { return b.base + int64(b.lastDelta) }

// entry is the next entry of an answer's bytes: its size, its magic
// (2 for a record batch, 0 or 1 for a legacy message) and whether the
// bytes hold all of it. Kafka may end an answer with the start of an
// entry, cut at the fetch size.
func entry(in []byte) (size int, magic int8, whole bool) {
	if len(in) < 17 {
		return 0, 0, false
	}
	l := int32(binary.BigEndian.Uint32(in[8:]))
	size = 12 + int(l)
	if l < 0 || size > len(in) {
		return size, int8(in[16]), false
	}
	return size, int8(in[16]), true
}

// parseBatch reads the v2 record batch that in holds whole, checking its
// CRC-32C as every Kafka client does.
func parseBatch(in []byte) (batch, error) {
	var b batch
	b.base = int64(binary.BigEndian.Uint64(in))
	if len(in) < batchHeader {
		return b, errTruncated
	}
	if crc32.Checksum(in[21:], castagnoli) != binary.BigEndian.Uint32(in[17:]) {
		return b, errCRC
	}
	b.attrs = int16(binary.BigEndian.Uint16(in[21:]))
	b.lastDelta = int32(binary.BigEndian.Uint32(in[23:]))
	b.firstTS = int64(binary.BigEndian.Uint64(in[27:]))
	b.maxTS = int64(binary.BigEndian.Uint64(in[35:]))
	b.producerID = int64(binary.BigEndian.Uint64(in[43:]))
	b.count = int32(binary.BigEndian.Uint32(in[57:]))
	b.records = in[batchHeader:]
	b.codec = int8(b.attrs & 7)
	b.logAppend = b.attrs&8 != 0
	b.transactional = b.attrs&0x10 != 0
	b.control = b.attrs&0x20 != 0
	switch {
	case b.count < 0:
		return b, fmt.Errorf("%d records", b.count)
	case b.lastDelta < 0:
		return b, fmt.Errorf("last offset delta %d", b.lastDelta)
	}
	return b, nil
}

// minRecord is the fewest bytes a v2 record takes: its length,
// attributes, timestamp and offset deltas, key and value lengths and
// header count, one byte each. maxExpansion bounds how many times larger
// than the answer a slab is sized before the records are decoded (a
// batch claiming more records than its bytes can hold makes the slab
// grow as it is filled, not a huge allocation up front).
const (
	minRecord    = 7
	maxExpansion = 8
)

// countRecords counts the records of the answer's whole entries from
// their headers, without decompressing anything: a v2 batch's record
// count, one per legacy message (a compressed legacy wrapper counts as
// one; the slab grows for the rest). It also counts the answer's entries.
func countRecords(in []byte) (records, entries int) {
	for len(in) > 0 {
		size, magic, whole := entry(in)
		if !whole {
			break
		}
		entries++
		if magic == 2 && size >= batchHeader {
			// The count is not checked yet (the CRC is, later): it only
			// sizes the slab, and a record takes at least minRecord bytes
			// uncompressed, at most maxExpansion times that compressed.
			n := max(int(int32(binary.BigEndian.Uint32(in[57:]))), 0)
			records += min(n, (size-batchHeader)*maxExpansion/minRecord+1)
		} else {
			records++
		}
		in = in[size:]
	}
	return records, entries
}

// DecodeRecords decodes one partition's records as a Fetch answer holds
// them (raw), read from offset pos, keeping the records in [pos, until).
// Positions advance by whole batches, using each batch's last offset.
// Under read_committed (committed) the batches of aborted transactions
// are skipped as Kafka's Java consumer does: a producer id is aborted
// from the first offset of an aborted transaction listed in the answer
// (aborted) until its abort marker. It decodes without a budget and
// with DefaultMaxRecordBytes (DecodeLimited).
func DecodeRecords(raw []byte, aborted []AbortedTxn, p offsets.Partition, pos, until int64, committed bool) (Block, error) {
	return DecodeLimited(raw, aborted, p, pos, until, committed, Limits{Budget: NoBudget})
}

// DecodeLimited is DecodeRecords within lim. A batch that cannot be
// delivered (see CorruptBatchError) ends the decode with that error; the
// Block then holds what the batches before it gave, and its Next is at
// most the bad batch's base offset: nothing of the bad batch, and
// nothing after it, is delivered.
func DecodeLimited(raw []byte, aborted []AbortedTxn, p offsets.Partition, pos, until int64, committed bool, lim Limits) (Block, error) {
	d := Block{Next: pos}
	if n, _ := countRecords(raw); n > 0 {
		d.Msgs = make([]record.Record, 0, n) // one slab per answer
	}
	var hs headerSlab
	ab := newAborts(aborted, committed)
	err := d.decode(raw, &ab, &hs, p, pos, until, committed, lim)
	d.Next = min(d.Next, until) // a batch can run past the range
	return d, err
}

func (d *Block) decode(raw []byte, ab *aborts, hs *headerSlab, p offsets.Partition, pos, until int64, committed bool, lim Limits) error {
	maxBatch := lim.maxBatch()
	for in := raw; len(in) > 0; {
		size, magic, whole := entry(in)
		if !whole {
			d.Partial = d.Batches == 0
			return nil
		}
		if d.Batches > 0 && d.Memory() >= lim.Budget {
			// The answer took its budget: the rest is fetched again
			// once there is room.
			return nil
		}
		one := in[:size]
		in = in[size:]
		// What the answer held before this batch, so that a bad batch
		// leaves nothing of itself behind.
		msgs, bytes, headers, next, txn, batches := len(d.Msgs), d.Bytes, d.Headers, d.Next, len(d.Txn), d.Batches
		done, err := d.decodeEntry(one, magic, ab, hs, p, pos, until, committed, maxBatch)
		if err != nil {
			clear(d.Msgs[msgs:])
			d.Msgs, d.Bytes, d.Headers, d.Next, d.Txn, d.Batches = d.Msgs[:msgs], bytes, headers, next, d.Txn[:txn], batches
			return err
		}
		if done {
			return nil
		}
	}
	return nil
}

// decodeEntry decodes one whole entry of an answer, a record batch
// (magic 2) or a legacy message; done when until is reached. Its error is
// a CorruptBatchError.
func (d *Block) decodeEntry(one []byte, magic int8, ab *aborts, hs *headerSlab, p offsets.Partition, pos, until int64, committed bool, maxBatch int) (bool, error) {
	if magic < 2 {
		done, err := d.decodeLegacy(one, p, pos, until, maxBatch)
		if err != nil {
			return false, corrupt(int64(binary.BigEndian.Uint64(one)), err)
		}
		return done, nil
	}
	b, err := parseBatch(one)
	if err != nil {
		return false, corrupt(b.base, err)
	}
	if b.base >= until {
		// Nothing lies between the previous batch and this one: the
		// range is done.
		d.Next = until
		return true, nil
	}
	d.Batches++
	floor := d.Next // records below it came in an earlier batch of the answer
	d.Next = max(d.Next, offsets.Next(b.last()))
	if !committed && b.transactional {
		m := TxnMark{ProducerID: b.producerID, From: b.base, Until: offsets.Next(b.last()), Marker: b.control}
		if b.control {
			m.Abort = isAbortMarker(b.records)
		}
		d.Txn = append(d.Txn, m)
	}
	if ab.skip(&b) {
		return false, nil
	}
	if n := int64(b.count) * RecordOverhead; n > int64(maxBatch) {
		return false, corrupt(b.base, &tooLargeError{limit: maxBatch, claim: n, decoded: fmt.Sprintf("its %d records", b.count)})
	}
	recs := b.records
	if b.codec != 0 {
		if recs, err = decompress(b.codec, b.records, maxBatch); err != nil {
			return false, corrupt(b.base, err)
		}
	} else if len(recs) > maxBatch {
		return false, corrupt(b.base, &tooLargeError{limit: maxBatch, claim: int64(len(recs))})
	}
	msgs, bytes := len(d.Msgs), d.Bytes
	done, err := d.decodeBatch(&b, recs, hs, p, max(pos, floor), until, maxBatch)
	if err != nil {
		return false, corrupt(b.base, err)
	}
	if b.codec != 0 {
		d.own(msgs, bytes, len(recs))
	}
	return done, nil
}

// own gives the records the decoder added from index msgs (and bytes
// counted before them) bytes of their own when they point into a
// decompressed buffer of size bytes more than twice what they are
// counted for: records skipped in it (before the position, or covered by
// an earlier batch) are counted nowhere, and would keep it whole.
func (d *Block) own(msgs int, bytes int64, size int) {
	added := d.Bytes - bytes
	if int64(size) <= 2*InMemory(int64(len(d.Msgs)-msgs), added) {
		return
	}
	buf := make([]byte, 0, added)
	cp := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		buf = append(buf, b...)
		return buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	for i := msgs; i < len(d.Msgs); i++ {
		m := &d.Msgs[i]
		m.Key, m.Value = cp(m.Key), cp(m.Value)
		for _, h := range m.Headers {
			h.Key, h.Value = cp(h.Key), cp(h.Value)
		}
	}
}

// grow appends a zero record to the slab and returns it.
func (d *Block) grow() *record.Record {
	d.Msgs = append(d.Msgs, record.Record{})
	return &d.Msgs[len(d.Msgs)-1]
}

// decodeBatch appends the records of b (in, decompressed) in [pos, until)
// to the slab; done when until is reached. pos is also past every offset
// an earlier batch of the answer covered, so a broker that repeats
// offsets does not deliver one twice. A record's timestamp is the
// batch's max timestamp under LogAppendTime, else the batch's first
// timestamp plus the record's delta, as Kafka wrote them (the first
// timestamp is the first record's, -1 when that has none); negative
// times (-1 is Kafka's "no timestamp") are left zero.
func (d *Block) decodeBatch(b *batch, in []byte, hs *headerSlab, p offsets.Partition, pos, until int64, maxBatch int) (bool, error) {
	done := false
	headers := int64(0) // in the batch, up to maxBatch with its records
	prev := b.base - 1  // the offset of the record before, inside the batch
	if int64(b.count) > int64(len(in)/minRecord) {
		return false, fmt.Errorf("%d records claimed in %d bytes: %w", b.count, len(in), errTruncated)
	}
	for i := int32(0); i < b.count; i++ {
		l, n, err := varint(in)
		if err != nil || l < 0 || l > int64(len(in)-n) {
			return false, errTruncated
		}
		r := in[n : n+int(l)]
		in = in[n+int(l):]
		if len(r) < 1 {
			return false, errTruncated
		}
		r = r[1:] // attributes, unused
		tsd, n, err := varint(r)
		if err != nil {
			return false, err
		}
		r = r[n:]
		od, n, err := varint(r)
		if err != nil {
			return false, err
		}
		r = r[n:]
		o := b.base + od
		if od < 0 || o > b.last() {
			return false, fmt.Errorf("record at offset delta %d outside the batch (last %d)", od, b.last())
		}
		if o <= prev {
			return false, fmt.Errorf("record at offset %d after offset %d: offsets inside a batch must increase", o, prev)
		}
		prev = o
		if o < pos {
			continue // before the range, or past already in an earlier batch
		}
		if o >= until {
			done = true
			break
		}
		m := d.grow()
		m.Topic, m.Partition, m.Offset = p.Topic, p.Partition, o
		t := b.firstTS + tsd
		if b.logAppend {
			t = b.maxTS
		}
		m.LogAppendTime = b.logAppend
		if t >= 0 {
			m.Timestamp = time.UnixMilli(t)
		}
		if m.Key, n, err = bytesField(r); err != nil {
			return false, err
		}
		r = r[n:]
		if m.Value, n, err = bytesField(r); err != nil {
			return false, err
		}
		r = r[n:]
		nh, n, err := varint(r)
		if err != nil || nh < 0 || nh > int64(len(r)/2) { // a header takes two bytes at least
			return false, errTruncated
		}
		r = r[n:]
		if headers += nh; headers*HeaderOverhead+int64(b.count)*RecordOverhead > int64(maxBatch) {
			return false, &tooLargeError{limit: maxBatch, claim: headers*HeaderOverhead + int64(b.count)*RecordOverhead,
				decoded: fmt.Sprintf("its %d records and %d headers", b.count, headers)}
		}
		d.Headers += nh
		size := int64(len(m.Key) + len(m.Value))
		if nh > 0 {
			vals, ptrs := hs.take(int(nh), int(nh)*int(b.count-i))
			for j := range vals {
				h := &vals[j]
				if h.Key, n, err = bytesField(r); err != nil {
					return false, err
				}
				r = r[n:]
				if h.Value, n, err = bytesField(r); err != nil {
					return false, err
				}
				r = r[n:]
				size += int64(len(h.Key) + len(h.Value))
			}
			m.Headers = ptrs
		}
		// Bytes past a record's fields, or past the batch's records,
		// would be held by the records without being counted against
		// the budget (Kafka's Java client calls both corrupt).
		if len(r) > 0 {
			return false, fmt.Errorf("record at offset %d: %d bytes past its fields", o, len(r))
		}
		d.Bytes += size
	}
	if !done && len(in) > 0 {
		return false, fmt.Errorf("%d bytes past the batch's %d records", len(in), b.count)
	}
	return done, nil
}

// headerSlab hands out records' headers from chunks shared by many
// records; a chunk is never moved, so pointers into it stay valid.
type headerSlab struct {
	vals []record.Header
	ptrs []*record.Header
}

// take returns k headers and their pointers; hint is how many the rest of
// the batch may need, the size of a new chunk.
func (s *headerSlab) take(k, hint int) ([]record.Header, []*record.Header) {
	if cap(s.vals)-len(s.vals) < k {
		n := min(max(k, hint), max(k, 1<<16))
		s.vals = make([]record.Header, 0, n)
		s.ptrs = make([]*record.Header, 0, n)
	}
	v := s.vals[len(s.vals) : len(s.vals)+k]
	pp := s.ptrs[len(s.ptrs) : len(s.ptrs)+k : len(s.ptrs)+k]
	s.vals = s.vals[:len(s.vals)+k]
	s.ptrs = s.ptrs[:len(s.ptrs)+k]
	for i := range v {
		pp[i] = &v[i]
	}
	return v, pp
}

// varint reads a zig-zag varint, the integers of a v2 record.
func varint(in []byte) (int64, int, error) {
	if len(in) > 0 && in[0] < 0x80 {
		u := uint64(in[0])
		return int64(u>>1) ^ -int64(u&1), 1, nil
	}
	v, n := binary.Varint(in)
	if n <= 0 {
		return 0, 0, errTruncated
	}
	return v, n, nil
}

// bytesField reads a varint length and that many bytes (nil for -1). The
// result's capacity ends with it, so an append copies.
func bytesField(in []byte) ([]byte, int, error) {
	l, n, err := varint(in)
	if err != nil {
		return nil, 0, err
	}
	if l < 0 {
		return nil, n, nil
	}
	if l > int64(len(in)-n) {
		return nil, 0, errTruncated
	}
	end := n + int(l)
	return in[n:end:end], end, nil
}

// isAbortMarker reports whether a control batch's records (control
// batches are never compressed) hold an ABORT marker: its first record's
// key is version int16, type int16 (0 abort, 1 commit).
func isAbortMarker(recs []byte) bool {
	_, n, err := varint(recs) // the record's length
	if err != nil || len(recs) < n+1 {
		return false
	}
	r := recs[n+1:] // and its attributes
	for range 2 {   // timestamp and offset deltas
		_, n, err := varint(r)
		if err != nil {
			return false
		}
		r = r[n:]
	}
	k, _, err := bytesField(r)
	return err == nil && len(k) >= 4 && binary.BigEndian.Uint16(k[2:4]) == 0
}

// decodeLegacy decodes one message of message format v0/v1 (Kafka before
// 0.11; in holds it whole): a plain message is one record, a compressed
// one wraps a message set whose offsets are relative under v1 (the
// wrapper carries the last one's). It reports done when it reached until.
func (d *Block) decodeLegacy(in []byte, p offsets.Partition, pos, until int64, maxBatch int) (bool, error) {
	m, err := parseMessage(in)
	if err != nil {
		return false, err
	}
	pos = max(pos, d.Next) // as for record batches: no offset twice
	if m.codec == 0 {
		d.Batches++
		return d.addLegacy(m, m.offset, m.ts, m.magic >= 1 && m.logAppend, p, pos, until), nil
	}
	compressed := m.value
	if m.magic == 0 && m.codec == codecLZ4 {
		compressed = fixLZ4Header(compressed) // KAFKA-3160 (lz4legacy.go)
	}
	set, err := decompress(m.codec, compressed, maxBatch)
	if err != nil {
		return false, err
	}
	decompressed := len(set)
	var inner []message
	for len(set) > 0 {
		size, _, whole := entry(set)
		if !whole {
			break // a wrapper's set is whole; tolerate padding as sarama does
		}
		im, err := parseMessage(set[:size])
		if err != nil {
			return false, err
		}
		if im.codec != 0 {
			return false, errors.New("compressed message inside a compressed message")
		}
		if n := int64(len(inner)+1) * RecordOverhead; n > int64(maxBatch) {
			return false, &tooLargeError{limit: maxBatch, claim: n, decoded: fmt.Sprintf("its %d or more messages", len(inner)+1)}
		}
		inner = append(inner, im)
		set = set[size:]
	}
	if len(inner) == 0 {
		return false, nil
	}
	d.Batches++
	msgs, bytes := len(d.Msgs), d.Bytes
	defer d.own(msgs, bytes, decompressed)
	base := int64(0)
	if m.magic >= 1 {
		base = m.offset - inner[len(inner)-1].offset
	}
	prev := int64(-1) // the offset of the inner message before
	for _, im := range inner {
		o := im.offset
		if im.magic >= 1 {
			o += base
		}
		// As inside a record batch: offsets strictly increase and end
		// at the wrapper's, or the set would deliver one twice or out
		// of order. The whole set is checked before any is delivered.
		if o <= prev || o > m.offset {
			return false, fmt.Errorf("inner message at offset %d after offset %d in a wrapper at offset %d: offsets inside a message set must increase up to the wrapper's", o, prev, m.offset)
		}
		prev = o
	}
	for _, im := range inner {
		o := im.offset
		if im.magic >= 1 {
			o += base
		}
		ts := im.ts
		if m.magic >= 1 && m.logAppend {
			ts = m.ts
		}
		if d.addLegacy(im, o, ts, m.magic >= 1 && m.logAppend, p, pos, until) {
			return true, nil
		}
	}
	return false, nil
}

// addLegacy adds the legacy message m at offset o when in [pos, until),
// with timestamp ts (the broker's when logAppend); it reports whether
// until was reached.
func (d *Block) addLegacy(m message, o int64, ts time.Time, logAppend bool, p offsets.Partition, pos, until int64) bool {
	d.Next = max(d.Next, offsets.Next(o))
	if o < pos {
		return false
	}
	if o >= until {
		return true
	}
	r := d.grow()
	r.Topic, r.Partition, r.Offset, r.Timestamp, r.LogAppendTime = p.Topic, p.Partition, o, ts, logAppend
	r.Key, r.Value = m.key, m.value
	d.Bytes += r.Bytes()
	return false
}

// message is a message of format v0 or v1.
type message struct {
	offset     int64
	magic      int8
	codec      int8
	logAppend  bool
	ts         time.Time // zero under v0 and for -1
	key, value []byte
}

// parseMessage reads one legacy message (offset, size, CRC, magic,
// attributes, v1's timestamp, key, value), checking its CRC-32.
func parseMessage(in []byte) (message, error) {
	m := message{offset: int64(binary.BigEndian.Uint64(in))}
	if len(in) < 12+4+2 {
		return m, errTruncated
	}
	body := in[16:]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(in[12:]) {
		return m, errCRC
	}
	m.magic, m.codec = int8(body[0]), int8(body[1]&7)
	m.logAppend = body[1]&8 != 0
	body = body[2:]
	if m.magic >= 1 {
		if len(body) < 8 {
			return m, errTruncated
		}
		if ms := int64(binary.BigEndian.Uint64(body)); ms >= 0 {
			m.ts = time.UnixMilli(ms)
		}
		body = body[8:]
	}
	var err error
	if m.key, body, err = legacyBytes(body); err != nil {
		return m, err
	}
	if m.value, _, err = legacyBytes(body); err != nil {
		return m, err
	}
	return m, nil
}

// legacyBytes reads an int32 length and that many bytes (nil for -1).
func legacyBytes(in []byte) ([]byte, []byte, error) {
	if len(in) < 4 {
		return nil, nil, errTruncated
	}
	l := int32(binary.BigEndian.Uint32(in))
	in = in[4:]
	if l < 0 {
		return nil, in, nil
	}
	if int(l) > len(in) {
		return nil, nil, errTruncated
	}
	return in[:l:l], in[l:], nil
}

// aborts tracks the producer ids whose batches are aborted at the current
// point of a read_committed answer. It is the one place that decides
// which batches a read_committed reader skips.
type aborts struct {
	pending []AbortedTxn // by first offset, not reached yet
	active  map[int64]bool
}

// AbortedTxn is an aborted transaction a read_committed answer lists: its
// producer and its first offset.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

func newAborts(list []AbortedTxn, committed bool) aborts {
	if !committed || len(list) == 0 {
		return aborts{}
	}
	pending := slices.Clone(list)
	slices.SortStableFunc(pending, func(a, b AbortedTxn) int {
		switch {
		case a.FirstOffset < b.FirstOffset:
			return -1
		case a.FirstOffset > b.FirstOffset:
			return 1
		}
		return 0
	})
	return aborts{pending: pending, active: map[int64]bool{}}
}

// skip takes the answer's next record batch b, in offset order, and
// reports whether it holds no record to deliver: a control batch (whose
// abort marker ends its producer's aborted transaction), or a batch of an
// aborted transaction. Without an aborted-transactions list (read
// uncommitted, or none aborted) only control batches are skipped.
func (a *aborts) skip(b *batch) bool {
	for len(a.pending) > 0 && a.pending[0].FirstOffset <= b.last() {
		a.active[a.pending[0].ProducerID] = true
		a.pending = a.pending[1:]
	}
	if b.control {
		if isAbortMarker(b.records) {
			delete(a.active, b.producerID)
		}
		return true
	}
	return b.transactional && a.active[b.producerID]
}

// Codecs of a batch's attributes (and a legacy message's).
const (
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

var (
	gzipPool sync.Pool
	lz4Pool  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdPool sync.Pool // stream decoders, for frames that do not say their size
	// zstdAll decodes whole frames into a buffer of the size they say,
	// and no more.
	zstdAll = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(maxRecordBytesCap))
	})
)

// claimRatio bounds how much larger than its compressed bytes a batch's
// own claim of its decompressed size is believed before decompressing:
// snappy cannot expand more than about 32 times (a copy of 64 bytes in
// two), so a larger claim is a corrupt or hostile batch; for zstd and lz4
// a larger claim only stops the buffer being sized up front (and bounds
// unlz4's guess of what is left when it grows).
const claimRatio = 64

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// decompress returns src decompressed into a fresh buffer, which the
// records then point into. The output never passes limit bytes: a
// batch that would take more is a *tooLargeError, found from its own
// claim where it makes one (snappy, zstd and lz4 frames that say their
// size) and else while decompressing, with the buffer grown to limit+1
// bytes at most.
func decompress(codec int8, src []byte, limit int) ([]byte, error) {
	out, err := decompressRaw(codec, src, limit)
	var tl *tooLargeError
	if err != nil && !errors.As(err, &tl) {
		name := codecName(codec)
		if !strings.HasPrefix(err.Error(), name+":") && !strings.HasPrefix(err.Error(), "s2:") {
			err = fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, err
}

func codecName(codec int8) string {
	switch codec {
	case codecGzip:
		return "gzip"
	case codecSnappy:
		return "snappy"
	case codecLZ4:
		return "lz4"
	case codecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec %d", codec)
}

func decompressRaw(codec int8, src []byte, limit int) ([]byte, error) {
	switch codec {
	case codecGzip:
		r, _ := gzipPool.Get().(*gzip.Reader)
		if r == nil {
			var err error
			if r, err = gzip.NewReader(bytes.NewReader(src)); err != nil {
				return nil, err
			}
		} else if err := r.Reset(bytes.NewReader(src)); err != nil {
			return nil, err
		}
		defer gzipPool.Put(r)
		return readAll(r, codec, len(src), limit)
	case codecSnappy:
		if bytes.HasPrefix(src, xerialMagic) {
			return unxerial(src, limit)
		}
		return unsnappy(src, limit)
	case codecLZ4:
		if out, ok, err := unlz4(src, limit); ok {
			return out, err
		}
		r := lz4Pool.Get().(*lz4.Reader)
		defer lz4Pool.Put(r)
		r.Reset(bytes.NewReader(src))
		return readAll(r, codec, len(src), limit)
	case codecZstd:
		return unzstd(src, limit)
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

// unzstd decodes zstd frames. A frame that says its content size (every
// frame Kafka's producers write does) is decoded into a buffer of that
// size and no more; one that does not is read as a stream, within limit.
func unzstd(src []byte, limit int) ([]byte, error) {
	var fh zstd.Header
	if fh.Decode(src) == nil && fh.HasFCS {
		if fh.FrameContentSize > uint64(limit) {
			return nil, &tooLargeError{limit: limit, claim: int64(min(fh.FrameContentSize, 1<<62))}
		}
		dec, err := zstdAll()
		if err != nil {
			return nil, err
		}
		// A frame's content past its claim, or a second frame, does
		// not fit: DecodeAll stops at cap (WithDecodeAllCapLimit).
		out, err := dec.DecodeAll(src, make([]byte, 0, fh.FrameContentSize))
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) && len(src) > int(fh.HeaderSize) {
			return unzstdStream(src, limit)
		}
		return out, err
	}
	return unzstdStream(src, limit)
}

// unzstdStream reads zstd frames as a stream, within limit.
func unzstdStream(src []byte, limit int) ([]byte, error) {
	r, _ := zstdPool.Get().(*zstd.Decoder)
	if r == nil {
		var err error
		if r, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(DefaultMaxRecordBytes)); err != nil {
			return nil, err
		}
	}
	if err := r.Reset(bytes.NewReader(src)); err != nil {
		return nil, err
	}
	defer func() {
		_ = r.Reset(nil)
		zstdPool.Put(r)
	}()
	return readAll(r, codecZstd, len(src), limit)
}

// unsnappy decodes one raw snappy block (what Go and C producers write).
func unsnappy(src []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, &tooLargeError{limit: limit, claim: int64(n)}
	}
	if n > len(src)*claimRatio {
		return nil, fmt.Errorf("a block of %d bytes claims %d decompressed", len(src), n)
	}
	out, err := s2.Decode(make([]byte, n), src)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// unxerial decodes snappy in the xerial framing Java producers write: a
// 16-byte header, then blocks each preceded by its length. The decoding
// is klauspost/compress's (snappy/xerial, which sarama links); that
// package tells no decoded size before it decodes, so the walk over the
// block lengths here sums each block's claim first: the limit and the
// claim ratio hold before anything is allocated, and the buffer is sized
// exactly.
func unxerial(src []byte, limit int) ([]byte, error) {
	if len(src) < 16 {
		return nil, errTruncated
	}
	total := 0
	for c := src[16:]; len(c) > 0; {
		if len(c) < 4 {
			return nil, errTruncated
		}
		l := int(binary.BigEndian.Uint32(c))
		if l > len(c)-4 {
			return nil, errTruncated
		}
		n, err := s2.DecodedLen(c[4 : 4+l])
		if err != nil {
			return nil, err
		}
		if total += n; total > limit {
			return nil, &tooLargeError{limit: limit, claim: -1}
		}
		if total > len(src)*claimRatio {
			return nil, fmt.Errorf("%d bytes claim %d decompressed", len(src), total)
		}
		c = c[4+l:]
	}
	return xerial.DecodeCapped(make([]byte, 0, total), src)
}

// expansion is, per codec, how many times its last batch grew when
// decompressed (in 16ths): guessSize sizes gzip's buffers by it, and
// lz4's when the frame does not say its content size (producers' frames
// do not). Reading into a scratch buffer and copying the result out cost
// a sixth of the CPU of a catch-up of lz4 records (slices.Clone 17 % of a
// profile).
var expansion [codecZstd + 1]atomic.Uint32

// readAll reads a decompressor into a buffer sized from the codec's last
// expansion (guessSize). When that was too small, the rest goes into
// further buffers of the same size, joined once at the end: nothing
// decompressed is copied while reading, so a batch that turns out too
// large (more than limit bytes: a *tooLargeError) has taken limit+1
// bytes at most, and left no garbage of grown buffers behind.
func readAll(r io.Reader, codec int8, srcLen, limit int) ([]byte, error) {
	cur := make([]byte, 0, min(guessSize(codec, srcLen), limit+1))
	var full [][]byte // filled before cur
	total := 0        // their bytes
	for idle := 0; ; {
		if len(cur) == cap(cur) {
			if total += len(cur); total > limit {
				return nil, &tooLargeError{limit: limit, claim: -1}
			}
			full = append(full, cur)
			cur = make([]byte, 0, min(cap(cur), limit+1-total))
		}
		n, err := r.Read(cur[len(cur):cap(cur)])
		cur = cur[:len(cur)+n]
		switch {
		case err == io.EOF:
			if len(full) == 0 {
				return fitted(codec, cur, srcLen), nil
			}
			out := make([]byte, 0, total+len(cur))
			for _, b := range full {
				out = append(out, b...)
			}
			return fitted(codec, append(out, cur...), srcLen), nil
		case err != nil:
			return nil, err
		case n > 0:
			idle = 0
		default:
			if idle++; idle > 100 {
				return nil, io.ErrNoProgress
			}
		}
	}
}

// guessSize is the buffer for srcLen bytes of codec: its last batch's
// expansion (4x at first) and an eighth more, as batches of one topic
// expand a few percent more or less than each other (on the lz4 row of
// the benchmark, growing a buffer guessed short took 4 % of the CPU).
// At most 4x or 16 MiB, whichever is more: after a batch of zeros (255x)
// a large batch of other data would be guessed at up to 1 GiB. A guess
// too small grows as it is filled.
func guessSize(codec int8, srcLen int) int {
	ratio := int(expansion[codec].Load())
	if ratio == 0 {
		ratio = 4 * 16
	}
	return min(srcLen*ratio/16*9/8, max(4*srcLen, 16<<20), maxRecordBytesCap) + bytes.MinRead
}

// fitted records codec's expansion from srcLen bytes to out, and returns
// out, copied to a buffer of its size when it leaves a quarter of its
// buffer unused: records keep the buffer alive.
func fitted(codec int8, out []byte, srcLen int) []byte {
	if srcLen > 0 {
		expansion[codec].Store(uint32(min(len(out)*16/srcLen+1, 1<<24)))
	}
	if cap(out)-len(out) > len(out)/4+bytes.MinRead {
		out = slices.Clone(out)
	}
	return out
}
