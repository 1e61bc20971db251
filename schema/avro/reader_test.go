package avro

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	hamba "github.com/hamba/avro/v2"
)

func TestReaderBoundsLengthsByThePayload(t *testing.T) {
	for _, c := range []struct {
		name    string
		payload []byte
		want    string
	}{
		// zig-zag 2^40: a string of a terabyte, which must not be allocated.
		{"terabyte", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 'x'}, "bytes with 1 left"},
		{"one past", []byte{0x04, 'x'}, "of 2 bytes with 1 left"},
		{"negative", []byte{0x01, 'x'}, "negative length -1"},
		{"truncated length", []byte{0x80}, "payload ends inside an Avro long"},
		{"max long", []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "with 0 left"},
	} {
		for _, read := range []func(*Reader){func(r *Reader) { r.Bytes() }, func(r *Reader) { _ = r.String() }} {
			r := NewReader(c.payload)
			read(r)
			if r.Err() == nil || !strings.Contains(r.Err().Error(), c.want) {
				t.Errorf("%s: %v, want %q", c.name, r.Err(), c.want)
			}
		}
	}
	r := NewReader([]byte{0x04, 'a', 'b'})
	if b := r.Bytes(); string(b) != "ab" || r.Err() != nil || r.Left() != 0 {
		t.Fatalf("bytes %q, %v, %d left", b, r.Err(), r.Left())
	}
}

func TestReaderVarintOverflow(t *testing.T) {
	ff := func(n int, last byte) []byte { return append(bytes.Repeat([]byte{0xff}, n), last) }
	for _, c := range []struct {
		name    string
		payload []byte
		int     bool
		want    int64
		err     error
	}{
		{"long of 10 bytes, max", ff(9, 0x01), false, math.MinInt64, nil},
		{"long of 10 bytes, 65 bits", ff(9, 0x02), false, 0, ErrOverflow},
		{"long of 11 bytes", ff(10, 0x00), false, 0, ErrOverflow},
		{"long of 11 bytes, continuation", ff(11, 0x00), false, 0, ErrOverflow},
		{"int of 5 bytes, max", ff(4, 0x0f), true, math.MinInt32, nil},
		{"int of 5 bytes, 33 bits", ff(4, 0x1f), true, 0, ErrOverflow},
		{"int of 6 bytes", ff(5, 0x00), true, 0, ErrOverflow},
		{"int of 5 bytes, zero padded", []byte{0x80, 0x80, 0x80, 0x80, 0x00}, true, 0, nil},
	} {
		r := NewReader(c.payload)
		var got int64
		if c.int {
			got = int64(r.Int())
		} else {
			got = r.Long()
		}
		if !errors.Is(r.Err(), c.err) || (c.err == nil) != (r.Err() == nil) || got != c.want {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, got, r.Err(), c.want, c.err)
		}
	}
}

func TestReaderBlockCount(t *testing.T) {
	var w Writer
	w.Long(-3)
	w.Long(2) // a block of 3 items in 2 bytes
	w.Fixed([]byte{0, 0})
	r := NewReader(w.Bytes())
	if n := r.BlockCount(); n != 3 || r.Err() != nil {
		t.Fatalf("count %d, %v", n, r.Err())
	}
	for _, c := range []struct {
		name    string
		count   int64
		size    int64
		wantErr error
	}{
		{"size past the payload", -3, 5, ErrBlockSize},
		{"negative size", -3, -1, ErrBlockSize},
		{"lowest count", math.MinInt64, 0, nil},
	} {
		w.Reset()
		w.Long(c.count)
		w.Long(c.size)
		w.Fixed([]byte{0, 0})
		r := NewReader(w.Bytes())
		r.BlockCount()
		if r.Err() == nil || c.wantErr != nil && !errors.Is(r.Err(), c.wantErr) {
			t.Errorf("%s: %v", c.name, r.Err())
		}
	}
}

func TestReaderTruncatedAndSticky(t *testing.T) {
	for name, read := range map[string]func(*Reader){
		"bool":   func(r *Reader) { r.Bool() },
		"int":    func(r *Reader) { r.Int() },
		"long":   func(r *Reader) { r.Long() },
		"float":  func(r *Reader) { r.Float() },
		"double": func(r *Reader) { r.Double() },
		"bytes":  func(r *Reader) { r.Bytes() },
		"fixed":  func(r *Reader) { r.Fixed(4) },
		"block":  func(r *Reader) { r.BlockCount() },
	} {
		r := NewReader([]byte{0x02, 0x02, 0x02}[:1])
		r.Skip(1)
		read(r)
		if r.Err() == nil {
			t.Errorf("%s at the end of the payload: no error", name)
		}
		first := r.Err()
		r.Reset([]byte{0x02})
		if r.Err() != nil {
			t.Fatalf("Reset kept the error")
		}
		r.Fail(first)
		if r.Long() != 0 || r.Left() != 1 || r.Err() != first {
			t.Errorf("%s: reads after an error went on", name)
		}
	}
	r := NewReader([]byte{2})
	if r.Bool(); r.Err() == nil {
		t.Fatal("boolean byte 2 read")
	}
}

// What kbatch's Writer writes hamba's Reader reads, and what hamba's
// Writer writes kbatch's Reader reads, value for value.
func TestReaderAndWriterAgreeWithHamba(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		l := int64(rng.Uint64()) >> rng.IntN(64)
		i := int32(rng.Uint32()) >> rng.IntN(32)
		f := math.Float32frombits(rng.Uint32())
		d := math.Float64frombits(rng.Uint64())
		b := make([]byte, rng.IntN(40))
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		boolean := rng.IntN(2) == 1
		dec := new(big.Int).Rsh(new(big.Int).SetUint64(rng.Uint64()), uint(rng.IntN(64)))
		if rng.IntN(2) == 0 {
			dec.Neg(dec)
		}

		var w Writer
		w.Long(l)
		w.Int(i)
		w.Float(f)
		w.Double(d)
		w.WriteBytes(b)
		w.String(string(b))
		w.Bool(boolean)
		w.Decimal(dec)
		w.Block(2, func() { w.Long(l); w.Long(-l) })
		w.BlockCount(0)

		hr := hamba.NewReader(bytes.NewReader(w.Bytes()), 16)
		hl, hi, hf, hd := hr.ReadLong(), hr.ReadInt(), hr.ReadFloat(), hr.ReadDouble()
		hb, hs, hbool, hdec := hr.ReadBytes(), hr.ReadString(), hr.ReadBool(), hr.ReadBytes()
		n, _ := hr.ReadBlockHeader()
		b1, b2 := hr.ReadLong(), hr.ReadLong()
		end, _ := hr.ReadBlockHeader()
		if hr.Error != nil || hl != l || hi != i || math.Float32bits(hf) != math.Float32bits(f) || math.Float64bits(hd) != math.Float64bits(d) ||
			!bytes.Equal(hb, b) || hs != string(b) || hbool != boolean || n != 2 || b1 != l || b2 != -l || end != 0 {
			t.Fatalf("hamba read back %v %d %d %v %v %q %q %v %d %d %d %d", hr.Error, hl, hi, hf, hd, hb, hs, hbool, n, b1, b2, end)
		}
		// The decimal's bytes are the big-endian two's complement.
		back := new(big.Int).SetBytes(hdec)
		if len(hdec) > 0 && hdec[0]&0x80 != 0 {
			back.Sub(back, new(big.Int).Lsh(big.NewInt(1), uint(8*len(hdec))))
		}
		if back.Cmp(dec) != 0 || len(hdec) > 1 && (hdec[0] == 0 && hdec[1]&0x80 == 0 || hdec[0] == 0xff && hdec[1]&0x80 != 0) {
			t.Fatalf("decimal %s written as % x", dec, hdec)
		}

		var hw bytes.Buffer
		hwr := hamba.NewWriter(&hw, 16)
		hwr.WriteLong(l)
		hwr.WriteInt(i)
		hwr.WriteFloat(f)
		hwr.WriteDouble(d)
		hwr.WriteBytes(b)
		hwr.WriteString(string(b))
		hwr.WriteBool(boolean)
		if err := hwr.Flush(); err != nil {
			t.Fatal(err)
		}
		r := NewReader(hw.Bytes())
		rl, ri, rf, rd := r.Long(), r.Int(), r.Float(), r.Double()
		rb, rs, rbool := r.Bytes(), r.String(), r.Bool()
		if r.Err() != nil || r.Left() != 0 || rl != l || ri != i || math.Float32bits(rf) != math.Float32bits(f) || math.Float64bits(rd) != math.Float64bits(d) ||
			!bytes.Equal(rb, b) || rs != string(b) || rbool != boolean {
			t.Fatalf("kbatch read back %v %d %d %v %v %q %q %v", r.Err(), rl, ri, rf, rd, rb, rs, rbool)
		}
	}
}
