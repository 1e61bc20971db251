package kafka

import (
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// FuzzDecodeSealedBatch mutates a record batch and seals it again (its
// length and CRC-32C written from the mutated bytes, testkafka.Seal), so
// that mutations reach the records' decoding rather than stop at the CRC
// check. Seeded with a batch of every codec. Whatever the bytes, decoding
// does not panic, stays within the limit, and delivers records in
// strictly increasing order inside the batch's [base, base+lastDelta]
// and [pos, Next); a batch it refuses is a CorruptBatchError at its
// base offset with nothing of it delivered.
func FuzzDecodeSealedBatch(f *testing.F) {
	recs := []trec{
		{Key: []byte("k"), Value: []byte("value"), Headers: [][2][]byte{{[]byte("h"), []byte("v")}}},
		{OffsetDelta: 1, TimestampDelta: 3, Value: []byte("second")},
		{OffsetDelta: 3, Key: []byte("compacted gap before")},
	}
	for _, codec := range []int8{0, testkafka.CodecGzip, testkafka.CodecSnappy, testkafka.XerialSnappy, testkafka.CodecLZ4, testkafka.CodecZstd} {
		b := testkafka.Batch{First: 100, LastDelta: 3, ProducerID: -1, FirstTS: 1000, MaxTS: 1003, Codec: codec, Records: recs}
		f.Add(b.Encode(), int64(100), false)
		if codec != 0 {
			f.Add(testkafka.Bomb(codec, 100, 128<<10), int64(0), false) // past the limit
		}
	}
	const limit = 64 << 10
	f.Fuzz(func(t *testing.T, batch []byte, pos int64, committed bool) {
		if len(batch) < batchHeader || pos < 0 {
			return
		}
		batch[16] = 2 // magic: a record batch
		raw := testkafka.Seal(batch)
		b, perr := parseBatch(raw)
		d, err := DecodeLimited(raw, nil, tp, pos, NoEnd, committed, Limits{Budget: NoBudget, MaxBatch: limit})
		if err != nil {
			c, ok := IsCorrupt(err)
			switch {
			case !ok:
				t.Fatalf("error %v is not a corrupt batch", err)
			case c.Offset != b.base:
				t.Fatalf("corrupt batch at %d, the batch is at %d", c.Offset, b.base)
			case len(d.Msgs) > 0 || d.Next != pos:
				t.Fatalf("%d records, next %d from a corrupt batch read at %d", len(d.Msgs), d.Next, pos)
			}
			return
		}
		if perr != nil {
			t.Fatalf("a batch parseBatch refuses (%v) decoded", perr)
		}
		last := pos - 1
		for _, m := range d.Msgs {
			if m.Offset <= last || m.Offset < b.base || m.Offset > b.last() || m.Offset >= d.Next {
				t.Fatalf("record at %d after %d, batch [%d, %d], next %d", m.Offset, last, b.base, b.last(), d.Next)
			}
			if len(m.Key)+len(m.Value) > limit {
				t.Fatalf("a record of %d bytes under a limit of %d", len(m.Key)+len(m.Value), limit)
			}
			last = m.Offset
		}
	})
}
