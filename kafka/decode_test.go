package kafka

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

var tp = offsets.Partition{Topic: "t", Partition: 0}

// batch builds a record batch at first with records at the given offset
// deltas and a last offset delta of last.
func rbatch(first int64, last int32, pid int64, txn bool, deltas ...int64) *sarama.Records {
	b := &sarama.RecordBatch{Version: 2, FirstOffset: first, LastOffsetDelta: last, ProducerID: pid,
		IsTransactional: txn, FirstTimestamp: time.UnixMilli(1000)}
	for _, d := range deltas {
		b.Records = append(b.Records, &sarama.Record{OffsetDelta: d, TimestampDelta: time.Duration(d) * time.Millisecond,
			Key: []byte{byte(first + d)}, Value: []byte("v")})
	}
	return &sarama.Records{RecordBatch: b}
}

func plain(first int64, n int) *sarama.Records {
	deltas := make([]int64, n)
	for i := range deltas {
		deltas[i] = int64(i)
	}
	return rbatch(first, int32(n-1), -1, false, deltas...)
}

func txn(first int64, n int, pid int64) *sarama.Records {
	r := plain(first, n)
	r.RecordBatch.ProducerID, r.RecordBatch.IsTransactional = pid, true
	return r
}

func marker(at int64, pid int64, commit bool) *sarama.Records {
	typ := byte(0)
	if commit {
		typ = 1
	}
	b := &sarama.RecordBatch{Version: 2, FirstOffset: at, ProducerID: pid, IsTransactional: true, Control: true,
		Records: []*sarama.Record{{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 0}}}}
	return &sarama.Records{RecordBatch: b}
}

func TestDecodeBlock(t *testing.T) {
	type abort = sarama.AbortedTransaction
	tests := []struct {
		name        string
		set         []*sarama.Records
		aborted     []*abort
		pos, until  int64
		committed   bool
		wantOffsets []int64
		wantNext    int64
		wantBatches int
	}{
		{"two batches", []*sarama.Records{plain(0, 5), plain(5, 5)}, nil, 0, 10, false,
			[]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 2},
		{"position inside the first batch, until inside the second", []*sarama.Records{plain(0, 5), plain(5, 5)}, nil, 3, 8, false,
			[]int64{3, 4, 5, 6, 7}, 8, 2},
		{"compacted inside and at the end of a batch", []*sarama.Records{rbatch(0, 9, -1, false, 0, 4)}, nil, 0, 20, false,
			[]int64{0, 4}, 10, 1},
		{"range ends on a commit marker", []*sarama.Records{txn(0, 3, 7), marker(3, 7, true)}, nil, 0, 4, false,
			[]int64{0, 1, 2}, 4, 2},
		{"range ends on a commit marker, committed", []*sarama.Records{txn(0, 3, 7), marker(3, 7, true)}, nil, 0, 4, true,
			[]int64{0, 1, 2}, 4, 2},
		{"aborted, uncommitted", []*sarama.Records{txn(0, 3, 7), marker(3, 7, false), plain(4, 1)}, []*abort{{ProducerID: 7, FirstOffset: 0}}, 0, 5, false,
			[]int64{0, 1, 2, 4}, 5, 3},
		{"aborted, committed", []*sarama.Records{txn(0, 3, 7), marker(3, 7, false), plain(4, 1)}, []*abort{{ProducerID: 7, FirstOffset: 0}}, 0, 5, true,
			[]int64{4}, 5, 3},
		{"range over an aborted transaction only", []*sarama.Records{txn(0, 3, 7), marker(3, 7, false)}, []*abort{{ProducerID: 7, FirstOffset: 0}}, 0, 4, true,
			nil, 4, 2},
		{"range ending inside an aborted transaction", []*sarama.Records{txn(0, 3, 7), marker(3, 7, false)}, []*abort{{ProducerID: 7, FirstOffset: 0}}, 0, 2, true,
			nil, 2, 1},
		{"interleaved: 7 aborts, 8 commits", []*sarama.Records{txn(0, 2, 7), txn(2, 2, 8), marker(4, 7, false), txn(5, 1, 7), marker(6, 8, true)},
			[]*abort{{ProducerID: 7, FirstOffset: 0}}, 0, 7, true,
			[]int64{2, 3, 5}, 7, 5},
		{"aborted list out of order, pid reused after abort", []*sarama.Records{txn(0, 1, 7), marker(1, 7, false), txn(2, 1, 7), marker(3, 7, false), txn(4, 1, 7), marker(5, 7, true)},
			[]*abort{{ProducerID: 7, FirstOffset: 2}, {ProducerID: 7, FirstOffset: 0}}, 0, 6, true,
			[]int64{4}, 6, 6},
		{"gap before a batch past until ends the range", []*sarama.Records{plain(0, 3), plain(5, 3)}, nil, 0, 4, false,
			[]int64{0, 1, 2}, 4, 1},
		{"answer starting past until", []*sarama.Records{plain(5, 3)}, nil, 3, 4, false,
			nil, 4, 0},
		{"records past until are dropped", []*sarama.Records{plain(0, 10)}, nil, 0, 3, false,
			[]int64{0, 1, 2}, 3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blk := &sarama.FetchResponseBlock{RecordsSet: tc.set, AbortedTransactions: tc.aborted}
			d, err := DecodeBlock(blk, tp, tc.pos, tc.until, tc.committed)
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

func TestDecodeBlockPartialAndTimes(t *testing.T) {
	d, err := DecodeBlock(&sarama.FetchResponseBlock{Partial: true}, tp, 5, 10, false)
	if err != nil || !d.Partial || d.Next != 5 {
		t.Fatalf("partial block: %+v %v", d, err)
	}
	part := &sarama.Records{RecordBatch: &sarama.RecordBatch{FirstOffset: 5, PartialTrailingRecord: true}}
	d, err = DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{part}}, tp, 5, 10, false)
	if err != nil || !d.Partial || d.Next != 5 || d.Batches != 0 {
		t.Fatalf("partial batch: %+v %v", d, err)
	}
	d, err = DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{plain(5, 1), part}}, tp, 5, 10, false)
	if err != nil || d.Partial || d.Next != 6 || len(d.Msgs) != 1 {
		t.Fatalf("complete batch then partial: %+v %v", d, err)
	}

	r := plain(0, 2)
	d, _ = DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{r}}, tp, 0, 2, false)
	if got := d.Msgs[1].Timestamp; !got.Equal(time.UnixMilli(1001)) {
		t.Errorf("create time %v, want first timestamp + delta", got)
	}
	r.RecordBatch.LogAppendTime, r.RecordBatch.MaxTimestamp = true, time.UnixMilli(5000)
	d, _ = DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{r}}, tp, 0, 2, false)
	if got := d.Msgs[0].Timestamp; !got.Equal(time.UnixMilli(5000)) {
		t.Errorf("log append time %v, want the batch's max timestamp", got)
	}
}

// TestDecodeBlockTimestampRuns: deltas that repeat, come back, go
// negative (a producer setting its own times) or start above zero each
// give first timestamp + delta, in every batch of an answer, and every
// record's other fields are its own (records share one slab).
func TestDecodeBlockTimestampRuns(t *testing.T) {
	deltas := [][]time.Duration{
		{0, 0, 0, 3, 3, 0, -2, -2, 7},
		{5, 5, 0, 5},
	}
	var sets []*sarama.Records
	var want []time.Time
	off := int64(0)
	for i, ds := range deltas {
		first := time.UnixMilli(int64(10_000 * (i + 1)))
		b := &sarama.RecordBatch{Version: 2, FirstOffset: off, LastOffsetDelta: int32(len(ds) - 1), FirstTimestamp: first}
		for j, dt := range ds {
			b.Records = append(b.Records, &sarama.Record{OffsetDelta: int64(j), TimestampDelta: dt * time.Millisecond,
				Key: []byte{byte(off) + byte(j)}})
			want = append(want, first.Add(dt*time.Millisecond))
		}
		sets = append(sets, &sarama.Records{RecordBatch: b})
		off += int64(len(ds))
	}
	d, err := DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: sets}, tp, 0, NoEnd, false)
	if err != nil || len(d.Msgs) != len(want) {
		t.Fatalf("%d records, %v; want %d", len(d.Msgs), err, len(want))
	}
	for i, m := range d.Msgs {
		if !m.Timestamp.Equal(want[i]) || m.Offset != int64(i) || len(m.Key) != 1 || m.Key[0] != byte(i) || m.Headers != nil || m.Value != nil {
			t.Errorf("record %d: %+v, want timestamp %v", i, m, want[i])
		}
	}
}

func TestDecodeBlockLegacy(t *testing.T) {
	ms := &sarama.MessageSet{}
	for _, o := range []int64{3, 4, 7} {
		ms.Messages = append(ms.Messages, &sarama.MessageBlock{Offset: o, Msg: &sarama.Message{Key: []byte{byte(o)}, Value: []byte("v")}})
	}
	blk := &sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{{MsgSet: ms}}}
	d, err := DecodeBlock(blk, tp, 4, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Msgs) != 2 || d.Msgs[0].Offset != 4 || d.Msgs[1].Offset != 7 || d.Next != 8 {
		t.Fatalf("legacy: %+v", d)
	}
	d, _ = DecodeBlock(blk, tp, 3, 7, false)
	if len(d.Msgs) != 2 || d.Next != 7 {
		t.Fatalf("legacy until 7: %+v", d)
	}
}

// The stream reads without an end: NoEnd keeps every record and the
// position after the last batch.
func TestDecodeBlockWithoutEnd(t *testing.T) {
	blk := &sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{plain(0, 3), txn(3, 2, 7), marker(5, 7, false), plain(6, 1)},
		AbortedTransactions: []*sarama.AbortedTransaction{{ProducerID: 7, FirstOffset: 3}}}
	d, err := DecodeBlock(blk, tp, 1, NoEnd, true)
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
	d, _ = DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{rbatch(7, 4, -1, false)}}, tp, 7, NoEnd, false)
	if len(d.Msgs) != 0 || d.Next != 12 || d.Partial {
		t.Fatalf("empty batch: %+v", d)
	}
}

// A legacy message without a body is a malformed answer, not a record.
func TestDecodeBlockLegacyWithoutBody(t *testing.T) {
	ms := &sarama.MessageSet{Messages: []*sarama.MessageBlock{{Offset: 3}}}
	_, err := DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{{MsgSet: ms}}}, tp, 0, NoEnd, false)
	if err == nil || !strings.Contains(err.Error(), "offset 3") {
		t.Fatalf("err %v, want one naming offset 3", err)
	}
}

// TestDecodeBlockNegativeTimestamps: a batch whose first record has no
// timestamp (-1) gave the batch's other records dates in year 1 or 57
// (sarama reads the negative base as the zero time; helper-31 found it:
// replay printed 0057-01-01 for a record of 2026). The base comes back
// from the batch's largest timestamp; a record whose own time is negative
// has none (null in the JSON lines).
func TestDecodeBlockNegativeTimestamps(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Kafka's encoding: base = the first record's time, -1 here; deltas
	// from it; max = the largest time.
	times := []int64{-1, at.UnixMilli(), at.UnixMilli() + 5, -5000}
	b := &sarama.RecordBatch{Version: 2, FirstOffset: 0, LastOffsetDelta: int32(len(times) - 1),
		FirstTimestamp: time.Time{}, MaxTimestamp: time.UnixMilli(at.UnixMilli() + 5)} // as sarama decodes base -1
	for j, ms := range times {
		b.Records = append(b.Records, &sarama.Record{OffsetDelta: int64(j), TimestampDelta: time.Duration(ms+1) * time.Millisecond})
	}
	d, err := DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{{RecordBatch: b}}}, tp, 0, NoEnd, false)
	if err != nil || len(d.Msgs) != len(times) {
		t.Fatalf("%d records, %v", len(d.Msgs), err)
	}
	want := []time.Time{{}, at, at.Add(5 * time.Millisecond), {}}
	for i, m := range d.Msgs {
		if !m.Timestamp.Equal(want[i]) {
			t.Errorf("record %d: timestamp %v, want %v", i, m.Timestamp, want[i])
		}
	}

	// No record with a time: the largest is negative too.
	b.MaxTimestamp = time.Time{}
	d, err = DecodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{{RecordBatch: b}}}, tp, 0, NoEnd, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range d.Msgs {
		if !m.Timestamp.IsZero() {
			t.Errorf("record %d: timestamp %v, want none", i, m.Timestamp)
		}
	}
}
