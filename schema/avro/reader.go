package avro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The errors of a Reader that a looser reader might let pass: a varint
// with bits beyond its type, a block's byte size that the payload cannot
// hold, a boolean byte other than 0 and 1.
var (
	ErrOverflow  = errors.New("varint overflows its type")
	ErrBlockSize = errors.New("block byte size out of the payload")
	ErrBoolean   = errors.New("boolean byte neither 0 nor 1")
)

// Reader reads the Avro binary encoding from one payload. After the
// first error every read returns zero values and Err returns that error.
// The zero Reader reads an empty payload.
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader is a Reader of payload.
func NewReader(payload []byte) *Reader { return &Reader{buf: payload} }

// Reset makes r read payload from its start, with no error.
func (r *Reader) Reset(payload []byte) { *r = Reader{buf: payload} }

// Err is the first error of r, or nil.
func (r *Reader) Err() error { return r.err }

// Left is how many bytes of the payload are not read yet.
func (r *Reader) Left() int { return len(r.buf) - r.off }

// Fail records err as r's error unless it has one.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *Reader) truncated(what string) {
	r.Fail(fmt.Errorf("payload ends inside an Avro %s", what))
}

// varint reads a zig-zag varint of at most max bytes whose unsigned value
// is at most limit.
func (r *Reader) varint(what string, max int, limit uint64) int64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	var s uint
	for i := 0; i < max; i++ {
		if r.off >= len(r.buf) {
			r.truncated(what)
			return 0
		}
		b := r.buf[r.off]
		r.off++
		v |= uint64(b&0x7f) << s
		if b < 0x80 {
			// The last byte may carry bits beyond 64 (shifted out) or
			// beyond limit.
			if i == max-1 && uint64(b&0x7f) > limit>>s {
				break
			}
			return int64(v>>1) ^ -int64(v&1)
		}
		s += 7
	}
	r.Fail(fmt.Errorf("Avro %s: %w", what, ErrOverflow))
	return 0
}

// Long reads a long: at most 10 bytes.
func (r *Reader) Long() int64 { return r.varint("long", 10, math.MaxUint64) }

// Int reads an int: at most 5 bytes, within 32 bits.
func (r *Reader) Int() int32 { return int32(r.varint("int", 5, math.MaxUint32)) }

// Bool reads a boolean: one byte, 0 or 1.
func (r *Reader) Bool() bool {
	if r.err != nil {
		return false
	}
	if r.off >= len(r.buf) {
		r.truncated("boolean")
		return false
	}
	b := r.buf[r.off]
	r.off++
	if b > 1 {
		r.Fail(fmt.Errorf("Avro boolean byte %d: %w", b, ErrBoolean))
		return false
	}
	return b == 1
}

// Fixed reads n bytes. The slice is the payload's own: valid while the
// payload is, and not to be changed.
func (r *Reader) Fixed(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.Left() {
		r.Fail(fmt.Errorf("Avro value of %d bytes with %d left in the payload", n, r.Left()))
		return nil
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// Float reads a float: 4 bytes, little-endian IEEE 754.
func (r *Reader) Float() float32 {
	if r.Left() < 4 {
		r.truncated("float")
		return 0
	}
	b := r.Fixed(4)
	if b == nil {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

// Double reads a double: 8 bytes, little-endian IEEE 754.
func (r *Reader) Double() float64 {
	if r.Left() < 8 {
		r.truncated("double")
		return 0
	}
	b := r.Fixed(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// Bytes reads bytes: a long length, then as many bytes, checked against
// what is left before any of them is read. The slice is the payload's
// own, as with Fixed.
func (r *Reader) Bytes() []byte { return r.lengthThen("bytes") }

// String reads a string as Bytes does, and copies it.
func (r *Reader) String() string { return string(r.lengthThen("string")) }

// StringBytes reads a string as Bytes does, without copying it.
func (r *Reader) StringBytes() []byte { return r.lengthThen("string") }

func (r *Reader) lengthThen(what string) []byte {
	n := r.Long()
	if r.err != nil {
		return nil
	}
	if n < 0 {
		r.Fail(fmt.Errorf("Avro %s of negative length %d", what, n))
		return nil
	}
	if n > int64(r.Left()) {
		r.Fail(fmt.Errorf("Avro %s of %d bytes with %d left in the payload", what, n, r.Left()))
		return nil
	}
	return r.Fixed(int(n))
}

// BlockCount reads the header of an array or map block: its item count,
// 0 for the end. A negative count is followed by the block's size in
// bytes, which must fit in what is left; the count is then its absolute
// value. The caller bounds the count.
func (r *Reader) BlockCount() int64 {
	n := r.Long()
	if r.err != nil || n >= 0 {
		return n
	}
	if n == math.MinInt64 {
		r.Fail(fmt.Errorf("Avro block of %d items", n))
		return 0
	}
	size := r.Long()
	if r.err != nil {
		return 0
	}
	if size < 0 || size > int64(r.Left()) {
		r.Fail(fmt.Errorf("Avro block of %d bytes with %d left in the payload: %w", size, r.Left(), ErrBlockSize))
		return 0
	}
	return -n
}

// Skip skips n bytes.
func (r *Reader) Skip(n int) { r.Fixed(n) }
