package kafka

import (
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// Record batches a hostile or broken broker sends with a valid CRC: each
// is a *CorruptBatchError at its offset, nothing of it is delivered, the
// batches before it are, and nothing is allocated past the limits.

// checkCorrupt fails unless err is a CorruptBatchError at offset whose
// text holds want.
func checkCorrupt(t *testing.T, what string, err error, offset int64, want string) *CorruptBatchError {
	t.Helper()
	c, ok := IsCorrupt(err)
	if !ok {
		t.Fatalf("%s: err %v, want a corrupt batch at offset %d", what, err, offset)
	}
	if c.Offset != offset || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: %v, want offset %d and %q", what, err, offset, want)
	}
	return c
}

// A batch with base 0, last delta 1 and records at deltas 1, 0, 0 is
// corrupt, not delivered as offsets 1, 0, 0: each record is compared with
// the one before it, not only with the start of the batch.
func TestRepeatedOffsetsInsideABatchAreCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		last   int32
		deltas []int64
	}{
		{"repeated", 1, []int64{1, 0, 0}},
		{"the same twice", 2, []int64{0, 1, 1}},
		{"backward", 3, []int64{0, 2, 1}},
		{"below the base", 2, []int64{0, -1}},
		{"past the last delta", 1, []int64{0, 2}},
	} {
		d, err := DecodeRecords(concat(plainBatch(0, 2), rbatch(2, tc.last, -1, false, tc.deltas...)), nil, tp, 0, NoEnd, false)
		checkCorrupt(t, tc.name, err, 2, "offset")
		if len(d.Msgs) != 2 || d.Msgs[1].Offset != 1 || d.Next != 2 || d.Batches != 1 {
			t.Errorf("%s: %d records, next %d, %d batches; want the first batch's 0 and 1, next 2, 1 batch", tc.name, len(d.Msgs), d.Next, d.Batches)
		}
	}
	// Read from inside the batch, the bad order is found all the same.
	if _, err := DecodeRecords(rbatch(0, 1, -1, false, 1, 0, 0), nil, tp, 1, NoEnd, false); err == nil {
		t.Error("read from offset 1: no error")
	}
}

// A batch that does not check out ends the answer there: the batches
// before it are delivered, Next stays at its base, and the error names it.
func TestCorruptBatchKeepsTheBatchesBefore(t *testing.T) {
	bad := plainBatch(3, 3)
	bad[len(bad)-1] ^= 1 // CRC mismatch
	d, err := DecodeRecords(concat(plainBatch(0, 3), bad, plainBatch(6, 1)), nil, tp, 0, NoEnd, false)
	checkCorrupt(t, "bad CRC", err, 3, "CRC")
	if len(d.Msgs) != 3 || d.Next != 3 || d.Batches != 1 {
		t.Errorf("%d records, next %d, %d batches; want 3, 3 and 1", len(d.Msgs), d.Next, d.Batches)
	}
}

// Lengths and varints that lie, under a valid CRC: a record count above
// what the bytes hold, a varint of eleven bytes, a key length of 2^62, a
// header count of 2^40, a record length past the batch.
func TestLyingLengthsAndVarintsAreCorrupt(t *testing.T) {
	rec := func(b []byte) []byte {
		body := append([]byte{byte(len(b) * 2)}, b...) // a zig-zag length under 64
		batch := tbatch{First: 5, ProducerID: -1}.Encode()
		binary.BigEndian.PutUint32(batch[57:], 1)
		return testkafka.Seal(append(batch, body...))
	}
	overflow := []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01} // offset delta
	hugeKey := append([]byte{0, 0, 0}, binary.AppendVarint(nil, 1<<62)...)
	hugeHeaders := append([]byte{0, 0, 0, 1, 1}, binary.AppendVarint(nil, 1<<40)...)
	count := tbatch{First: 5, ProducerID: -1, Records: []trec{{Value: []byte("v")}}}.Encode()
	binary.BigEndian.PutUint32(count[57:], 1<<30)
	length := tbatch{First: 5, ProducerID: -1, Records: []trec{{Value: []byte("v")}}}.Encode()
	length[61] = 0x7e // the record's length: 63, past the batch
	for name, raw := range map[string][]byte{
		"varint overflow":  rec(overflow),
		"key of 2^62":      rec(hugeKey),
		"2^40 headers":     rec(hugeHeaders),
		"2^30 records":     testkafka.Seal(count),
		"record too long":  testkafka.Seal(length),
		"negative records": testkafka.Seal(func() []byte { b := append([]byte(nil), count...); binary.BigEndian.PutUint32(b[57:], 1<<31); return b }()),
	} {
		var d Block
		var err error
		if n := allocated(func() { d, err = DecodeRecords(raw, nil, tp, 0, NoEnd, false) }); n > 1<<20 {
			t.Errorf("%s: %d bytes allocated for an answer of %d", name, n, len(raw))
		}
		checkCorrupt(t, name, err, 5, "")
		if len(d.Msgs) != 0 || d.Next != 0 {
			t.Errorf("%s: %d records, next %d; want none and 0", name, len(d.Msgs), d.Next)
		}
	}
}

// bombCodecs are the codecs of the bomb tests, by name.
var bombCodecs = map[string]int8{
	"gzip": testkafka.CodecGzip, "snappy": testkafka.CodecSnappy, "xerial snappy": testkafka.XerialSnappy,
	"lz4": testkafka.CodecLZ4, "zstd": testkafka.CodecZstd,
}

// A batch of one record of 32 MiB of zeros, under a limit of 1 MiB: too
// large, said at its offset with the flag that reads it, and never
// decompressed past the limit (an answer of such batches took gigabytes):
// an answer of three of them allocates less than half of one (the limit,
// and the codec's own state: zstd's stream decoder, lz4's 4 MiB blocks).
func TestCompressionBombsAreRefusedAtTheLimit(t *testing.T) {
	const limit, bomb = 1 << 20, 32 << 20
	raw := map[string][]byte{}
	for name, codec := range bombCodecs {
		raw[name] = testkafka.Bomb(codec, 7, bomb)
	}
	// zstd frames that say their size (zstd.EncodeAll): refused from the claim.
	enc, _ := zstd.NewWriter(nil)
	value := make([]byte, bomb)
	one := testkafka.Batch{First: 7, ProducerID: -1, Records: []trec{{Value: value}}}.Encode()
	recs := enc.EncodeAll(one[61:], nil)
	h := append([]byte(nil), one[:61]...)
	binary.BigEndian.PutUint16(h[21:], uint16(codecZstd))
	raw["zstd with its size"] = testkafka.Seal(append(h, recs...))
	for name, b := range raw {
		answer := concat(plainBatch(5, 2), b, b, b)
		var d Block
		var err error
		_, _ = DecodeLimited(b, nil, tp, 0, NoEnd, false, Limits{MaxBatch: limit}) // the codec's pooled state, made once
		n := allocated(func() {
			d, err = DecodeLimited(answer, nil, tp, 0, NoEnd, false, Limits{Budget: NoBudget, MaxBatch: limit})
		})
		c := checkCorrupt(t, name, err, 7, "--max-record-bytes")
		if c.Limit != limit {
			t.Errorf("%s: limit %d, want %d", name, c.Limit, limit)
		}
		t.Logf("%s: %d bytes allocated", name, n)
		if n > bomb/2 {
			t.Errorf("%s: %d bytes allocated decoding %d bytes of bombs under a limit of %d", name, n, len(answer), limit)
		}
		if len(d.Msgs) != 2 || d.Next != 7 {
			t.Errorf("%s: %d records, next %d; want the 2 before the bomb, next 7", name, len(d.Msgs), d.Next)
		}
		// Under a limit above it, the same batch is read.
		d, err = DecodeLimited(b, nil, tp, 0, NoEnd, false, Limits{Budget: NoBudget, MaxBatch: 2 * bomb})
		if err != nil || len(d.Msgs) != 1 || len(d.Msgs[0].Value) != bomb {
			t.Errorf("%s under a limit of %d: %d records, err %v", name, 2*bomb, len(d.Msgs), err)
		}
	}
}

// An answer's batches are decoded while its records take less memory
// than the budget: the rest is left for the next fetch, from d.Next. The
// first batch is decoded whatever its size.
func TestAnswerDecodesWithinItsBudget(t *testing.T) {
	const value = 256 << 10
	var parts [][]byte
	for i := range 8 {
		parts = append(parts, testkafka.Batch{First: int64(i), ProducerID: -1, Codec: testkafka.CodecZstd,
			Records: []trec{{Value: make([]byte, value)}}}.Encode())
	}
	answer := concat(parts...)
	for _, tc := range []struct {
		budget int64
		want   int
	}{{1, 1}, {value, 1}, {value + RecordOverhead + 1, 2}, {3 * value, 3}, {NoBudget, 8}} {
		d, err := DecodeLimited(answer, nil, tp, 0, NoEnd, false, Limits{Budget: tc.budget})
		if err != nil || len(d.Msgs) != tc.want || d.Next != int64(tc.want) || d.Partial {
			t.Errorf("budget %d: %d records, next %d, partial %v, err %v; want %d", tc.budget, len(d.Msgs), d.Next, d.Partial, err, tc.want)
		}
	}
}

// A compressed legacy message (v0/v1) wraps a message set whose offsets
// were delivered as they came: inner relative offsets 1, 0, 0 under a
// wrapper at 2 gave offsets 3, 2, 2, past the wrapper and twice the same.
// Inner offsets must strictly increase and end at most at the wrapper's.
func TestRepeatedOffsetsInsideALegacyWrapperAreCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		magic   int8
		wrapper int64
		inner   []int64
	}{
		{"v1 repeated", 1, 2, []int64{1, 0, 0}},
		{"v1 the same twice", 1, 4, []int64{0, 1, 1}},
		{"v1 backward", 1, 4, []int64{0, 2, 1}},
		{"v0 backward", 0, 4, []int64{3, 2}},
		{"v0 the same twice", 0, 4, []int64{3, 3}},
		{"v0 past the wrapper", 0, 4, []int64{3, 5}},
	} {
		var set []byte
		for _, o := range tc.inner {
			set = append(set, legacy(tc.magic, o, 0, 1000, []byte{byte(o)}, []byte("v"))...)
		}
		first := legacy(tc.magic, 1, 0, 1000, []byte{1}, []byte("v"))
		wrapped := legacy(tc.magic, tc.wrapper, codecSnappy, 1000, nil, s2.EncodeSnappy(nil, set))
		d, err := DecodeRecords(concat(first, wrapped), nil, tp, 0, NoEnd, false)
		checkCorrupt(t, tc.name, err, tc.wrapper, "offset")
		if len(d.Msgs) != 1 || d.Msgs[0].Offset != 1 || d.Next != 2 {
			t.Errorf("%s: %d records, next %d; want the message at 1 alone, next 2", tc.name, len(d.Msgs), d.Next)
		}
	}
}

// Bytes a batch holds past its records, or a record past its fields, are
// counted nowhere: a zstd batch of one small record followed by 60 MiB
// of zeros decoded as a record of two bytes, so an answer of sixteen
// held a GiB within a budget of a few KiB. Kafka's Java client calls
// both corrupt ("records still remaining", "invalid record size").
func TestBytesPastTheRecordsAreCorrupt(t *testing.T) {
	one := tbatch{First: 5, ProducerID: -1, Records: []trec{{Value: []byte("v")}}}.Encode()
	recs := one[61:]
	padded := func(codec int8, recs []byte) []byte {
		h := append([]byte(nil), one[:61]...)
		if codec != 0 {
			recs = testkafka.Compress(codec, recs)
			binary.BigEndian.PutUint16(h[21:], uint16(codec))
		}
		return testkafka.Seal(append(h, recs...))
	}
	pad := make([]byte, 4096)
	body := []byte{0, 0, 0, 1, 2, 'v', 0} // attributes, deltas, null key, "v", no header
	inRecord := append(binary.AppendVarint(nil, int64(len(body)+8)), append(body, make([]byte, 8)...)...)
	for name, raw := range map[string][]byte{
		"after the records":       padded(0, append(append([]byte(nil), recs...), pad...)),
		"after the records, zstd": padded(testkafka.CodecZstd, append(append([]byte(nil), recs...), pad...)),
		"inside the record":       padded(0, inRecord),
		"inside the record, zstd": padded(testkafka.CodecZstd, inRecord),
	} {
		d, err := DecodeRecords(concat(plainBatch(0, 5), raw), nil, tp, 0, NoEnd, false)
		checkCorrupt(t, name, err, 5, "")
		if len(d.Msgs) != 5 || d.Next != 5 {
			t.Errorf("%s: %d records, next %d; want the first batch's 5, next 5", name, len(d.Msgs), d.Next)
		}
	}
	// The same batches without the padding are whole.
	for name, raw := range map[string][]byte{"plain": padded(0, recs), "zstd": padded(testkafka.CodecZstd, recs)} {
		if d, err := DecodeRecords(raw, nil, tp, 0, NoEnd, false); err != nil || len(d.Msgs) != 1 || string(d.Msgs[0].Value) != "v" {
			t.Errorf("%s without padding: %d records, err %v", name, len(d.Msgs), err)
		}
	}
}

// held is the heap that f's result still holds once it returns.
func held(f func() any) (uint64, any) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if m1.HeapAlloc < m0.HeapAlloc {
		return 0, v
	}
	return m1.HeapAlloc - m0.HeapAlloc, v
}

// Records skipped inside a compressed batch (before the position, or
// covered by an earlier batch of the answer) are counted nowhere, but
// the records delivered held the whole decompressed batch: batches of
// [k, k+1] with 60 MiB at k and two bytes at k+1, each starting below
// the one before ended, took a GiB within a budget of a few KiB. A
// compressed batch whose delivered records are a small part of it gives
// them bytes of their own.
func TestSkippedRecordsOfACompressedBatchAreNotHeld(t *testing.T) {
	const big, n = 8 << 20, 4
	var parts [][]byte
	for i := range n {
		o := int64(i)
		parts = append(parts, testkafka.Batch{First: o, LastDelta: 1, ProducerID: -1, Codec: testkafka.CodecSnappy,
			Records: []trec{{Value: make([]byte, big)}, {OffsetDelta: 1, Key: []byte("k"), Value: []byte("v")}}}.Encode())
	}
	answer := concat(parts...)
	// Raw snappy keeps no decoder between calls: the heap measured is
	// what the records hold.
	var err error
	heap, v := held(func() any {
		var d Block
		d, err = DecodeLimited(answer, nil, tp, 1, NoEnd, false, Limits{Budget: 1 << 20})
		return d
	})
	d := v.(Block)
	if err != nil || len(d.Msgs) != n || d.Next != n+1 {
		t.Fatalf("%d records, next %d, err %v; want %d, %d", len(d.Msgs), d.Next, err, n, n+1)
	}
	for i, m := range d.Msgs {
		if m.Offset != int64(i+1) || string(m.Key) != "k" || string(m.Value) != "v" {
			t.Fatalf("record %d: offset %d key %q value %q", i, m.Offset, m.Key, m.Value)
		}
	}
	if heap > big {
		t.Errorf("%d records of 2 bytes hold %d bytes of heap; want less than one skipped record (%d)", n, heap, big)
	}
}

// headerBomb is a batch at first of one record with n headers of a null
// key and value: two bytes each (a few KiB on the wire compressed, but
// uncompressed here: no codec state is allocated beside it).
func headerBomb(first int64, n int) []byte {
	body := binary.AppendVarint([]byte{0, 0, 0, 1, 1}, int64(n)) // attributes, deltas, null key and value
	for range n {
		body = append(body, 1, 1)
	}
	rec := append(binary.AppendVarint(nil, int64(len(body))), body...)
	h := append([]byte(nil), tbatch{First: first, ProducerID: -1}.Encode()[:61]...)
	binary.BigEndian.PutUint32(h[57:], 1)
	return testkafka.Seal(append(h, rec...))
}

// What a batch's records and headers take in memory beside their bytes
// is bounded: unbounded, 995 bytes on the wire, 8 MiB decompressed, make
// four million headers of two bytes and 261 MB allocated, and a million
// empty records of 9 bytes take 312 MB. The limit on one batch (--max-record-bytes) bounds that too, before
// anything is allocated for them, and the budget of an answer counts
// the headers.
func TestRecordAndHeaderBombsAreTooLarge(t *testing.T) {
	const limit = 1 << 20
	lim := Limits{Budget: NoBudget, MaxBatch: limit}
	headers := headerBomb(5, 256<<10) // 256 Ki headers: 14 MiB of them decoded
	var err error
	if n := allocated(func() { _, err = DecodeLimited(headers, nil, tp, 0, NoEnd, false, lim) }); n > 4*limit {
		t.Errorf("header bomb: %d bytes allocated, limit %d", n, limit)
	}
	c := checkCorrupt(t, "header bomb", err, 5, "above the limit of 1MiB")
	if c.Limit != limit {
		t.Errorf("header bomb: limit %d in the error, want %d (the flag that reads it)", c.Limit, limit)
	}

	var recs []byte
	const count = 16 << 10 // 2.5 MiB of records decoded
	for i := range count {
		body := binary.AppendVarint([]byte{0, 0}, int64(i))
		body = append(body, 1, 1, 0)
		recs = append(binary.AppendVarint(recs, int64(len(body))), body...)
	}
	h := append([]byte(nil), tbatch{First: 5, LastDelta: count - 1, ProducerID: -1}.Encode()[:61]...)
	binary.BigEndian.PutUint32(h[57:], count)
	binary.BigEndian.PutUint16(h[21:], uint16(testkafka.CodecZstd))
	many := testkafka.Seal(append(h, testkafka.Compress(testkafka.CodecZstd, recs)...))
	_, err = DecodeLimited(many, nil, tp, 0, NoEnd, false, lim)
	checkCorrupt(t, "record count bomb", err, 5, "above the limit of 1MiB")

	// Under the limit, the headers count against the answer's budget:
	// the answer stops after the first batch.
	var parts [][]byte
	for i := range 4 {
		parts = append(parts, headerBomb(int64(i), 4<<10)) // 224 KiB of headers each
	}
	d, err := DecodeLimited(concat(parts...), nil, tp, 0, NoEnd, false, Limits{Budget: 100 << 10, MaxBatch: limit})
	if err != nil || d.Batches != 1 || d.Next != 1 || len(d.Msgs[0].Headers) != 4<<10 {
		t.Errorf("answer of header batches within 100 KiB: %d batches, next %d, err %v; want 1 and 1", d.Batches, d.Next, err)
	}
}

// The same bound holds for a compressed legacy message: 16 Ki messages
// of 26 bytes each take 2.5 MiB decoded under a limit of 1 MiB.
func TestLegacyWrapperOfManyMessagesIsTooLarge(t *testing.T) {
	const limit, n = 1 << 20, 16 << 10
	var set []byte
	for i := range n {
		set = append(set, legacy(0, int64(i), 0, 0, nil, nil)...)
	}
	wrapped := legacy(0, n-1, codecSnappy, 0, nil, s2.EncodeSnappy(nil, set))
	_, err := DecodeLimited(wrapped, nil, tp, 0, NoEnd, false, Limits{Budget: NoBudget, MaxBatch: limit})
	checkCorrupt(t, "legacy wrapper", err, n-1, "above the limit of 1MiB")
	if d, err := DecodeLimited(wrapped, nil, tp, 0, NoEnd, false, Limits{Budget: NoBudget, MaxBatch: 8 * limit}); err != nil || len(d.Msgs) != n {
		t.Errorf("under a limit of 8 MiB: %d records, err %v; want %d", len(d.Msgs), err, n)
	}
}
