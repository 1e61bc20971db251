package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	hamba "github.com/hamba/avro/v2"
	"github.com/kbatch-dev/kbatch/schema/avro"
)

// genSchema makes random Avro schemas as JSON values: every kind, the
// logical types hamba knows, named types referred to again by short or
// full name, and records that hold themselves through a nullable union.
type genSchema struct {
	rng   *rand.Rand
	n     int
	named []string // full names defined so far
}

func (g *genSchema) name() string {
	g.n++
	return "T" + strconv.Itoa(g.n)
}

func (g *genSchema) schema(depth int, self string) any {
	prims := []any{"null", "boolean", "int", "long", "float", "double", "bytes", "string",
		map[string]any{"type": "int", "logicalType": "date"},
		map[string]any{"type": "int", "logicalType": "time-millis"},
		map[string]any{"type": "long", "logicalType": "time-micros"},
		map[string]any{"type": "long", "logicalType": "timestamp-millis"},
		map[string]any{"type": "long", "logicalType": "timestamp-micros"},
		map[string]any{"type": "long", "logicalType": "local-timestamp-millis"},
		map[string]any{"type": "long", "logicalType": "local-timestamp-micros"},
		map[string]any{"type": "string", "logicalType": "uuid"},
		map[string]any{"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": g.rng.IntN(10)},
	}
	k := g.rng.IntN(14)
	if depth > 4 {
		k = 0
	}
	switch k {
	case 0, 1, 2, 3, 4:
		return prims[g.rng.IntN(len(prims))]
	case 5:
		if len(g.named) > 0 {
			full := g.named[g.rng.IntN(len(g.named))]
			if g.rng.IntN(2) == 0 && strings.HasPrefix(full, "ns.") {
				return strings.TrimPrefix(full, "ns.") // the enclosing namespace's
			}
			return full
		}
		return "string"
	case 6, 7:
		name := g.name()
		var fields []any
		for i := range g.rng.IntN(4) {
			fields = append(fields, map[string]any{"name": "f" + strconv.Itoa(i), "type": g.schema(depth+1, "ns."+name)})
		}
		if self == "" && g.rng.IntN(3) == 0 {
			fields = append(fields, map[string]any{"name": "next", "type": []any{"null", name}})
		}
		g.named = append(g.named, "ns."+name)
		return map[string]any{"type": "record", "name": name, "fields": append([]any{}, fields...)}
	case 8:
		name := g.name()
		syms := []any{"A"}
		for i := range g.rng.IntN(4) {
			syms = append(syms, "S"+strconv.Itoa(i))
		}
		g.named = append(g.named, "ns."+name)
		return map[string]any{"type": "enum", "name": name, "symbols": syms}
	case 9:
		name := g.name()
		g.named = append(g.named, "ns."+name)
		switch g.rng.IntN(3) {
		case 0:
			return map[string]any{"type": "fixed", "name": name, "size": 12, "logicalType": "duration"}
		case 1:
			return map[string]any{"type": "fixed", "name": name, "size": 4, "logicalType": "decimal", "precision": 9, "scale": 2}
		}
		return map[string]any{"type": "fixed", "name": name, "size": g.rng.IntN(5)}
	case 10:
		return map[string]any{"type": "array", "items": g.schema(depth+1, self)}
	case 11:
		return map[string]any{"type": "map", "values": g.schema(depth+1, self)}
	}
	// A union: null and one type, or several of distinct kinds.
	if g.rng.IntN(2) == 0 {
		return []any{"null", g.schema(depth+1, self)}
	}
	return []any{"int", "string", map[string]any{"type": "array", "items": g.schema(depth+1, self)}, g.schema(depth+5, self)}
}

// randomSchema is one random schema as text, in namespace ns, that both
// parsers accept, or "" after a few tries. A record refers to itself only
// through a nullable union, so every schema has finite values.
func randomSchema(rng *rand.Rand) string {
	for range 20 {
		g := &genSchema{rng: rng}
		top := map[string]any{"type": "record", "name": "Top", "namespace": "ns", "fields": []any{}}
		var fields []any
		for i := range 1 + rng.IntN(5) {
			fields = append(fields, map[string]any{"name": "x" + strconv.Itoa(i), "type": g.schema(1, "")})
		}
		top["fields"] = fields
		b, _ := json.Marshal(top)
		if _, err := hamba.Parse(string(b)); err == nil {
			return string(b)
		}
	}
	return ""
}

// encode writes a random value of s with hamba's Writer: arrays and maps
// in blocks of random sizes, some with a negative count and their size in
// bytes.
func encode(rng *rand.Rand, w *hamba.Writer, s *avro.Schema, depth int) {
	switch s.Kind {
	case avro.Null:
	case avro.Boolean:
		w.WriteBool(rng.IntN(2) == 0)
	case avro.Int:
		w.WriteInt(int32(rng.Uint32()) >> rng.IntN(32))
	case avro.Long:
		w.WriteLong(int64(rng.Uint64()) >> rng.IntN(64))
	case avro.Float:
		w.WriteFloat([]float32{0.1, -1.5, float32(math.Inf(1)), float32(math.NaN()), math.Float32frombits(rng.Uint32())}[rng.IntN(5)])
	case avro.Double:
		w.WriteDouble([]float64{0.1, 95, math.Inf(-1), math.NaN(), math.Float64frombits(rng.Uint64())}[rng.IntN(5)])
	case avro.Bytes, avro.String:
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if rng.IntN(2) == 0 {
			b = []byte("é\"x\x1b[31m\u2028")
		}
		w.WriteBytes(b)
	case avro.Fixed:
		b := make([]byte, s.Size)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		w.Write(b)
	case avro.Enum:
		w.WriteInt(int32(rng.IntN(len(s.Symbols))))
	case avro.Record:
		for _, f := range s.Fields {
			encode(rng, w, f.Type, depth+1)
		}
	case avro.Union:
		i := rng.IntN(len(s.Types))
		if depth > 8 {
			for j, t := range s.Types {
				if t.Kind == avro.Null {
					i = j
				}
			}
		}
		w.WriteLong(int64(i))
		encode(rng, w, s.Types[i], depth+1)
	case avro.Array, avro.Map:
		items := 0
		if depth < 8 {
			items = rng.IntN(4)
		}
		for items > 0 {
			n := 1 + rng.IntN(items)
			items -= n
			var block bytes.Buffer
			bw := hamba.NewWriter(&block, 64)
			for range n {
				if s.Kind == avro.Map {
					bw.WriteString("k" + strconv.Itoa(rng.IntN(5)))
					encode(rng, bw, s.Values, depth+1)
				} else {
					encode(rng, bw, s.Items, depth+1)
				}
			}
			_ = bw.Flush()
			if rng.IntN(2) == 0 {
				w.WriteLong(int64(-n))
				w.WriteLong(int64(block.Len()))
			} else {
				w.WriteLong(int64(n))
			}
			w.Write(block.Bytes())
		}
		w.WriteLong(0)
	}
}

// compareDecoders decodes payload with kbatch's decoder (schema text
// parsed by schema/avro) and with hamba's (the oracle), and fails t
// unless they agree: the same JSON text, the same Go values, the same
// projected fields, or both an error. kbatch alone may fail on a varint
// beyond its type, a block size out of the payload, or a boolean byte
// other than 0 and 1 in a field it skips, which hamba reads past.
func compareDecoders(t *testing.T, text string, payload []byte, only []string) {
	t.Helper()
	hs, herr := hamba.Parse(text)
	s, err := avro.Parse(text)
	if herr != nil || err != nil {
		t.Fatalf("schema: kbatch %v, hamba %v\n%s", err, herr, text)
	}
	looser := func(err error) bool {
		return errors.Is(err, avro.ErrOverflow) || errors.Is(err, avro.ErrBlockSize) || errors.Is(err, avro.ErrBoolean)
	}
	got, gerr := avroJSON(s, payload)
	want, werr := hambaJSON(hs, payload)
	if (gerr == nil) != (werr == nil) && !(gerr != nil && looser(gerr)) {
		t.Fatalf("text: kbatch %v, hamba %v\nschema %s\npayload % x", gerr, werr, text, payload)
	}
	if gerr == nil && got != want {
		t.Fatalf("text:\nkbatch %s\nhamba  %s\nschema %s\npayload % x", got, want, text, payload)
	}
	gv, gf, gerr := avroValue(s, payload, only, nil)
	wv, wf, werr := hambaValue(hs, payload, only, nil)
	if (gerr == nil) != (werr == nil) && !(gerr != nil && looser(gerr)) {
		t.Fatalf("values: kbatch %v, hamba %v\nschema %s\npayload % x", gerr, werr, text, payload)
	}
	if gerr == nil {
		if g, w := fmt.Sprintf("%#v %#v", gv, gf), fmt.Sprintf("%#v %#v", wv, wf); g != w {
			t.Fatalf("values:\nkbatch %s\nhamba  %s\nschema %s\npayload % x", g, w, text, payload)
		}
	}
	if gerr != nil && strings.Contains(gerr.Error(), "\n") {
		t.Fatalf("error of more than one line: %q", gerr)
	}
}

// TestAvroDecodeAgreesWithHamba: random schemas, random values encoded
// with hamba's Writer, and the same payloads cut, grown and with a byte
// changed, decode alike with kbatch's Avro and with hamba's.
func TestAvroDecodeAgreesWithHamba(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 7))
	runs, decoded := 300, 0
	if testing.Short() {
		runs = 60
	}
	for range runs {
		text := randomSchema(rng)
		if text == "" {
			continue
		}
		s := avro.MustParse(text)
		for range 10 {
			var buf bytes.Buffer
			w := hamba.NewWriter(&buf, 64)
			encode(rng, w, s, 0)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			payload := buf.Bytes()
			var only []string
			if rng.IntN(2) == 0 {
				only = []string{"x" + strconv.Itoa(rng.IntN(3)), "nope"}
			}
			compareDecoders(t, text, payload, only)
			if _, err := avroJSON(s, payload); err != nil {
				t.Fatalf("a payload hamba wrote does not decode: %v\nschema %s\npayload % x", err, text, payload)
			}
			decoded++
			bad := append([]byte(nil), payload...)
			switch {
			case len(bad) > 0 && rng.IntN(3) == 0:
				bad = bad[:rng.IntN(len(bad))]
			case len(bad) > 0 && rng.IntN(2) == 0:
				bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
			default:
				bad = append(bad, byte(rng.Uint32()))
			}
			compareDecoders(t, text, bad, only)
		}
	}
	if decoded < runs*5 {
		t.Fatalf("%d payloads decoded of %d runs: the generator makes few valid schemas", decoded, runs)
	}
}

// Hostile payloads against a schema of every kind: one clear error each,
// never a panic or an allocation the payload's length does not allow.
func TestAvroHostilePayloads(t *testing.T) {
	s := avro.MustParse(`{"type":"record","name":"R","fields":[
		{"name":"s","type":"string"},
		{"name":"a","type":{"type":"array","items":"null"}}]}`)
	ff := func(n int) []byte { return bytes.Repeat([]byte{0xff}, n) }
	for _, c := range []struct {
		name    string
		payload []byte
		want    string
	}{
		{"string of a terabyte", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x40}, "bytes with 0 left"},
		{"negative string length", []byte{0x03}, "negative length"},
		{"11-byte varint", append(ff(10), 0x01), "overflows"},
		{"truncated length", []byte{0x80}, "payload ends"},
		{"truncated string", []byte{0x02}, "string of 1 bytes with 0 left"},
		{"block count bomb", []byte{0x00, 0xfe, 0xff, 0xff, 0xff, 0x0f}, "Avro block of"},
		{"many small blocks", append([]byte{0x00}, bytes.Repeat([]byte{0xfe, 0xff, 0x3f}, 8)...), "more Avro values than"},
		{"negative count, size past the payload", []byte{0x00, 0x01, 0x7e}, "block byte size out of the payload"},
		{"lowest count", append([]byte{0x00}, append(ff(9), 0x01)...), "Avro block of"},
		{"trailing bytes", []byte{0x00, 0x00, 0x00}, "trailing bytes"},
	} {
		for _, decode := range []func() error{
			func() error { _, err := avroJSON(s, c.payload); return err },
			func() error { _, _, err := avroValue(s, c.payload, nil, nil); return err },
			func() error { _, _, err := avroValue(s, c.payload, []string{"a"}, nil); return err },
		} {
			err := decode()
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
			}
		}
	}
}

// The logical types of Avro 1.12 that hamba ignores: nanosecond
// timestamps as RFC 3339 text, a fixed uuid in its hex form.
func TestAvroNanosAndFixedUUID(t *testing.T) {
	s := avro.MustParse(`{"type":"record","name":"R","fields":[
		{"name":"t","type":{"type":"long","logicalType":"timestamp-nanos"}},
		{"name":"l","type":{"type":"long","logicalType":"local-timestamp-nanos"}},
		{"name":"u","type":{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}}]}`)
	var w avro.Writer
	w.Long(1_700_000_000_123_456_789)
	w.Long(-1)
	w.Fixed([]byte{0x0b, 0x5e, 0x4c, 0x2e, 0x3f, 0x43, 0x4f, 0x4e, 0x9a, 0x4e, 0x0e, 0x4d, 0x1a, 0x2b, 0x3c, 0x4d})
	got, err := avroJSON(s, w.Bytes())
	want := `{"t":"2023-11-14T22:13:20.123456789Z","l":"1969-12-31T23:59:59.999999999","u":"0b5e4c2e-3f43-4f4e-9a4e-0e4d1a2b3c4d"}`
	if err != nil || got != want {
		t.Fatalf("got  %s, %v\nwant %s", got, err, want)
	}
	v, _, err := avroValue(s, w.Bytes(), nil, nil)
	if err != nil || v.(map[string]any)["u"] != "0b5e4c2e-3f43-4f4e-9a4e-0e4d1a2b3c4d" || v.(map[string]any)["t"] != "2023-11-14T22:13:20.123456789Z" {
		t.Fatalf("values %#v, %v", v, err)
	}
}

// FuzzAvroDecodeAgreesWithHamba: a schema both parsers accept and any
// payload decode alike with kbatch's Avro and hamba's.
func FuzzAvroDecodeAgreesWithHamba(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		text := randomSchema(rng)
		var buf bytes.Buffer
		w := hamba.NewWriter(&buf, 64)
		encode(rng, w, avro.MustParse(text), 0)
		_ = w.Flush()
		f.Add(text, buf.Bytes())
	}
	order, err := os.ReadFile(filepath.Join("testdata", "order.avsc"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(order), avroOrderBytes(f))
	f.Fuzz(func(t *testing.T, text string, payload []byte) {
		if len(text) > 2048 || len(payload) > 4096 {
			return
		}
		_, herr := hamba.Parse(text)
		_, err := avro.Parse(text)
		// Where kbatch reads a logical type hamba ignores (or the other
		// way), the two show the value differently.
		if herr != nil || err != nil || strings.Contains(text, "nanos") || strings.Contains(text, "uuid") || strings.Contains(text, "decimal") {
			return
		}
		compareDecoders(t, text, payload, nil)
	})
}
