package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/schema/avro"
)

// zigzag is v as an Avro long.
func zigzag(v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	var b []byte
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// nullRecordArray is an array of records of n null fields, each field
// name nameLen letters long: every item costs no payload byte.
func nullRecordArray(n, nameLen int) *avro.Schema {
	fields := make([]string, n)
	for i := range fields {
		fields[i] = fmt.Sprintf(`{"name":"%s%d","type":"null"}`, strings.Repeat("f", nameLen), i)
	}
	return avro.MustParse(`{"type":"array","items":{"type":"record","name":"R","fields":[` + strings.Join(fields, ",") + `]}}`)
}

// A payload of a few bytes whose items cost no byte (records of null
// fields) is refused rather than decoded into hundreds of megabytes: the
// values of one payload are bounded by its size.
func TestAvroZeroByteItemsAreBoundedByThePayload(t *testing.T) {
	payload := append(zigzag(maxAvroItems), 0)
	for _, c := range []struct {
		name           string
		fields, length int
	}{
		{"many fields", 50, 1},
		{"long field names", 1, 100_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := nullRecordArray(c.fields, c.length)
			out, err := avroJSON(s, payload)
			if err == nil || !strings.Contains(err.Error(), "Avro values") {
				t.Fatalf("avroJSON: %d bytes of text, error %v; want an error on the values", len(out), err)
			}
			if _, _, err := avroValue(s, payload, nil, nil); err == nil || !strings.Contains(err.Error(), "Avro values") {
				t.Fatalf("avroValue: error %v; want an error on the values", err)
			}
		})
	}
}

// An array of as many records as the item bound allows, each costing
// payload bytes, still decodes: the bound on values follows the payload.
func TestAvroValueBoundLetsLargePayloadsDecode(t *testing.T) {
	s := avro.MustParse(`{"type":"array","items":{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"record","name":"A","fields":[{"name":"b","type":{"type":"record","name":"B","fields":[{"name":"n","type":"null"},{"name":"i","type":"int"}]}}]}}]}}`)
	n := maxAvroItems
	payload := zigzag(int64(n))
	for range n {
		payload = append(payload, 2)
	}
	payload = append(payload, 0)
	out, err := avroJSON(s, payload)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat(`{"a":{"b":{"n":null,"i":1}}},`, 2); !strings.HasPrefix(out, "["+want) {
		t.Fatalf("got %.80s", out)
	}
}

// A decimal's scale is honoured however large: 5 with scale 1500 is
// 5×10⁻¹⁵⁰⁰, not 5.
func TestAvroDecimalWithALargeScaleIsExact(t *testing.T) {
	s := avro.MustParse(`{"type":"bytes","logicalType":"decimal","precision":2000,"scale":1500}`)
	out, err := avroJSON(s, []byte{2, 5})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"0.` + strings.Repeat("0", 1499) + `5"`; out != want && out != `"5E-1500"` {
		t.Fatalf("got %.60s", out)
	}
	s = avro.MustParse(`{"type":"bytes","logicalType":"decimal","precision":2000000,"scale":1000000}`)
	out, err = avroJSON(s, []byte{2, 0xfb})
	if err != nil || out != `"-5E-1000000"` {
		t.Fatalf("got %.60s, %v", out, err)
	}
}

// A decimal whose unscaled integer is too large to show is refused
// before its digits are computed: a megabyte of it would take seconds to
// print, whatever precision the schema claims.
func TestAvroHugeDecimalIsRefusedBeforeItsDigits(t *testing.T) {
	huge := append(zigzag(1<<20), append([]byte{0x7f}, make([]byte, 1<<20-1)...)...)
	for _, text := range []string{
		`{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}`,
		`{"type":"bytes","logicalType":"decimal","precision":100000000,"scale":2}`,
	} {
		s := avro.MustParse(text)
		if out, err := avroJSON(s, huge); err == nil || !strings.Contains(err.Error(), "decimal") {
			t.Errorf("%s: got %.40s, %v; want an error on the decimal", text, out, err)
		}
		if _, _, err := avroValue(s, huge, nil, nil); err == nil {
			t.Errorf("%s: avroValue took it", text)
		}
	}
	// Leading sign bytes are no digits, and a value past the precision
	// shows as it is, as Java's Avro reads it.
	s := avro.MustParse(`{"type":"bytes","logicalType":"decimal","precision":3,"scale":1}`)
	for _, c := range []struct {
		payload []byte
		want    string
	}{
		{[]byte{6, 0xff, 0xff, 0x85}, `"-12.3"`},
		{[]byte{4, 0x27, 0x10}, `"1000.0"`},
	} {
		if out, err := avroJSON(s, c.payload); err != nil || out != c.want {
			t.Errorf("% x: got %s, %v; want %s", c.payload, out, err, c.want)
		}
	}
}

// A time-millis or time-micros out of a day shows as its own number,
// however large: never as a time of day wrapped around, nor in other
// units.
func TestAvroTimeOutOfADayShowsItsNumber(t *testing.T) {
	s := avro.MustParse(`{"type":"long","logicalType":"time-micros"}`)
	for _, v := range []int64{1 << 62, 18446744073709550, -1, 86_400_000_000, -(1 << 62)} {
		out, err := avroJSON(s, zigzag(v))
		if err != nil || out != fmt.Sprint(v) {
			t.Errorf("%d: got %s, %v", v, out, err)
		}
	}
	if out, _ := avroJSON(s, zigzag(86_399_999_999)); out != `"23:59:59.999999"` {
		t.Errorf("last microsecond of a day: %s", out)
	}
	s = avro.MustParse(`{"type":"int","logicalType":"time-millis"}`)
	for _, v := range []int64{-1, 86_400_000, 1<<31 - 1} {
		out, err := avroJSON(s, zigzag(v))
		if err != nil || out != fmt.Sprint(v) {
			t.Errorf("time-millis %d: got %s, %v", v, out, err)
		}
		if got, _, err := avroValue(s, zigzag(v), nil, nil); err != nil || got != any(v) {
			t.Errorf("time-millis %d: value %#v, %v", v, got, err)
		}
	}
}

// Timestamps and dates past the years RFC 3339 writes (0000–9999) show
// as their numbers, as a time out of a day does: the text of a timestamp
// is RFC 3339 or a number, and valid JSON, never a panic.
func TestAvroTimestampsPastRFC3339ShowTheirNumber(t *testing.T) {
	for _, c := range []struct {
		logical string
		v       int64
		want    string
	}{
		{"timestamp-millis", 253402300799999, `"9999-12-31T23:59:59.999Z"`},
		{"timestamp-millis", 253402300800000, "253402300800000"},
		{"timestamp-millis", 1<<63 - 1, "9223372036854775807"},
		{"timestamp-micros", -62167219200000001, "-62167219200000001"},
		{"timestamp-micros", -62167219200000000, `"0000-01-01T00:00:00Z"`},
		{"local-timestamp-millis", -1 << 63, "-9223372036854775808"},
	} {
		s := avro.MustParse(`{"type":"long","logicalType":"` + c.logical + `"}`)
		out, err := avroJSON(s, zigzag(c.v))
		if err != nil || out != c.want {
			t.Errorf("%s %d: got %s, %v; want %s", c.logical, c.v, out, err, c.want)
		}
		var want any = c.v
		if c.want[0] == '"' {
			want = strings.Trim(c.want, `"`)
		}
		if v, _, err := avroValue(s, zigzag(c.v), nil, nil); err != nil || v != want {
			t.Errorf("%s %d: value %#v, %v; want %#v", c.logical, c.v, v, err, want)
		}
	}
	s := avro.MustParse(`{"type":"int","logicalType":"date"}`)
	for v, want := range map[int64]string{2932896: `"9999-12-31"`, 2932897: "2932897", -(1 << 31): "-2147483648"} {
		if out, err := avroJSON(s, zigzag(v)); err != nil || out != want {
			t.Errorf("date %d: got %s, %v; want %s", v, out, err, want)
		}
	}
}

// Timestamps and dates far out of the usual years still give valid JSON
// text, never a panic.
func TestAvroFarTimestampsStayValidJSON(t *testing.T) {
	for _, lt := range []string{"timestamp-millis", "timestamp-micros", "timestamp-nanos", "local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos", "time-micros"} {
		s := avro.MustParse(`{"type":"long","logicalType":"` + lt + `"}`)
		for _, v := range []int64{1<<63 - 1, -1 << 63, 253402300800000, -62135596800001} {
			out, err := avroJSON(s, zigzag(v))
			if err != nil || !json.Valid([]byte(out)) {
				t.Errorf("%s %d: %s, %v", lt, v, out, err)
			}
		}
	}
	for _, lt := range []string{"date", "time-millis"} {
		s := avro.MustParse(`{"type":"int","logicalType":"` + lt + `"}`)
		for _, v := range []int64{1<<31 - 1, -1 << 31} {
			out, err := avroJSON(s, zigzag(v))
			if err != nil || !json.Valid([]byte(out)) {
				t.Errorf("%s %d: %s, %v", lt, v, out, err)
			}
		}
	}
}

// NaN and the infinities, and strings of invalid UTF-8, NUL, terminal
// escapes and U+2028, give valid JSON text with no raw control byte.
func TestAvroHostileScalarsStayValidEscapedJSON(t *testing.T) {
	s := avro.MustParse(`{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"array","items":"double"}},{"name":"f","type":"float"},{"name":"s","type":"string"},{"name":"m","type":{"type":"map","values":"bytes"}}]}`)
	var p []byte
	p = append(p, zigzag(3)...)
	p = append(p, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f) // NaN
	p = append(p, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f) // +Inf
	p = append(p, 0, 0, 0, 0, 0, 0, 0xf0, 0xff) // -Inf
	p = append(p, 0)
	p = append(p, 0, 0, 0xc0, 0x7f) // float NaN
	str := "a\x00\x1b[31m\xff\u2028\u009b\x7f\""
	p = append(p, zigzag(int64(len(str)))...)
	p = append(p, str...)
	p = append(p, zigzag(1)...)
	p = append(p, zigzag(int64(len(str)))...)
	p = append(p, str...)
	p = append(p, zigzag(2)...)
	p = append(p, 0x1b, 0x9b)
	p = append(p, 0)
	out, err := avroJSON(s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(out)) {
		t.Fatalf("not JSON: %q", out)
	}
	for i := 0; i < len(out); i++ {
		if out[i] < 0x20 || out[i] == 0x7f {
			t.Fatalf("raw control byte %#x in %q", out[i], out)
		}
	}
	for _, raw := range []string{"\u2028", "\u009b", "\u001b"} {
		if strings.Contains(out, raw) {
			t.Fatalf("raw %q in %q", raw, out)
		}
	}
}
