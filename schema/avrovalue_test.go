package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	hamba "github.com/hamba/avro/v2"
	"github.com/kbatch-dev/kbatch/schema/avro"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

const everyAvroKind = `{"type":"record","name":"All","namespace":"t","fields":[
 {"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"l","type":"long"},
 {"name":"f","type":"float"},{"name":"d","type":"double"},{"name":"s","type":"string"},
 {"name":"by","type":"bytes"},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
 {"name":"a","type":{"type":"array","items":"int"}},{"name":"m","type":{"type":"map","values":"string"}},
 {"name":"n","type":["null","string"]},{"name":"u","type":["int","string"]},
 {"name":"fx","type":{"type":"fixed","name":"F","size":2}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":6,"scale":2}},
 {"name":"rec","type":{"type":"record","name":"In","fields":[{"name":"x","type":"long"}]}}]}`

func everyAvroPayload(t *testing.T) (*avro.Schema, []byte) {
	t.Helper()
	s := avro.MustParse(everyAvroKind)
	v := map[string]any{"b": true, "i": 7, "l": int64(-9), "f": float32(0.1), "d": 95.0, "s": "é\"x",
		"by": []byte{0, 0xff}, "e": "B", "a": []int{1, 2}, "m": map[string]string{"k": "v"},
		"n": map[string]any{"string": "set"}, "u": map[string]any{"string": "two"}, "fx": [2]byte{1, 2},
		"day": 19000, "ts": int64(1_700_000_000_123), "dec": []byte{0x30, 0x39}, "rec": map[string]any{"x": int64(3)}}
	// hamba wants Go types for logical types; give it the raw ones.
	s2 := hamba.MustParse(strings.NewReplacer(`,"logicalType":"date"`, ``, `,"logicalType":"timestamp-millis"`, ``,
		`,"logicalType":"decimal","precision":6,"scale":2`, ``).Replace(everyAvroKind))
	b, err := hamba.Marshal(s2, v)
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// numbersAsFloats makes int64s float64s, as encoding/json reads numbers.
func numbersAsFloats(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case map[string]any:
		for k, e := range x {
			x[k] = numbersAsFloats(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersAsFloats(e)
		}
	}
	return v
}

// The values a filter reads are the values the shown JSON text holds.
func TestAvroValueIsTheTextsValue(t *testing.T) {
	s, payload := everyAvroPayload(t)
	text, err := avroJSON(s, payload)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal([]byte(text), &want); err != nil {
		t.Fatal(err)
	}
	got, _, err := avroValue(s, payload, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := numbersAsFloats(got); !reflect.DeepEqual(g, want) {
		t.Fatalf("values\n%#v\nwant (from %s)\n%#v", g, text, want)
	}
	if d := got.(map[string]any)["d"]; d != 95.0 {
		t.Fatalf("a whole double is %#v, want float64 95", d)
	}
}

// With only, a record gives the fields named, in schema order, and
// checks the rest.
func TestAvroValueBuildsOnlyTheNamedFields(t *testing.T) {
	s, payload := everyAvroPayload(t)
	v, got, err := avroValue(s, payload, []string{"rec", "s", "absent"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{Name: "s", Value: "é\"x"}, {Name: "rec", Value: map[string]any{"x": int64(3)}}}
	if v != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v and %#v, want %#v", v, got, want)
	}
	if _, _, err := avroValue(s, append(payload, 0), []string{"s"}, nil); err == nil {
		t.Fatal("trailing bytes accepted when fields are skipped")
	}
	if _, _, err := avroValue(s, payload[:len(payload)-1], []string{"b"}, nil); err == nil {
		t.Fatal("a short payload accepted when its last fields are skipped")
	}
}

// Fields go into the room given, from its start: a value decoded into the
// room of the one before holds its own fields only, even where none is
// wanted.
func TestAvroValueReusesTheRoomGiven(t *testing.T) {
	s, payload := everyAvroPayload(t)
	room := &Room{Fields: make([]Field, 3, 8)}
	room.Fields[0], room.Fields[1], room.Fields[2] = Field{Name: "s", Value: "stale"}, Field{Name: "i", Value: int64(1)}, Field{Name: "x", Value: 2.0}
	first := &room.Fields[0]
	_, got, err := avroValue(s, payload, []string{"i"}, room)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []Field{{Name: "i", Value: int64(7)}}) || &got[0] != first {
		t.Fatalf("got %#v, want i=7 in the room given", got)
	}
	room.Fields = got
	_, got, err = avroValue(s, payload, []string{}, room)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no field wanted: got %#v, %v; want an empty projection", got, err)
	}
	// The room's reader reads the next payload from its start.
	_, got, err = avroValue(s, payload, []string{"s"}, room)
	if err != nil || !reflect.DeepEqual(got, []Field{{Name: "s", Value: "é\"x"}}) {
		t.Fatalf("again: got %#v, %v", got, err)
	}
}

// tagged makes each scalar a value of its own type, as a program with its
// own values would.
type tagged struct{}

type taggedValue struct {
	kind string
	v    any
}

func (tagged) String(s string) any  { return taggedValue{"string", s} }
func (tagged) Long(n int64) any     { return taggedValue{"long", n} }
func (tagged) Double(f float64) any { return taggedValue{"double", f} }
func (tagged) Bool(b bool) any      { return taggedValue{"bool", b} }

// With Scalars, every string, number and boolean is made by it, at any
// depth; null, records, maps and arrays stay Go's.
func TestAvroValueScalars(t *testing.T) {
	s, payload := everyAvroPayload(t)
	plain, _, err := avroValue(s, payload, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	made, _, err := avroValue(s, payload, nil, &Room{Scalars: tagged{}})
	if err != nil {
		t.Fatal(err)
	}
	var untag func(v any) any
	untag = func(v any) any {
		switch v := v.(type) {
		case taggedValue:
			return v.v
		case map[string]any:
			m := map[string]any{}
			for k, e := range v {
				m[k] = untag(e)
			}
			return m
		case []any:
			l := []any{}
			for _, e := range v {
				l = append(l, untag(e))
			}
			return l
		case string, int64, float64, bool:
			t.Errorf("%#v was not made by Scalars", v)
		}
		return v
	}
	if got := untag(made); !reflect.DeepEqual(got, plain) {
		t.Fatalf("with Scalars\n%#v\nwithout\n%#v", got, plain)
	}
	if b := made.(map[string]any)["b"]; b != (taggedValue{"bool", true}) {
		t.Fatalf("b is %#v, want a bool made by Scalars", b)
	}
}

// A skipped string whose length is past the payload fails at once, as
// reading it would.
func TestAvroValueSkippedStringLongerThanPayload(t *testing.T) {
	s := avro.MustParse(`{"type":"record","name":"R","fields":[{"name":"s","type":"string"},{"name":"k","type":"int"}]}`)
	// zig-zag 2^40: a string of a terabyte.
	payload := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x02}
	if _, _, err := avroValue(s, payload, []string{"k"}, nil); err == nil {
		t.Fatal("a string longer than the payload was skipped")
	}
}

// DecodeValue through a local schema gives Go values and no text; Decode
// still gives the text.
func TestDecodeValueLocalAvro(t *testing.T) {
	_, payload := everyAvroPayload(t)
	d := newLocalAvro(t, everyAvroKind)
	res := d.DecodeValue("t", false, payload, []string{"i"}, nil)
	if res.Status != Decoded || res.JSON != "" || res.Value != nil {
		t.Fatalf("status %v json %q value %#v", res.Status, res.JSON, res.Value)
	}
	if !reflect.DeepEqual(res.Fields, []Field{{Name: "i", Value: int64(7)}}) {
		t.Fatalf("fields %#v", res.Fields)
	}
	if res := d.Decode("t", false, payload); res.Status != Decoded || !strings.HasPrefix(res.JSON, `{"b":true,"i":7,`) || res.Value != nil {
		t.Fatalf("Decode gave %+v", res)
	}
}

func newLocalAvro(t *testing.T, avsc string) *Decoder {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.avsc")
	if err := os.WriteFile(path, []byte(avsc), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Local: []Local{{AvroFile: path}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// A Room remembers the schema of the last id it decoded with: values of
// two ids, and of the same id in two registries, decoded in turn with one
// Room, each come with their own schema's fields.
func TestDecodeValueRoomAcrossIDsAndDecoders(t *testing.T) {
	const a = `{"type":"record","name":"A","fields":[{"name":"x","type":"long"}]}`
	const b = `{"type":"record","name":"B","fields":[{"name":"x","type":"string"}]}`
	register := func(avsc string) (*Decoder, int) {
		reg := srfake.New()
		t.Cleanup(reg.Close)
		id, _, err := reg.RegisterSchema("t-value", sr.Schema{Schema: avsc})
		if err != nil {
			t.Fatal(err)
		}
		return newDecoder(t, Options{RegistryURL: reg.URL()}), id
	}
	decA, idA := register(a)
	decB, idB := register(b)
	if idA != idB {
		t.Fatalf("ids %d and %d: want the same id in two registries", idA, idB)
	}
	regBoth := srfake.New()
	t.Cleanup(regBoth.Close)
	idBoth1, _, _ := regBoth.RegisterSchema("t-value", sr.Schema{Schema: a})
	idBoth2, _, err := regBoth.RegisterSchema("u-value", sr.Schema{Schema: b})
	if err != nil || idBoth1 == idBoth2 {
		t.Fatalf("ids %d %d, %v", idBoth1, idBoth2, err)
	}
	decBoth := newDecoder(t, Options{RegistryURL: regBoth.URL()})
	long := hamba.MustParse(a)
	str := hamba.MustParse(b)
	payload := func(s hamba.Schema, v any) []byte {
		p, err := hamba.Marshal(s, map[string]any{"x": v})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pa, pb := payload(long, int64(5)), payload(str, "five")
	room := &Room{}
	for range 3 {
		for _, c := range []struct {
			d    *Decoder
			b    []byte
			want any
		}{
			{decA, frame(idA, pa), int64(5)},
			{decB, frame(idB, pb), "five"},
			{decBoth, frame(idBoth1, pa), int64(5)},
			{decBoth, frame(idBoth2, pb), "five"},
		} {
			res := c.d.DecodeValue("t", false, c.b, []string{"x"}, room)
			if res.Status != Decoded || len(res.Fields) != 1 || res.Fields[0].Value != c.want {
				t.Fatalf("got %+v, want x = %#v", res, c.want)
			}
			room.Fields = res.Fields
		}
	}
}
