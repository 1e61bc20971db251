package testkafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
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
	// Codec compresses the records with Kafka's codec of that number
	// (CodecGzip … CodecZstd; CodecSnappy is a raw block, XerialSnappy
	// the xerial framing Java producers write); 0 and Snappy as before.
	Codec   int8
	Records []Rec
}

// Codecs of a batch's attributes; XerialSnappy is snappy (2) in the
// xerial framing.
const (
	CodecGzip    int8 = 1
	CodecSnappy  int8 = 2
	CodecLZ4     int8 = 3
	CodecZstd    int8 = 4
	XerialSnappy int8 = -2
)

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
	codec := b.Codec
	if b.Snappy && codec == 0 {
		codec = CodecSnappy
	}
	if codec != 0 {
		recs = Compress(codec, recs)
		attrs = uint16(max(codec, -codec))
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
	return Seal(append(h, recs...))
}

// Seal writes a v2 record batch's length and CRC-32C from its bytes, as
// a broker that means what it sends would: a test that changes a batch
// seals it again so that a client reads the change, not a CRC mismatch.
func Seal(batch []byte) []byte {
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], castagnoli))
	return batch
}

// Compress compresses a batch's records with codec (see Batch.Codec), as
// Kafka's producers frame them.
func Compress(codec int8, recs []byte) []byte {
	var buf bytes.Buffer
	w := Compressor(codec, &buf)
	if _, err := w.Write(recs); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Compressor is a writer of codec's compressed bytes to out, for records
// too large to hold whole (a bomb of zeros written as a stream); Close
// ends the frame. Raw and xerial snappy buffer everything written.
func Compressor(codec int8, out io.Writer) io.WriteCloser {
	switch codec {
	case 0:
		return nopCloser{out}
	case CodecGzip:
		return gzip.NewWriter(out)
	case CodecLZ4:
		return lz4.NewWriter(out)
	case CodecZstd:
		w, err := zstd.NewWriter(out, zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err)
		}
		return w
	case CodecSnappy, XerialSnappy:
		return &snappyWriter{out: out, xerial: codec == XerialSnappy}
	}
	panic(fmt.Sprintf("no codec %d", codec))
}

// snappyWriter writes what it was given as one raw snappy block, or as
// xerial-framed blocks of 32 KiB, on Close.
type snappyWriter struct {
	out    io.Writer
	xerial bool
	buf    []byte
}

func (w *snappyWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *snappyWriter) Close() error {
	if !w.xerial {
		_, err := w.out.Write(s2.EncodeSnappy(nil, w.buf))
		return err
	}
	out := xerial.Encode(nil, w.buf)
	_, err := w.out.Write(out)
	return err
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

// Bomb is a record batch at offset of one record whose value is n zero
// bytes, compressed with codec: a compression bomb, a few KiB on the wire
// for hundreds of MiB decompressed. The record is written to the
// compressor as a stream, so building it takes little memory (but raw
// and xerial snappy, which compress what they hold whole).
func Bomb(codec int8, offset, n int64) []byte {
	value := binary.AppendVarint(nil, n)
	one := 1 + 1 + 1 + 1 + int64(len(value)) + n + 1 // attributes, deltas, null key, value, no header
	var body bytes.Buffer
	w := Compressor(codec, &body)
	head := binary.AppendVarint(nil, one)
	head = append(head, 0, 0, 0)         // attributes, timestamp and offset deltas
	head = binary.AppendVarint(head, -1) // null key
	head = append(head, value...)        // the value's length
	if _, err := w.Write(head); err != nil {
		panic(err)
	}
	if _, err := io.CopyN(struct{ io.Writer }{w}, zeros{}, n); err != nil { // lz4.Writer's ReadFrom ends its frame
		panic(err)
	}
	if _, err := w.Write([]byte{0}); err != nil { // no header
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	h := Batch{First: offset, ProducerID: -1, FirstTS: 1000, MaxTS: 1000}.Encode() // its header; no record yet
	binary.BigEndian.PutUint16(h[21:], uint16(max(codec, -codec)))
	binary.BigEndian.PutUint32(h[57:], 1)
	return Seal(append(h, body.Bytes()...))
}

// nopCloser is an uncompressed "codec".
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
