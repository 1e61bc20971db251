package schema

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
)

// The decoder kbatch had on hamba/avro's schemas and Reader, kept as the
// oracle of the differential tests (avro_differential_test.go): the same
// walk over hamba's parse of the schema and hamba's reads of the bytes.

// hambaConfigs holds hamba configs whose MaxByteSliceSize is a power of
// two, one per payload size class: hamba allocates a bytes or string value
// before reading it, so its length must be bounded by the payload's.
var hambaConfigs sync.Map // int (log2) -> avro.API

func hambaConfigFor(n int) avro.API {
	k := bits.Len(uint(n))
	if c, ok := hambaConfigs.Load(k); ok {
		return c.(avro.API)
	}
	c, _ := hambaConfigs.LoadOrStore(k, avro.Config{MaxByteSliceSize: 1 << k}.Freeze())
	return c.(avro.API)
}

func hambaJSON(s avro.Schema, payload []byte) (string, error) {
	r := avro.NewReader(nil, 0, avro.WithReaderConfig(hambaConfigFor(len(payload)))).Reset(payload)
	d := hambaDec{r: r, total: len(payload)}
	d.value(s, 0)
	if d.err == nil && r.Error != nil {
		d.err = r.Error
	}
	if d.err != nil {
		return "", d.err
	}
	if r.Error == nil {
		// Bytes left over mean the schema does not describe the payload.
		var one [1]byte
		r.Read(one[:])
		if r.Error == nil {
			return "", errors.New("trailing bytes after the Avro value")
		}
	}
	return d.out.String(), nil
}

type hambaDec struct {
	r     *avro.Reader
	sc    Scalars // hambaValue's; nil: Go's own values
	out   bytes.Buffer
	err   error
	items int
	total int // payload length: no byte or fixed value is longer
}

func (d *hambaDec) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, a...)
	}
}

func (d *hambaDec) bad() bool {
	if d.err == nil && d.r.Error != nil {
		d.err = d.r.Error
	}
	return d.err != nil
}

func (d *hambaDec) value(s avro.Schema, depth int) {
	if d.bad() {
		return
	}
	if depth > 200 {
		d.fail("Avro value nested too deep")
		return
	}
	switch t := s.(type) {
	case *avro.RefSchema:
		d.value(t.Schema(), depth+1)
	case *avro.NullSchema:
		d.out.WriteString("null")
	case *avro.PrimitiveSchema:
		d.hambaPrimitive(t)
	case *avro.RecordSchema:
		d.out.WriteByte('{')
		for i, f := range t.Fields() {
			if i > 0 {
				d.out.WriteByte(',')
			}
			writeJSONString(&d.out, f.Name())
			d.out.WriteByte(':')
			d.value(f.Type(), depth+1)
			if d.bad() {
				return
			}
		}
		d.out.WriteByte('}')
	case *avro.EnumSchema:
		i := d.r.ReadInt()
		syms := t.Symbols()
		if d.bad() {
			return
		}
		if i < 0 || int(i) >= len(syms) {
			d.fail("Avro enum %s: index %d out of range", t.Name(), i)
			return
		}
		writeJSONString(&d.out, syms[i])
	case *avro.ArraySchema:
		d.list('[', ']', func() { d.value(t.Items(), depth+1) })
	case *avro.MapSchema:
		d.list('{', '}', func() {
			writeJSONString(&d.out, d.r.ReadString())
			d.out.WriteByte(':')
			d.value(t.Values(), depth+1)
		})
	case *avro.UnionSchema:
		i := d.r.ReadLong()
		types := t.Types()
		if d.bad() {
			return
		}
		if i < 0 || i >= int64(len(types)) {
			d.fail("Avro union branch %d out of range", i)
			return
		}
		b := types[i]
		if _, isNull := b.(*avro.NullSchema); isNull {
			d.out.WriteString("null")
			return
		}
		if t.Nullable() {
			d.value(b, depth+1)
			return
		}
		d.out.WriteByte('{')
		writeJSONString(&d.out, hambaBranchName(b))
		d.out.WriteByte(':')
		d.value(b, depth+1)
		d.out.WriteByte('}')
	case *avro.FixedSchema:
		n := t.Size()
		if n < 0 || n > d.total {
			d.fail("Avro fixed %s of %d bytes in a payload of %d", t.Name(), n, d.total)
			return
		}
		b := make([]byte, n)
		d.r.Read(b)
		if d.bad() {
			return
		}
		if ls, ok := t.Logical().(*avro.DecimalLogicalSchema); ok {
			writeJSONString(&d.out, decimalString(b, ls.Scale()))
			return
		}
		writeLatin1(&d.out, b)
	default:
		d.fail("Avro schema type %T not supported", s)
	}
}

// list writes open, the items of the blocks (each written by item)
// separated by commas, then end.
func (d *hambaDec) list(open, end byte, item func()) {
	d.out.WriteByte(open)
	first := true
	d.blocks(func() {
		if !first {
			d.out.WriteByte(',')
		}
		first = false
		item()
	})
	d.out.WriteByte(end)
}

// blocks reads Avro array/map blocks and calls item once per entry.
func (d *hambaDec) blocks(item func()) {
	for {
		n, _ := d.r.ReadBlockHeader()
		if d.bad() {
			return
		}
		if n == 0 {
			return
		}
		if n < 0 || n > maxAvroItems {
			d.fail("Avro block of %d items", n)
			return
		}
		for range n {
			d.items++
			if d.items > maxAvroItems {
				d.fail("more than %d Avro array or map items", maxAvroItems)
				return
			}
			item()
			if d.bad() {
				return
			}
		}
	}
}

func (d *hambaDec) hambaPrimitive(t *avro.PrimitiveSchema) {
	logical, scale := hambaLogical(t)
	switch t.Type() {
	case avro.Boolean:
		v := d.r.ReadBool()
		if d.bad() {
			return
		}
		d.out.WriteString(strconv.FormatBool(v))
	case avro.Int:
		v := d.r.ReadInt()
		if d.bad() {
			return
		}
		switch avro.LogicalType(logical) {
		case avro.Date:
			if text, ok := date(v); ok {
				writeJSONString(&d.out, text)
			} else {
				d.out.WriteString(strconv.FormatInt(int64(v), 10))
			}
		case avro.TimeMillis:
			writeTimeOfDay(&d.out, int64(v), time.Millisecond)
		default:
			d.out.WriteString(strconv.FormatInt(int64(v), 10))
		}
	case avro.Long:
		v := d.r.ReadLong()
		if d.bad() {
			return
		}
		if avro.LogicalType(logical) == avro.TimeMicros {
			writeTimeOfDay(&d.out, v, time.Microsecond)
		} else if text, ok := oracleStamp(v, logical); ok {
			writeJSONString(&d.out, text)
		} else {
			d.out.WriteString(strconv.FormatInt(v, 10))
		}
	case avro.Float:
		writeFloat(&d.out, float64(d.r.ReadFloat()), 32)
	case avro.Double:
		writeFloat(&d.out, d.r.ReadDouble(), 64)
	case avro.String:
		v := d.r.ReadString()
		if d.bad() {
			return
		}
		writeJSONString(&d.out, v)
	case avro.Bytes:
		v := d.r.ReadBytes()
		if d.bad() {
			return
		}
		if avro.LogicalType(logical) == avro.Decimal {
			writeJSONString(&d.out, decimalString(v, scale))
			return
		}
		writeLatin1(&d.out, v)
	default:
		d.fail("Avro type %s not supported", t.Type())
	}
}

func hambaBranchName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema().FullName()
	}
	return string(s.Type())
}

// hambaLogical is the logical type of a primitive ("" for none) and, for a
// decimal, its scale.
func hambaLogical(t *avro.PrimitiveSchema) (logical string, scale int) {
	ls := t.Logical()
	if ls == nil {
		return "", 0
	}
	if dl, ok := ls.(*avro.DecimalLogicalSchema); ok {
		scale = dl.Scale()
	}
	return string(ls.Type()), scale
}

func hambaValue(s avro.Schema, payload []byte, only []string, room *Room) (v any, fields []Field, err error) {
	r := avro.NewReader(nil, 0, avro.WithReaderConfig(hambaConfigFor(len(payload)))).Reset(payload)
	r.Error = nil // Reset keeps the last value's
	d := hambaDec{r: r, total: len(payload)}
	var into []Field
	if room != nil {
		d.sc, into = room.Scalars, room.Fields
	}
	if rs, ok := hambaDeref(s).(*avro.RecordSchema); ok && only != nil {
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

func hambaDeref(s avro.Schema) avro.Schema {
	for range 100 {
		r, ok := s.(*avro.RefSchema)
		if !ok {
			break
		}
		s = r.Schema()
	}
	return s
}

// build reads one value of schema s; keep false checks it and skips it
// (nil), with the same bounds as when it is built.
func (d *hambaDec) build(s avro.Schema, depth int, keep bool) any {
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
		return d.hambaPrimitiveValue(t, keep)
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
		return map[string]any{hambaBranchName(b): v}
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

func (d *hambaDec) hambaPrimitiveValue(t *avro.PrimitiveSchema, keep bool) any {
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
	logical, scale := hambaLogical(t)
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
			if text, ok := date(v); ok {
				return d.str(text)
			}
		case avro.TimeMillis:
			if text, ok := timeOfDay(int64(v), time.Millisecond); ok {
				return d.str(text)
			}
		}
		return d.long(int64(v))
	case avro.Long:
		v := d.r.ReadLong()
		if d.bad() {
			return nil
		}
		if avro.LogicalType(logical) == avro.TimeMicros {
			if text, ok := timeOfDay(v, time.Microsecond); ok {
				return d.str(text)
			}
		} else if text, ok := oracleStamp(v, logical); ok {
			return d.str(text)
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
func (d *hambaDec) str(s string) any {
	if d.sc != nil {
		return d.sc.String(s)
	}
	return s
}

func (d *hambaDec) long(n int64) any {
	if d.sc != nil {
		return d.sc.Long(n)
	}
	return n
}

func (d *hambaDec) double(f float64) any {
	if d.sc != nil {
		return d.sc.Double(f)
	}
	return f
}

// oracleStamp is a timestamp of hamba's logical types as kbatch shows it:
// RFC 3339 within the years it writes, else no text.
func oracleStamp(v int64, logical string) (string, bool) {
	var t time.Time
	switch avro.LogicalType(logical) {
	case avro.TimestampMillis, avro.LocalTimestampMillis:
		t = time.UnixMilli(v)
	case avro.TimestampMicros, avro.LocalTimestampMicros:
		t = time.UnixMicro(v)
	default:
		return "", false
	}
	if !rfc3339Year(t) {
		return "", false
	}
	return stamp(t, logical), true
}
