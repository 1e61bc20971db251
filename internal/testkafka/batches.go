package testkafka

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/klauspost/compress/s2"
)

// Record batches and legacy messages written byte for byte as Kafka
// writes them, for tests that hand a client an answer of their own
// (a kfake ControlKey on Fetch, or a decoder's input).

// Rec is one record of a Batch.
type Rec struct {
	OffsetDelta, TimestampDelta int64
	Key, Value                  []byte
	Headers                     [][2][]byte
}

// Batch is a record batch of message format v2.
type Batch struct {
	First          int64
	LastDelta      int32
	Epoch          int32
	FirstTS, MaxTS int64
	ProducerID     int64
	Transactional  bool
	Control        bool
	LogAppend      bool
	Snappy         bool // the records as one raw snappy block
	Records        []Rec
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func varbytes(out, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(out, -1)
	}
	return append(binary.AppendVarint(out, int64(len(b))), b...)
}

// Encode writes the batch, with its CRC-32C.
func (b Batch) Encode() []byte {
	var recs []byte
	for _, r := range b.Records {
		one := []byte{0}
		one = binary.AppendVarint(one, r.TimestampDelta)
		one = binary.AppendVarint(one, r.OffsetDelta)
		one = varbytes(one, r.Key)
		one = varbytes(one, r.Value)
		one = binary.AppendVarint(one, int64(len(r.Headers)))
		for _, h := range r.Headers {
			one = varbytes(one, h[0])
			one = varbytes(one, h[1])
		}
		recs = binary.AppendVarint(recs, int64(len(one)))
		recs = append(recs, one...)
	}
	var attrs uint16
	if b.Snappy {
		recs, attrs = s2.EncodeSnappy(nil, recs), 2
	}
	if b.LogAppend {
		attrs |= 8
	}
	if b.Transactional {
		attrs |= 0x10
	}
	if b.Control {
		attrs |= 0x20
	}
	const header = 61
	h := make([]byte, header)
	binary.BigEndian.PutUint64(h[0:], uint64(b.First))
	binary.BigEndian.PutUint32(h[8:], uint32(header-12+len(recs)))
	binary.BigEndian.PutUint32(h[12:], uint32(b.Epoch))
	h[16] = 2
	binary.BigEndian.PutUint16(h[21:], attrs)
	binary.BigEndian.PutUint32(h[23:], uint32(b.LastDelta))
	binary.BigEndian.PutUint64(h[27:], uint64(b.FirstTS))
	binary.BigEndian.PutUint64(h[35:], uint64(b.MaxTS))
	binary.BigEndian.PutUint64(h[43:], uint64(b.ProducerID))
	binary.BigEndian.PutUint32(h[57:], uint32(len(b.Records)))
	out := append(h, recs...)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoli))
	return out
}

// At is a batch from first to last holding records at the given offsets
// (key the offset's low byte, value "v", timestamp 1000 + delta): what a
// compacted log holds when offsets are missing.
func At(first, last int64, offs ...int64) Batch {
	b := Batch{First: first, LastDelta: int32(last - first), ProducerID: -1, FirstTS: 1000, MaxTS: 1000}
	for _, o := range offs {
		d := o - first
		b.Records = append(b.Records, Rec{OffsetDelta: d, TimestampDelta: d, Key: []byte{byte(o)}, Value: []byte("v")})
		b.MaxTS = max(b.MaxTS, 1000+d)
	}
	return b
}

// Legacy writes one message of format v0 or v1 (magic) at offset; codec
// is its attributes (compression codec, and 8 for log-append time).
func Legacy(magic int8, offset int64, codec int8, ts int64, key, value []byte) []byte {
	body := []byte{byte(magic), byte(codec)}
	if magic >= 1 {
		body = binary.BigEndian.AppendUint64(body, uint64(ts))
	}
	for _, b := range [][]byte{key, value} {
		if b == nil {
			body = binary.BigEndian.AppendUint32(body, ^uint32(0))
			continue
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(b)))
		body = append(body, b...)
	}
	out := binary.BigEndian.AppendUint64(nil, uint64(offset))
	out = binary.BigEndian.AppendUint32(out, uint32(4+len(body)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
	return append(out, body...)
}
