package avro

import (
	"encoding/binary"
	"math"
	"math/big"
)

// Writer appends the Avro binary encoding of values to a buffer. The
// zero Writer is empty and ready.
type Writer struct {
	buf []byte
}

// Bytes is what w holds.
func (w *Writer) Bytes() []byte { return w.buf }

// Reset empties w, keeping its room.
func (w *Writer) Reset() { w.buf = w.buf[:0] }

// Long writes a long as a zig-zag varint.
func (w *Writer) Long(v int64) {
	w.buf = binary.AppendUvarint(w.buf, uint64(v<<1)^uint64(v>>63))
}

// Int writes an int.
func (w *Writer) Int(v int32) { w.Long(int64(v)) }

// Bool writes a boolean.
func (w *Writer) Bool(v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	w.buf = append(w.buf, b)
}

// Float writes a float.
func (w *Writer) Float(v float32) {
	w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(v))
}

// Double writes a double.
func (w *Writer) Double(v float64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(v))
}

// WriteBytes writes bytes: the length, then b.
func (w *Writer) WriteBytes(b []byte) {
	w.Long(int64(len(b)))
	w.buf = append(w.buf, b...)
}

// String writes a string.
func (w *Writer) String(s string) {
	w.Long(int64(len(s)))
	w.buf = append(w.buf, s...)
}

// Fixed writes b as it is, for a fixed of len(b) bytes.
func (w *Writer) Fixed(b []byte) { w.buf = append(w.buf, b...) }

// BlockCount writes the count of an array or map block: items follow,
// then BlockCount(0) after the last block.
func (w *Writer) BlockCount(n int) { w.Long(int64(n)) }

// Block writes one array or map block of n items, which items writes,
// as a negative count and the block's size in bytes, so that a reader
// can skip it; BlockCount(0) ends the array or map after the last block.
func (w *Writer) Block(n int, items func()) {
	start := len(w.buf)
	items()
	body := append([]byte(nil), w.buf[start:]...)
	w.buf = w.buf[:start]
	w.Long(-int64(n))
	w.Long(int64(len(body)))
	w.buf = append(w.buf, body...)
}

// Decimal writes a bytes decimal: the unscaled value as the shortest
// big-endian two's complement.
func (w *Writer) Decimal(unscaled *big.Int) { w.WriteBytes(TwosComplement(unscaled)) }

// TwosComplement is n as the shortest big-endian two's complement.
func TwosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n-1 has the complement's bits inverted.
	m := new(big.Int).Not(n).Bytes()
	if len(m) == 0 || m[0]&0x80 != 0 {
		m = append([]byte{0}, m...)
	}
	for i := range m {
		m[i] = ^m[i]
	}
	return m
}
