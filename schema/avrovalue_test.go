package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
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

func everyAvroPayload(t *testing.T) (avro.Schema, []byte) {
	t.Helper()
	s := avro.MustParse(everyAvroKind)
	v := map[string]any{"b": true, "i": 7, "l": int64(-9), "f": float32(0.1), "d": 95.0, "s": "é\"x",
		"by": []byte{0, 0xff}, "e": "B", "a": []int{1, 2}, "m": map[string]string{"k": "v"},
		"n": map[string]any{"string": "set"}, "u": map[string]any{"string": "two"}, "fx": [2]byte{1, 2},
		"day": 19000, "ts": int64(1_700_000_000_123), "dec": []byte{0x30, 0x39}, "rec": map[string]any{"x": int64(3)}}
	// hamba wants Go types for logical types; give it the raw ones.
	s2 := avro.MustParse(strings.NewReplacer(`,"logicalType":"date"`, ``, `,"logicalType":"timestamp-millis"`, ``,
		`,"logicalType":"decimal","precision":6,"scale":2`, ``).Replace(everyAvroKind))
	b, err := avro.Marshal(s2, v)
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
	room := make([]Field, 3, 8)
	room[0], room[1], room[2] = Field{Name: "s", Value: "stale"}, Field{Name: "i", Value: int64(1)}, Field{Name: "x", Value: 2.0}
	_, got, err := avroValue(s, payload, []string{"i"}, room)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []Field{{Name: "i", Value: int64(7)}}) || &got[:1][0] != &room[0] {
		t.Fatalf("got %#v, want i=7 in the room given", got)
	}
	_, got, err = avroValue(s, payload, []string{}, got)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no field wanted: got %#v, %v; want an empty projection", got, err)
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
