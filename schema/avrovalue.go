package schema

import (
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/kbatch-dev/kbatch/schema/avro"
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
// projected fields, the schema of the last id. The zero Room is ready to
// use. A Room is for one goroutine at a time, and what DecodeValue gave
// with it is valid until the Room is used again.
type Room struct {
	// Fields is where projected fields go: Result.Fields is Fields[:n].
	Fields []Field
	// Scalars, when set, makes the strings, numbers and booleans.
	Scalars Scalars
	// The entry of the last schema id this Room decoded with, and of
	// which decoder.
	dec   *Decoder
	id    int
	entry *entry
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
// room may be nil; with a room, strings point into payload rather than
// being copied (DecodeValue).
func avroValue(s *avro.Schema, payload []byte, only []string, room *Room) (v any, fields []Field, err error) {
	d := avroDec{}
	d.reset(payload)
	var into []Field
	if room != nil {
		d.sc, into, d.alias = room.Scalars, room.Fields, true
	}
	if s.Kind == avro.Record && only != nil {
		out := into[:0]
		if out == nil {
			out = make([]Field, 0, len(only))
		}
		for _, f := range s.Fields {
			if wanted(only, f.Name) {
				out = append(out, Field{Name: f.Name, Value: d.build(f.Type, 1, true)})
			} else {
				d.build(f.Type, 1, false)
			}
			if d.bad() {
				break
			}
		}
		fields = out
	} else {
		v = d.build(s, 0, true)
	}
	if err := d.end(); err != nil {
		return nil, nil, err
	}
	return v, fields, nil
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
func (d *avroDec) build(s *avro.Schema, depth int, keep bool) any {
	if d.bad() {
		return nil
	}
	if depth > 200 {
		d.fail("Avro value nested too deep")
		return nil
	}
	if !d.spend() {
		return nil
	}
	switch s.Kind {
	case avro.Null:
		return nil
	case avro.Record:
		var m map[string]any
		if keep {
			m = make(map[string]any, len(s.Fields))
		}
		for _, f := range s.Fields {
			v := d.build(f.Type, depth+1, keep)
			if d.bad() {
				return nil
			}
			if keep {
				m[f.Name] = v
			}
		}
		if !keep {
			return nil
		}
		return m
	case avro.Enum:
		sym, ok := d.symbol(s)
		if !ok || !keep {
			return nil
		}
		return d.str(sym)
	case avro.Array:
		var l []any
		if keep {
			l = []any{}
		}
		d.blocks(func() {
			v := d.build(s.Items, depth+1, keep)
			if keep {
				l = append(l, v)
			}
		})
		if !keep || d.bad() {
			return nil
		}
		return l
	case avro.Map:
		var m map[string]any
		if keep {
			m = map[string]any{}
		}
		d.blocks(func() {
			k := d.r.StringBytes()
			v := d.build(s.Values, depth+1, keep)
			if keep {
				m[d.text(k)] = v
			}
		})
		if !keep || d.bad() {
			return nil
		}
		return m
	case avro.Union:
		b, ok := d.branch(s)
		if !ok || b.Kind == avro.Null {
			return nil
		}
		v := d.build(b, depth+1, keep)
		if !keep || s.Nullable() || d.bad() {
			return v
		}
		return map[string]any{b.TypeName(): v}
	case avro.Fixed:
		b := d.fixed(s)
		if !keep || d.bad() {
			return nil
		}
		switch s.Logical {
		case avro.Decimal:
			text, ok := d.decimal(s, b)
			if !ok {
				return nil
			}
			return d.str(text)
		case avro.UUID:
			return d.str(uuidString(b))
		}
		return d.str(latin1(b))
	default:
		return d.primitiveValue(s, keep)
	}
}

func (d *avroDec) primitiveValue(s *avro.Schema, keep bool) any {
	switch s.Kind {
	case avro.Boolean:
		v := d.r.Bool()
		if !keep || d.bad() {
			return nil
		}
		if d.sc != nil {
			return d.sc.Bool(v)
		}
		return v
	case avro.Int:
		v := d.r.Int()
		if !keep || d.bad() {
			return nil
		}
		switch s.Logical {
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
		v := d.r.Long()
		if !keep || d.bad() {
			return nil
		}
		if s.Logical == avro.TimeMicros {
			if text, ok := timeOfDay(v, time.Microsecond); ok {
				return d.str(text)
			}
		} else if text, ok := longText(v, s.Logical); ok {
			return d.str(text)
		}
		return d.long(v)
	case avro.Float:
		v := d.r.Float()
		if !keep || d.bad() {
			return nil
		}
		// The float32 as its text shows it (0.1, not 0.10000000149).
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
		return d.double(f)
	case avro.Double:
		v := d.r.Double()
		if !keep || d.bad() {
			return nil
		}
		return d.double(v)
	case avro.String:
		v := d.r.StringBytes()
		if !keep || d.bad() {
			return nil
		}
		return d.str(d.text(v))
	case avro.Bytes:
		v := d.r.Bytes()
		if !keep || d.bad() {
			return nil
		}
		if s.Logical == avro.Decimal {
			text, ok := d.decimal(s, v)
			if !ok {
				return nil
			}
			return d.str(text)
		}
		return d.str(latin1(v))
	}
	d.fail("Avro type %s not supported", s.Kind)
	return nil
}

// text is b as a string: b itself when d.alias, else a copy.
func (d *avroDec) text(b []byte) string {
	if d.alias {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return string(b)
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
