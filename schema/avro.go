package schema

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kbatch-dev/kbatch/schema/avro"
)

// maxAvroItems bounds the array and map entries of one Avro payload: an
// array of nulls costs no bytes per item, so a hostile block count could
// otherwise spin for ever.
const maxAvroItems = 1 << 20

// A payload's values and JSON text are bounded by its size: a null, an
// empty record or a record of nulls costs no byte, so an array of a
// million of them (a few bytes) would otherwise build millions of values
// or write gigabytes of text. Every other value costs at least a byte,
// and a record costs what its fields do, so a payload a schema describes
// stays far within both bounds.
const (
	avroValuesBase, avroValuesPerByte = 1 << 16, 8
	avroTextBase, avroTextPerByte     = 1 << 24, 64
)

// maxDecimalBits bounds the unscaled integer of a decimal kbatch shows
// (about 19,700 digits): turning a megabyte of it into digits takes
// seconds.
const maxDecimalBits = 1 << 16

// avroJSON decodes one Avro binary payload written with schema s and
// returns it as compact JSON. Unions of null and one other type show the
// value itself (or null); other unions show {"branch": value} as the Avro
// JSON encoding does. Logical types: timestamps as RFC 3339 text in UTC,
// dates as YYYY-MM-DD, times as HH:MM:SS.fff, decimals as exact decimal
// strings, uuids as strings (a fixed uuid in its 8-4-4-4-12 hex form).
// Bytes and fixed show as strings of code points U+0000–U+00FF, one per
// byte, as the Avro JSON encoding does.
func avroJSON(s *avro.Schema, payload []byte) (string, error) {
	d := avroDec{}
	d.reset(payload)
	d.value(s, 0)
	if err := d.end(); err != nil {
		return "", err
	}
	return d.out.String(), nil
}

type avroDec struct {
	r     avro.Reader
	sc    Scalars // avroValue's; nil: Go's own values
	alias bool    // avroValue's strings point into the payload
	out   bytes.Buffer
	items int
	// values and textLeft are the values left to decode and the most bytes
	// of text to write for this payload.
	values, textLeft int
	size             int // of the payload
}

// reset makes d decode payload, with its bounds.
func (d *avroDec) reset(payload []byte) {
	d.r.Reset(payload)
	d.size = len(payload)
	d.values = avroValuesBase + avroValuesPerByte*len(payload)
	d.textLeft = avroTextBase + avroTextPerByte*len(payload)
}

// spend counts one value against the payload's bound, and reports
// whether it is within it.
func (d *avroDec) spend() bool {
	d.values--
	if d.values < 0 {
		d.fail("more Avro values than a payload of %d bytes can hold", d.size)
		return false
	}
	return true
}

// end is the decoding's error, or an error for bytes left over: they
// mean the schema does not describe the payload.
func (d *avroDec) end() error {
	if err := d.r.Err(); err != nil {
		return err
	}
	if d.r.Left() > 0 {
		return errors.New("trailing bytes after the Avro value")
	}
	return nil
}

func (d *avroDec) fail(format string, a ...any) {
	d.r.Fail(fmt.Errorf(format, a...))
}

func (d *avroDec) bad() bool {
	return d.r.Err() != nil
}

func (d *avroDec) value(s *avro.Schema, depth int) {
	if d.bad() {
		return
	}
	if depth > 200 {
		d.fail("Avro value nested too deep")
		return
	}
	if !d.spend() {
		return
	}
	if d.out.Len() > d.textLeft {
		d.fail("more JSON text than Avro values of %d bytes can make", d.size)
		return
	}
	switch s.Kind {
	case avro.Null:
		d.out.WriteString("null")
	case avro.Record:
		d.out.WriteByte('{')
		for i, f := range s.Fields {
			if i > 0 {
				d.out.WriteByte(',')
			}
			writeJSONString(&d.out, f.Name)
			d.out.WriteByte(':')
			d.value(f.Type, depth+1)
			if d.bad() {
				return
			}
		}
		d.out.WriteByte('}')
	case avro.Enum:
		if sym, ok := d.symbol(s); ok {
			writeJSONString(&d.out, sym)
		}
	case avro.Array:
		d.list('[', ']', func() { d.value(s.Items, depth+1) })
	case avro.Map:
		d.list('{', '}', func() {
			writeJSONString(&d.out, string(d.r.StringBytes()))
			d.out.WriteByte(':')
			d.value(s.Values, depth+1)
		})
	case avro.Union:
		b, ok := d.branch(s)
		if !ok {
			return
		}
		if b.Kind == avro.Null {
			d.out.WriteString("null")
			return
		}
		if s.Nullable() {
			d.value(b, depth+1)
			return
		}
		d.out.WriteByte('{')
		writeJSONString(&d.out, b.TypeName())
		d.out.WriteByte(':')
		d.value(b, depth+1)
		d.out.WriteByte('}')
	case avro.Fixed:
		b := d.fixed(s)
		if d.bad() {
			return
		}
		switch s.Logical {
		case avro.Decimal:
			if text, ok := d.decimal(s, b); ok {
				writeJSONString(&d.out, text)
			}
		case avro.UUID:
			writeJSONString(&d.out, uuidString(b))
		default:
			writeLatin1(&d.out, b)
		}
	default:
		d.primitive(s)
	}
}

// symbol reads an enum's index and returns its symbol.
func (d *avroDec) symbol(s *avro.Schema) (string, bool) {
	i := d.r.Int()
	if d.bad() {
		return "", false
	}
	if i < 0 || int(i) >= len(s.Symbols) {
		d.fail("Avro enum %s: index %d out of range", s.Name, i)
		return "", false
	}
	return s.Symbols[i], true
}

// branch reads a union's index and returns its branch.
func (d *avroDec) branch(s *avro.Schema) (*avro.Schema, bool) {
	i := d.r.Long()
	if d.bad() {
		return nil, false
	}
	if i < 0 || i >= int64(len(s.Types)) {
		d.fail("Avro union branch %d out of range", i)
		return nil, false
	}
	return s.Types[i], true
}

// fixed reads the bytes of a fixed: the payload's own.
func (d *avroDec) fixed(s *avro.Schema) []byte {
	if s.Size > d.r.Left() {
		d.fail("Avro fixed %s of %d bytes with %d left in the payload", s.Name, s.Size, d.r.Left())
		return nil
	}
	return d.r.Fixed(s.Size)
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
		n := d.r.BlockCount()
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

func (d *avroDec) primitive(s *avro.Schema) {
	switch s.Kind {
	case avro.Boolean:
		v := d.r.Bool()
		if d.bad() {
			return
		}
		d.out.WriteString(strconv.FormatBool(v))
	case avro.Int:
		v := d.r.Int()
		if d.bad() {
			return
		}
		switch s.Logical {
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
		v := d.r.Long()
		if d.bad() {
			return
		}
		if s.Logical == avro.TimeMicros {
			writeTimeOfDay(&d.out, v, time.Microsecond)
			return
		}
		if text, ok := longText(v, s.Logical); ok {
			writeJSONString(&d.out, text)
			return
		}
		d.out.WriteString(strconv.FormatInt(v, 10))
	case avro.Float:
		v := d.r.Float()
		if d.bad() {
			return
		}
		writeFloat(&d.out, float64(v), 32)
	case avro.Double:
		v := d.r.Double()
		if d.bad() {
			return
		}
		writeFloat(&d.out, v, 64)
	case avro.String:
		v := d.r.StringBytes()
		if d.bad() {
			return
		}
		writeJSONString(&d.out, string(v))
	case avro.Bytes:
		v := d.r.Bytes()
		if d.bad() {
			return
		}
		if s.Logical == avro.Decimal {
			if text, ok := d.decimal(s, v); ok {
				writeJSONString(&d.out, text)
			}
			return
		}
		writeLatin1(&d.out, v)
	default:
		d.fail("Avro type %s not supported", s.Kind)
	}
}

// date is a date as YYYY-MM-DD, and false past the years 0000–9999
// that RFC 3339 writes: such a date shows as its number of days.
func date(days int32) (string, bool) {
	t := time.Unix(int64(days)*86400, 0)
	if !rfc3339Year(t) {
		return "", false
	}
	return t.UTC().Format("2006-01-02"), true
}

// rfc3339Year tells whether t falls in a year RFC 3339 writes, 0000 to
// 9999: kbatch's text of a timestamp is RFC 3339 or its number, never a
// year of other digits.
func rfc3339Year(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// longText is a long of a logical type as text, when it has one: a
// timestamp past the years RFC 3339 writes has none, and shows as its
// number.
func longText(v int64, logical string) (string, bool) {
	var t time.Time
	switch logical {
	case avro.TimestampMillis, avro.LocalTimestampMillis:
		t = time.UnixMilli(v)
	case avro.TimestampMicros, avro.LocalTimestampMicros:
		t = time.UnixMicro(v)
	case avro.TimestampNanos, avro.LocalTimestampNanos:
		t = time.Unix(0, v)
	default:
		return "", false
	}
	if !rfc3339Year(t) {
		return "", false
	}
	return stamp(t, logical), true
}

// uuidString is 16 bytes in the 8-4-4-4-12 hex form.
func uuidString(b []byte) string {
	var out [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexDigits[c>>4], hexDigits[c&0xf]
		j += 2
	}
	return string(out[:j])
}

// stamp formats a timestamp; local-timestamp-* have no zone, so no "Z".
func stamp(t time.Time, logical string) string {
	t = t.UTC()
	if len(logical) > 6 && logical[:6] == "local-" {
		return t.Format("2006-01-02T15:04:05.999999999")
	}
	return t.Format(time.RFC3339Nano)
}

// timeOfDay is a time-millis or time-micros of v units as HH:MM:SS.ffffff,
// and false when v is not within a day: such a value shows as its number.
// The range is checked before v is multiplied, which could wrap around.
func timeOfDay(v int64, unit time.Duration) (string, bool) {
	if v < 0 || v >= int64(24*time.Hour/unit) {
		return "", false
	}
	return time.Unix(0, 0).UTC().Add(time.Duration(v) * unit).Format("15:04:05.999999"), true
}

func writeTimeOfDay(out *bytes.Buffer, v int64, unit time.Duration) {
	if text, ok := timeOfDay(v, unit); ok {
		writeJSONString(out, text)
		return
	}
	out.WriteString(strconv.FormatInt(v, 10))
}

// decimal is the text of a decimal of schema s whose unscaled integer is
// b (two's complement, big-endian). Its digits are not checked against
// the precision, as Java's Avro and hamba do not on reading; one too
// large to show fails d before the cost of its digits is paid.
func (d *avroDec) decimal(s *avro.Schema, b []byte) (string, bool) {
	n := unscaled(b)
	if bits := n.BitLen(); bits > maxDecimalBits {
		d.fail("Avro decimal of %d bits is too large to show", bits)
		return "", false
	}
	return decimalText(n.String(), s.Scale), true
}

// unscaled is a two's-complement big-endian integer.
func unscaled(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	return n
}

// decimalString renders a two's-complement big-endian unscaled integer
// with scale digits after the point.
func decimalString(b []byte, scale int) string { return decimalText(unscaled(b).String(), scale) }

// maxPlainScale is the largest scale a decimal shows with all its zeros
// after the point; above it, it shows as its digits and an exponent
// ("5E-1500"), exact and short.
const maxPlainScale = 1000

// decimalText is the integer of digits (base 10, maybe signed) times
// 10^-scale, exactly.
func decimalText(digits string, scale int) string {
	if scale <= 0 {
		return digits
	}
	sign := ""
	if digits[0] == '-' {
		sign, digits = "-", digits[1:]
	}
	if scale > maxPlainScale {
		return sign + digits + "E-" + strconv.Itoa(scale)
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
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
