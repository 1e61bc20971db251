package kafka

import (
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/kbatch-dev/kbatch/offsets"
)

var tp = offsets.Partition{Topic: "t", Partition: 0}

func TestDecodeRecords(t *testing.T) {
	type abort = AbortedTxn
	tests := []struct {
		name        string
		set         []byte
		aborted     []abort
		pos, until  int64
		committed   bool
		wantOffsets []int64
		wantNext    int64
		wantBatches int
	}{
		{"two batches", concat(plainBatch(0, 5), plainBatch(5, 5)), nil, 0, 10, false,
			[]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 2},
		{"position inside the first batch, until inside the second", concat(plainBatch(0, 5), plainBatch(5, 5)), nil, 3, 8, false,
			[]int64{3, 4, 5, 6, 7}, 8, 2},
		{"compacted inside and at the end of a batch", concat(rbatch(0, 9, -1, false, 0, 4)), nil, 0, 20, false,
			[]int64{0, 4}, 10, 1},
		{"range ends on a commit marker", concat(txn(0, 3, 7), marker(3, 7, true)), nil, 0, 4, false,
			[]int64{0, 1, 2}, 4, 2},
		{"range ends on a commit marker, committed", concat(txn(0, 3, 7), marker(3, 7, true)), nil, 0, 4, true,
			[]int64{0, 1, 2}, 4, 2},
		{"aborted, uncommitted", concat(txn(0, 3, 7), marker(3, 7, false), plainBatch(4, 1)), []abort{{ProducerID: 7, FirstOffset: 0}}, 0, 5, false,
			[]int64{0, 1, 2, 4}, 5, 3},
		{"aborted, committed", concat(txn(0, 3, 7), marker(3, 7, false), plainBatch(4, 1)), []abort{{ProducerID: 7, FirstOffset: 0}}, 0, 5, true,
			[]int64{4}, 5, 3},
		{"range over an aborted transaction only", concat(txn(0, 3, 7), marker(3, 7, false)), []abort{{ProducerID: 7, FirstOffset: 0}}, 0, 4, true,
			nil, 4, 2},
		{"range ending inside an aborted transaction", concat(txn(0, 3, 7), marker(3, 7, false)), []abort{{ProducerID: 7, FirstOffset: 0}}, 0, 2, true,
			nil, 2, 1},
		{"interleaved: 7 aborts, 8 commits", concat(txn(0, 2, 7), txn(2, 2, 8), marker(4, 7, false), txn(5, 1, 7), marker(6, 8, true)),
			[]abort{{ProducerID: 7, FirstOffset: 0}}, 0, 7, true,
			[]int64{2, 3, 5}, 7, 5},
		{"aborted list out of order, pid reused after abort", concat(txn(0, 1, 7), marker(1, 7, false), txn(2, 1, 7), marker(3, 7, false), txn(4, 1, 7), marker(5, 7, true)),
			[]abort{{ProducerID: 7, FirstOffset: 2}, {ProducerID: 7, FirstOffset: 0}}, 0, 6, true,
			[]int64{4}, 6, 6},
		{"gap before a batch past until ends the range", concat(plainBatch(0, 3), plainBatch(5, 3)), nil, 0, 4, false,
			[]int64{0, 1, 2}, 4, 1},
		{"answer starting past until", concat(plainBatch(5, 3)), nil, 3, 4, false,
			nil, 4, 0},
		{"records past until are dropped", concat(plainBatch(0, 10)), nil, 0, 3, false,
			[]int64{0, 1, 2}, 3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DecodeRecords(tc.set, tc.aborted, tp, tc.pos, tc.until, tc.committed)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, m := range d.Msgs {
				got = append(got, m.Offset)
				if m.Topic != tp.Topic || m.Partition != tp.Partition {
					t.Errorf("record %d names %s[%d]", m.Offset, m.Topic, m.Partition)
				}
				if m.Key[0] != byte(m.Offset) {
					t.Errorf("record %d has the key of %d", m.Offset, m.Key[0])
				}
			}
			if !reflect.DeepEqual(got, tc.wantOffsets) {
				t.Errorf("offsets %v, want %v", got, tc.wantOffsets)
			}
			if d.Next != tc.wantNext || d.Batches != tc.wantBatches || d.Partial {
				t.Errorf("next %d batches %d partial %v, want %d %d false", d.Next, d.Batches, d.Partial, tc.wantNext, tc.wantBatches)
			}
			if d.Bytes != int64(2*len(got)) {
				t.Errorf("bytes %d, want %d", d.Bytes, 2*len(got))
			}
		})
	}
}

func TestDecodeRecordsPartialAndTimes(t *testing.T) {
	whole := plainBatch(5, 1)
	part := plainBatch(6, 3)
	part = part[:len(part)-5] // cut at the fetch size
	d, err := DecodeRecords(part, nil, tp, 5, 10, false)
	if err != nil || !d.Partial || d.Next != 5 || d.Batches != 0 {
		t.Fatalf("partial batch: %+v %v", d, err)
	}
	d, err = DecodeRecords(part[:10], nil, tp, 5, 10, false)
	if err != nil || !d.Partial || d.Next != 5 || d.Batches != 0 {
		t.Fatalf("the first bytes of a batch: %+v %v", d, err)
	}
	d, err = DecodeRecords(concat(whole, part), nil, tp, 5, 10, false)
	if err != nil || d.Partial || d.Next != 6 || len(d.Msgs) != 1 {
		t.Fatalf("complete batch then partial: %+v %v", d, err)
	}

	b := tbatch{First: 0, LastDelta: 1, FirstTS: 1000, MaxTS: 1001, Records: []trec{{OffsetDelta: 0}, {OffsetDelta: 1, TimestampDelta: 1}}}
	d, _ = DecodeRecords(b.Encode(), nil, tp, 0, 2, false)
	if got := d.Msgs[1].Timestamp; !got.Equal(time.UnixMilli(1001)) || d.Msgs[1].LogAppendTime {
		t.Errorf("create time %v (log append %t), want first timestamp + delta", got, d.Msgs[1].LogAppendTime)
	}
	b.LogAppend, b.MaxTS = true, 5000
	d, _ = DecodeRecords(b.Encode(), nil, tp, 0, 2, false)
	if got := d.Msgs[0].Timestamp; !got.Equal(time.UnixMilli(5000)) || !d.Msgs[0].LogAppendTime {
		t.Errorf("log append time %v (log append %t), want the batch's max timestamp", got, d.Msgs[0].LogAppendTime)
	}
}

// TestDecodeRecordsTimestampRuns: deltas that repeat, come back, go
// negative (a producer setting its own times) or start above zero each
// give first timestamp + delta, in every batch of an answer, and every
// record's other fields are its own (records share one slab).
func TestDecodeRecordsTimestampRuns(t *testing.T) {
	deltas := [][]int64{
		{0, 0, 0, 3, 3, 0, -2, -2, 7},
		{5, 5, 0, 5},
	}
	var raw []byte
	var want []time.Time
	off := int64(0)
	for i, ds := range deltas {
		first := int64(10_000 * (i + 1))
		b := tbatch{First: off, LastDelta: int32(len(ds) - 1), FirstTS: first, MaxTS: first + 7}
		for j, dt := range ds {
			b.Records = append(b.Records, trec{OffsetDelta: int64(j), TimestampDelta: dt, Key: []byte{byte(off) + byte(j)}})
			want = append(want, time.UnixMilli(first+dt))
		}
		raw = append(raw, b.Encode()...)
		off += int64(len(ds))
	}
	d, err := DecodeRecords(raw, nil, tp, 0, NoEnd, false)
	if err != nil || len(d.Msgs) != len(want) {
		t.Fatalf("%d records, %v; want %d", len(d.Msgs), err, len(want))
	}
	for i, m := range d.Msgs {
		if !m.Timestamp.Equal(want[i]) || m.Offset != int64(i) || len(m.Key) != 1 || m.Key[0] != byte(i) || m.Headers != nil || m.Value != nil {
			t.Errorf("record %d: %+v, want timestamp %v", i, m, want[i])
		}
	}
}

// Legacy message sets (message format v0 and v1, Kafka before 0.11):
// plain messages with absolute offsets, and a compressed v1 wrapper whose
// inner offsets are relative, the wrapper carrying the last one's.
func TestDecodeRecordsLegacy(t *testing.T) {
	var raw []byte
	for _, o := range []int64{3, 4, 7} {
		raw = append(raw, legacy(0, o, 0, 0, []byte{byte(o)}, []byte("v"))...)
	}
	d, err := DecodeRecords(raw, nil, tp, 4, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Msgs) != 2 || d.Msgs[0].Offset != 4 || d.Msgs[1].Offset != 7 || d.Next != 8 || !d.Msgs[0].Timestamp.IsZero() {
		t.Fatalf("legacy: %+v", d)
	}
	d, _ = DecodeRecords(raw, nil, tp, 3, 7, false)
	if len(d.Msgs) != 2 || d.Next != 7 {
		t.Fatalf("legacy until 7: %+v", d)
	}

	// v1, snappy: inner messages at relative offsets 0..2, the wrapper at
	// absolute offset 12 (the last inner one's), log-append time 9000.
	var inner []byte
	for i := int64(0); i < 3; i++ {
		inner = append(inner, legacy(1, i, 0, 100+i, []byte{byte(10 + i)}, nil)...)
	}
	wrapped := legacy(1, 12, codecSnappy|8, 9000, nil, s2.EncodeSnappy(nil, inner))
	plainV1 := legacy(1, 13, 0, 200, []byte{13}, []byte("x"))
	d, err = DecodeRecords(concat(wrapped, plainV1), nil, tp, 11, NoEnd, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Msgs) != 3 || d.Msgs[0].Offset != 11 || d.Msgs[1].Offset != 12 || d.Msgs[2].Offset != 13 || d.Next != 14 || d.Batches != 2 {
		t.Fatalf("legacy v1: %+v", d)
	}
	if d.Msgs[0].Key[0] != 11 || d.Msgs[0].Value != nil || !d.Msgs[0].Timestamp.Equal(time.UnixMilli(9000)) || !d.Msgs[2].Timestamp.Equal(time.UnixMilli(200)) {
		t.Fatalf("legacy v1 records: %+v", d.Msgs)
	}
}

// The stream reads without an end: NoEnd keeps every record and the
// position after the last batch.
func TestDecodeRecordsWithoutEnd(t *testing.T) {
	raw := concat(plainBatch(0, 3), txn(3, 2, 7), marker(5, 7, false), plainBatch(6, 1))
	d, err := DecodeRecords(raw, []AbortedTxn{{ProducerID: 7, FirstOffset: 3}}, tp, 1, NoEnd, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, m := range d.Msgs {
		got = append(got, m.Offset)
	}
	if !reflect.DeepEqual(got, []int64{1, 2, 6}) || d.Next != 7 || d.Batches != 4 {
		t.Fatalf("offsets %v next %d batches %d; want [1 2 6], 7, 4", got, d.Next, d.Batches)
	}
	// A batch with every record compacted away still moves the position.
	d, _ = DecodeRecords(rbatch(7, 4, -1, false), nil, tp, 7, NoEnd, false)
	if len(d.Msgs) != 0 || d.Next != 12 || d.Partial {
		t.Fatalf("empty batch: %+v", d)
	}
}

// Malformed answers are errors naming what is wrong, never records: a
// flipped bit (CRC), a batch claiming more records than it holds, a
// legacy message whose key runs past it.
func TestDecodeRecordsMalformed(t *testing.T) {
	flipped := plainBatch(3, 2)
	flipped[len(flipped)-1] ^= 1
	if _, err := DecodeRecords(flipped, nil, tp, 0, NoEnd, false); err == nil || !strings.Contains(err.Error(), "CRC") {
		t.Errorf("flipped bit: err %v, want a CRC mismatch", err)
	}
	short := tbatch{First: 3, LastDelta: 1, Records: []trec{{Key: []byte("k")}}}.Encode()
	binary.BigEndian.PutUint32(short[57:], 2) // claims two records, holds one
	binary.BigEndian.PutUint32(short[17:], crc32.Checksum(short[21:], castagnoli))
	if _, err := DecodeRecords(short, nil, tp, 0, NoEnd, false); err == nil || !strings.Contains(err.Error(), "at offset 3") {
		t.Errorf("short batch: err %v, want one naming offset 3", err)
	}
	m := legacy(0, 3, 0, 0, []byte("key"), []byte("value"))
	binary.BigEndian.PutUint32(m[16+2:], 100) // key length past the message
	binary.BigEndian.PutUint32(m[12:], crc32.ChecksumIEEE(m[16:]))
	if _, err := DecodeRecords(m, nil, tp, 0, NoEnd, false); err == nil || !strings.Contains(err.Error(), "at offset 3") {
		t.Errorf("legacy message: err %v, want one naming offset 3", err)
	}
}

// TestDecodeRecordsNegativeTimestamps: a batch whose first record has no
// timestamp (-1) has the batch's first timestamp -1, and the others'
// deltas are from it (read as the zero time, that base would give the
// batch's other records dates in year 1 or 57). A
// record whose own time is negative has none (null in the JSON lines).
func TestDecodeRecordsNegativeTimestamps(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	times := []int64{-1, at, at + 5, -5000}
	b := tbatch{First: 0, LastDelta: int32(len(times) - 1), FirstTS: -1, MaxTS: at + 5}
	for j, ms := range times {
		b.Records = append(b.Records, trec{OffsetDelta: int64(j), TimestampDelta: ms + 1})
	}
	d, err := DecodeRecords(b.Encode(), nil, tp, 0, NoEnd, false)
	if err != nil || len(d.Msgs) != len(times) {
		t.Fatalf("%d records, %v", len(d.Msgs), err)
	}
	want := []time.Time{{}, time.UnixMilli(at), time.UnixMilli(at + 5), {}}
	for i, m := range d.Msgs {
		if !m.Timestamp.Equal(want[i]) {
			t.Errorf("record %d: timestamp %v, want %v", i, m.Timestamp, want[i])
		}
	}
}
