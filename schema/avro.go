package schema

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// maxAvroItems bounds the array and map entries of one Avro payload: an
// array of nulls costs no bytes per item, so a hostile block count could
// otherwise spin for ever.
const maxAvroItems = 1 << 20

// avroConfigs holds hamba configs whose MaxByteSliceSize is a power of
// two, one per payload size class: hamba allocates a bytes or string value
// before reading it, so its length must be bounded by the payload's.
var avroConfigs sync.Map // int (log2) -> avro.API

func avroConfigFor(n int) avro.API {
	k := bits.Len(uint(n))
	if c, ok := avroConfigs.Load(k); ok {
		return c.(avro.API)
	}
	c, _ := avroConfigs.LoadOrStore(k, avro.Config{MaxByteSliceSize: 1 << k}.Freeze())
	return c.(avro.API)
}

// avroJSON decodes one Avro binary payload written with schema s and
// returns it as compact JSON. Unions of null and one other type show the
// value itself (or null); other unions show {"branch": value} as the Avro
// JSON encoding does. Logical types: timestamps as RFC 3339 text in UTC,
// dates as YYYY-MM-DD, times as HH:MM:SS.fff, decimals as exact decimal
// strings, uuids as strings. Bytes and fixed show as strings of code
// points U+0000–U+00FF, one per byte, as the Avro JSON encoding does.
func avroJSON(s avro.Schema, payload []byte) (string, error) {
	r := avro.NewReader(nil, 0, avro.WithReaderConfig(avroConfigFor(len(payload)))).Reset(payload)
	d := avroDec{r: r, total: len(payload)}
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

type avroDec struct {
	r     *avro.Reader
	sc    Scalars // avroValue's; nil: Go's own values
	out   bytes.Buffer
	err   error
	items int
	total int // payload length: no byte or fixed value is longer
}

func (d *avroDec) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, a...)
	}
}

func (d *avroDec) bad() bool {
	if d.err == nil && d.r.Error != nil {
		d.err = d.r.Error
	}
	return d.err != nil
}

func (d *avroDec) value(s avro.Schema, depth int) {
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
		d.primitive(t)
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
		writeJSONString(&d.out, unionBranchName(b))
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
func (d *avroDec) list(open, end byte, item func()) {
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
func (d *avroDec) blocks(item func()) {
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

func (d *avroDec) primitive(t *avro.PrimitiveSchema) {
	logical, scale := logicalOf(t)
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
			writeJSONString(&d.out, time.Unix(int64(v)*86400, 0).UTC().Format("2006-01-02"))
		case avro.TimeMillis:
			writeJSONString(&d.out, clock(time.Duration(v)*time.Millisecond))
		default:
			d.out.WriteString(strconv.FormatInt(int64(v), 10))
		}
	case avro.Long:
		v := d.r.ReadLong()
		if d.bad() {
			return
		}
		switch avro.LogicalType(logical) {
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			writeJSONString(&d.out, stamp(time.UnixMilli(v), logical))
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			writeJSONString(&d.out, stamp(time.UnixMicro(v), logical))
		case avro.TimeMicros:
			writeJSONString(&d.out, clock(time.Duration(v)*time.Microsecond))
		default:
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

func unionBranchName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema().FullName()
	}
	return string(s.Type())
}

// logicalOf is the logical type of a primitive ("" for none) and, for a
// decimal, its scale.
func logicalOf(t *avro.PrimitiveSchema) (logical string, scale int) {
	ls := t.Logical()
	if ls == nil {
		return "", 0
	}
	if dl, ok := ls.(*avro.DecimalLogicalSchema); ok {
		scale = dl.Scale()
	}
	return string(ls.Type()), scale
}

// stamp formats a timestamp; local-timestamp-* have no zone, so no "Z".
func stamp(t time.Time, logical string) string {
	t = t.UTC()
	if len(logical) > 6 && logical[:6] == "local-" {
		return t.Format("2006-01-02T15:04:05.999999")
	}
	return t.Format(time.RFC3339Nano)
}

func clock(d time.Duration) string {
	if d < 0 || d >= 24*time.Hour {
		return strconv.FormatInt(int64(d/time.Microsecond), 10)
	}
	return time.Unix(0, 0).UTC().Add(d).Format("15:04:05.999999")
}

// decimalString renders a two's-complement big-endian unscaled integer
// with scale digits after the point.
func decimalString(b []byte, scale int) string {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	if scale <= 0 || scale > 1000 {
		return n.String()
	}
	return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale)
}

func writeFloat(out *bytes.Buffer, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		out.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		out.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		out.WriteString(`"-Infinity"`)
	default:
		out.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	}
}

// writeLatin1 writes bytes as a JSON string of code points U+0000–U+00FF.
func writeLatin1(out *bytes.Buffer, b []byte) {
	var s []byte
	for _, c := range b {
		s = utf8.AppendRune(s, rune(c))
	}
	writeJSONString(out, string(s))
}
