package kafka

import (
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"testing"
)

// Answers a corrupt or hostile broker could send: they are
// errors or ignored, never a panic, a huge allocation, or a record twice.

// allocated is what f allocated, in bytes.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

func recrc(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

// A flipped bit in a batch's record count must not size the slab before
// the CRC is checked: that would be 512 MiB for an 88-byte answer.
func TestLyingRecordCountAllocatesLittle(t *testing.T) {
	b := plainBatch(0, 3)
	binary.BigEndian.PutUint32(b[57:], 1<<22) // the CRC no longer matches
	var err error
	if n := allocated(func() { _, err = DecodeRecords(b, nil, tp, 0, NoEnd, false) }); n > 1<<20 || err == nil {
		t.Errorf("an answer of %d bytes claiming 4 Mi records: %d bytes allocated, err %v", len(b), n, err)
	}
	valid := recrc(append([]byte(nil), b...)) // the CRC matches the lie
	if n := allocated(func() { _, err = DecodeRecords(valid, nil, tp, 0, NoEnd, false) }); n > 1<<20 || err == nil {
		t.Errorf("the same with a valid CRC: %d bytes allocated, err %v", n, err)
	}
}

// Many batches each claiming 2^31-1 records overflowed what makeslice
// takes: a panic.
func TestLyingRecordCountsDoNotPanic(t *testing.T) {
	one := plainBatch(0, 0)
	binary.BigEndian.PutUint32(one[57:], 1<<31-1)
	var raw []byte
	for range 2000 {
		raw = append(raw, one...)
	}
	if _, err := DecodeRecords(raw, nil, tp, 0, NoEnd, false); err == nil {
		t.Error("no error for batches whose CRC does not match")
	}
}

// A broker that repeats a batch (or goes back) in one answer: each offset
// is delivered once, in order; a record outside its batch's offsets is
// an error.
func TestRepeatedBatchIsNotDeliveredTwice(t *testing.T) {
	d, err := DecodeRecords(concat(plainBatch(0, 3), plainBatch(0, 3), plainBatch(2, 3)), nil, tp, 0, NoEnd, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, m := range d.Msgs {
		got = append(got, m.Offset)
	}
	if len(got) != 5 || got[0] != 0 || got[4] != 4 || d.Next != 5 {
		t.Errorf("offsets %v next %d, want 0..4 once and next 5", got, d.Next)
	}
	outside := rbatch(10, 1, -1, false, 0, 5) // a record at delta 5 in a batch that ends at delta 1
	if _, err := DecodeRecords(outside, nil, tp, 0, NoEnd, false); err == nil {
		t.Error("a record past its batch's last offset was taken")
	}
}

// FuzzDecodeRecords: whatever the bytes, DecodeRecords does not panic,
// and what it returns is in [pos, until), in increasing order, below Next.
func FuzzDecodeRecords(f *testing.F) {
	f.Add(concat(plainBatch(0, 3), txn(3, 2, 7), marker(5, 7, false)), int64(1), int64(100), true)
	f.Add(concat(tbatch{First: 10, LastDelta: 2, ProducerID: -1, Snappy: true, FirstTS: 5, MaxTS: 7,
		Records: []trec{{Key: []byte("a"), Value: []byte("b"), Headers: [][2][]byte{{[]byte("h"), []byte("v")}}},
			{OffsetDelta: 1, Key: []byte("c")}, {OffsetDelta: 2, Value: []byte("d")}}}.Encode()), int64(0), NoEnd, false)
	f.Add(concat(legacy(0, 3, 0, 0, []byte("k"), []byte("v")), legacy(1, 4, 0, 9, nil, []byte("w"))), int64(3), int64(5), false)
	f.Fuzz(func(t *testing.T, raw []byte, pos, until int64, committed bool) {
		if pos < 0 || until < pos {
			return
		}
		d, err := DecodeRecords(raw, []AbortedTxn{{ProducerID: 7, FirstOffset: 3}}, tp, pos, until, committed)
		if err != nil {
			return
		}
		last := int64(-1)
		for _, m := range d.Msgs {
			if m.Offset < pos || m.Offset >= until || m.Offset <= last || m.Offset >= d.Next {
				t.Fatalf("record at %d (previous %d) for [%d, %d), next %d", m.Offset, last, pos, until, d.Next)
			}
			last = m.Offset
		}
	})
}

// The same for legacy messages.
func TestRepeatedLegacyMessageIsNotDeliveredTwice(t *testing.T) {
	raw := concat(legacy(0, 3, 0, 0, []byte{3}, nil), legacy(0, 4, 0, 0, []byte{4}, nil), legacy(0, 3, 0, 0, []byte{3}, nil))
	d, err := DecodeRecords(raw, nil, tp, 0, NoEnd, false)
	if err != nil || len(d.Msgs) != 2 || d.Msgs[1].Offset != 4 || d.Next != 5 {
		t.Fatalf("%+v %v, want offsets 3 and 4 once", d.Msgs, err)
	}
}
