package schema

import (
	"errors"
	"math/bits"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// Field is one top-level field of a decoded record, as DecodeValue builds
// it when asked for a few fields only.
type Field struct {
	Name  string
	Value any
}

// Scalars makes the Go value of each string, whole number, other number
// and boolean DecodeValue builds, in place of the string, int64, float64
// or bool itself: a program with values of its own (CEL's) gets them
// without a Go value built first and converted.
type Scalars interface {
	String(string) any
	Long(int64) any
	Double(float64) any
	Bool(bool) any
}

// Room is what DecodeValue reuses from one value to the next: the room for
// projected fields, Avro readers, the schema of the last id. The zero
// Room is ready to use. A Room is for one goroutine at a time, and what
// DecodeValue gave with it is valid until the Room is used again.
type Room struct {
	// Fields is where projected fields go: Result.Fields is Fields[:n].
	Fields []Field
	// Scalars, when set, makes the strings, numbers and booleans.
	Scalars Scalars
	// readers by bits.Len of the payload's length: each has the bound
	// of its class (avroConfigFor).
	readers [65]*avro.Reader
	// The entry of the last schema id this Room decoded with, and of
	// which decoder.
	dec   *Decoder
	id    int
	entry *entry
}

// reader is a reader for payload with its class's bounds: the Room's, or
// one from a pool when room is nil. release gives it back.
func (room *Room) reader(payload []byte) (*avro.Reader, *sync.Pool) {
	k := bits.Len(uint(len(payload)))
	if room == nil {
		pool, _ := avroReaders.Load(k)
		if pool == nil {
			pool, _ = avroReaders.LoadOrStore(k, &sync.Pool{New: func() any {
				return avro.NewReader(nil, 0, avro.WithReaderConfig(avroConfigFor(len(payload))))
			}})
		}
		return pool.(*sync.Pool).Get().(*avro.Reader), pool.(*sync.Pool)
	}
	r := room.readers[k]
	if r == nil {
		r = avro.NewReader(nil, 0, avro.WithReaderConfig(avroConfigFor(len(payload))))
		room.readers[k] = r
	}
	return r, nil
}

// release makes r forget its payload and puts it back in pool, if any.
func release(r *avro.Reader, pool *sync.Pool) {
	r.Reset(nil)
	if pool != nil {
		pool.Put(r)
	}
}

// avroValue decodes one Avro binary payload written with schema s into
// the Go values its JSON text (avroJSON) parses to: map[string]any for
// records and maps, []any, string, int64, float64, bool and nil; the same
// unions, logical types, bytes and fixed as text. Numbers keep their Avro
// type: a double is a float64 even when whole, and NaN and the infinities
// are float64s too; room.Scalars, when set, makes them instead. When only
// is not nil and s is a record, the result is fields instead: the fields
// only names, in schema order, appended to room.Fields[:0] (never nil),
// and the other fields are checked and skipped without building them.
// room may be nil.
func avroValue(s avro.Schema, payload []byte, only []string, room *Room) (v any, fields []Field, err error) {
	r, pool := room.reader(payload)
	defer release(r, pool)
	r.Reset(payload)
	r.Error = nil // Reset keeps the last value's
	d := avroDec{r: r, total: len(payload)}
	var into []Field
	if room != nil {
		d.sc, into = room.Scalars, room.Fields
	}
	if rs, ok := derefAvro(s).(*avro.RecordSchema); ok && only != nil {
		out := into[:0]
		if out == nil {
			out = make([]Field, 0, len(only))
		}
		for _, f := range rs.Fields() {
			if wanted(only, f.Name()) {
				out = append(out, Field{Name: f.Name(), Value: d.build(f.Type(), 1, true)})
			} else {
				d.build(f.Type(), 1, false)
			}
			if d.bad() {
				break
			}
		}
		fields = out
	} else {
		v = d.build(s, 0, true)
	}
	if d.err == nil && r.Error != nil {
		d.err = r.Error
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	var one [1]byte
	r.Read(one[:])
	if r.Error == nil {
		return nil, nil, errors.New("trailing bytes after the Avro value")
	}
	return v, fields, nil
}

// avroReaders holds pools of readers, one per avroConfigs class: a reader
// is an allocation and a buffer per value otherwise.
var avroReaders sync.Map // int (log2) -> *sync.Pool of *avro.Reader

func derefAvro(s avro.Schema) avro.Schema {
	for range 100 {
		r, ok := s.(*avro.RefSchema)
		if !ok {
			break
		}
		s = r.Schema()
	}
	return s
}

func wanted(only []string, name string) bool {
	for _, o := range only {
		if o == name {
			return true
		}
	}
	return false
}

// build reads one value of schema s; keep false checks it and skips it
// (nil), with the same bounds as when it is built.
func (d *avroDec) build(s avro.Schema, depth int, keep bool) any {
	if d.bad() {
		return nil
	}
	if depth > 200 {
		d.fail("Avro value nested too deep")
		return nil
	}
	switch t := s.(type) {
	case *avro.RefSchema:
		return d.build(t.Schema(), depth+1, keep)
	case *avro.NullSchema:
		return nil
	case *avro.PrimitiveSchema:
		return d.primitiveValue(t, keep)
	case *avro.RecordSchema:
		var m map[string]any
		if keep {
			m = make(map[string]any, len(t.Fields()))
		}
		for _, f := range t.Fields() {
			v := d.build(f.Type(), depth+1, keep)
			if d.bad() {
				return nil
			}
			if keep {
				m[f.Name()] = v
			}
		}
		if !keep {
			return nil
		}
		return m
	case *avro.EnumSchema:
		i := d.r.ReadInt()
		syms := t.Symbols()
		if d.bad() {
			return nil
		}
		if i < 0 || int(i) >= len(syms) {
			d.fail("Avro enum %s: index %d out of range", t.Name(), i)
			return nil
		}
		if !keep {
			return nil
		}
		return d.str(syms[i])
	case *avro.ArraySchema:
		var l []any
		if keep {
			l = []any{}
		}
		d.blocks(func() {
			v := d.build(t.Items(), depth+1, keep)
			if keep {
				l = append(l, v)
			}
		})
		if !keep || d.bad() {
			return nil
		}
		return l
	case *avro.MapSchema:
		var m map[string]any
		if keep {
			m = map[string]any{}
		}
		d.blocks(func() {
			k := d.r.ReadString()
			v := d.build(t.Values(), depth+1, keep)
			if keep {
				m[k] = v
			}
		})
		if !keep || d.bad() {
			return nil
		}
		return m
	case *avro.UnionSchema:
		i := d.r.ReadLong()
		types := t.Types()
		if d.bad() {
			return nil
		}
		if i < 0 || i >= int64(len(types)) {
			d.fail("Avro union branch %d out of range", i)
			return nil
		}
		b := types[i]
		if _, isNull := b.(*avro.NullSchema); isNull {
			return nil
		}
		v := d.build(b, depth+1, keep)
		if !keep || t.Nullable() || d.bad() {
			return v
		}
		return map[string]any{unionBranchName(b): v}
	case *avro.FixedSchema:
		n := t.Size()
		if n < 0 || n > d.total {
			d.fail("Avro fixed %s of %d bytes in a payload of %d", t.Name(), n, d.total)
			return nil
		}
		if !keep {
			d.r.SkipNBytes(n)
			return nil
		}
		b := make([]byte, n)
		d.r.Read(b)
		if d.bad() {
			return nil
		}
		if ls, ok := t.Logical().(*avro.DecimalLogicalSchema); ok {
			return d.str(decimalString(b, ls.Scale()))
		}
		return d.str(latin1(b))
	default:
		d.fail("Avro schema type %T not supported", s)
		return nil
	}
}

func (d *avroDec) primitiveValue(t *avro.PrimitiveSchema, keep bool) any {
	if !keep {
		switch t.Type() {
		case avro.Boolean:
			d.r.SkipBool()
		case avro.Int:
			d.r.SkipInt()
		case avro.Long:
			d.r.SkipLong()
		case avro.Float:
			d.r.SkipFloat()
		case avro.Double:
			d.r.SkipDouble()
		case avro.String, avro.Bytes:
			// A length past the payload fails as reading it would.
			if n := d.r.ReadLong(); n < 0 || n > int64(d.total) {
				d.fail("Avro %s of %d bytes in a payload of %d", t.Type(), n, d.total)
			} else {
				d.r.SkipNBytes(int(n))
			}
		default:
			d.fail("Avro type %s not supported", t.Type())
		}
		d.bad()
		return nil
	}
	logical, scale := logicalOf(t)
	switch t.Type() {
	case avro.Boolean:
		v := d.r.ReadBool()
		if d.bad() {
			return nil
		}
		if d.sc != nil {
			return d.sc.Bool(v)
		}
		return v
	case avro.Int:
		v := d.r.ReadInt()
		if d.bad() {
			return nil
		}
		switch avro.LogicalType(logical) {
		case avro.Date:
			return d.str(time.Unix(int64(v)*86400, 0).UTC().Format("2006-01-02"))
		case avro.TimeMillis:
			return d.str(clock(time.Duration(v) * time.Millisecond))
		}
		return d.long(int64(v))
	case avro.Long:
		v := d.r.ReadLong()
		if d.bad() {
			return nil
		}
		switch avro.LogicalType(logical) {
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			return d.str(stamp(time.UnixMilli(v), logical))
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return d.str(stamp(time.UnixMicro(v), logical))
		case avro.TimeMicros:
			return d.str(clock(time.Duration(v) * time.Microsecond))
		}
		return d.long(v)
	case avro.Float:
		v := d.r.ReadFloat()
		if d.bad() {
			return nil
		}
		// The float32 as its text shows it (0.1, not 0.10000000149).
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
		return d.double(f)
	case avro.Double:
		v := d.r.ReadDouble()
		if d.bad() {
			return nil
		}
		return d.double(v)
	case avro.String:
		v := d.r.ReadString()
		if d.bad() {
			return nil
		}
		return d.str(v)
	case avro.Bytes:
		v := d.r.ReadBytes()
		if d.bad() {
			return nil
		}
		if avro.LogicalType(logical) == avro.Decimal {
			return d.str(decimalString(v, scale))
		}
		return d.str(latin1(v))
	}
	d.fail("Avro type %s not supported", t.Type())
	return nil
}

// str, long and double are a value as d.sc makes it, or as it is.
func (d *avroDec) str(s string) any {
	if d.sc != nil {
		return d.sc.String(s)
	}
	return s
}

func (d *avroDec) long(n int64) any {
	if d.sc != nil {
		return d.sc.Long(n)
	}
	return n
}

func (d *avroDec) double(f float64) any {
	if d.sc != nil {
		return d.sc.Double(f)
	}
	return f
}

// latin1 is bytes as a string of code points U+0000–U+00FF, as in text.
func latin1(b []byte) string {
	s := make([]byte, 0, len(b))
	for _, c := range b {
		s = utf8.AppendRune(s, rune(c))
	}
	return string(s)
}
