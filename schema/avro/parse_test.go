package avro

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	hamba "github.com/hamba/avro/v2"
)

// describe is a schema tree as text: kinds, names, fields, symbols, sizes,
// and the logical types both parsers know, each named type spelled out
// once and then referred to by name.
func describe(s *Schema, seen map[string]bool) string {
	switch s.Kind {
	case Record, Enum, Fixed:
		if seen[s.FullName] {
			return "ref:" + s.FullName
		}
		seen[s.FullName] = true
	}
	logical := s.Logical
	if logical == Decimal {
		logical = fmt.Sprintf("decimal(%d,%d)", s.Precision, s.Scale)
	}
	switch s.Kind {
	case Record:
		var b strings.Builder
		fmt.Fprintf(&b, "record:%s{", s.FullName)
		for _, f := range s.Fields {
			fmt.Fprintf(&b, "%s:%s,", f.Name, describe(f.Type, seen))
		}
		return b.String() + "}"
	case Enum:
		return fmt.Sprintf("enum:%s%v", s.FullName, s.Symbols)
	case Fixed:
		return fmt.Sprintf("fixed:%s(%d)%s", s.FullName, s.Size, logical)
	case Array:
		return "array<" + describe(s.Items, seen) + ">"
	case Map:
		return "map<" + describe(s.Values, seen) + ">"
	case Union:
		var parts []string
		for _, t := range s.Types {
			parts = append(parts, describe(t, seen))
		}
		return "union[" + strings.Join(parts, ",") + "]"
	}
	return s.Kind.String() + logical
}

// describeHamba is describe for hamba's tree.
func describeHamba(s hamba.Schema, seen map[string]bool) string {
	if r, ok := s.(*hamba.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(hamba.NamedSchema); ok {
		if seen[n.FullName()] {
			return "ref:" + n.FullName()
		}
		seen[n.FullName()] = true
	}
	logicalOf := func(l hamba.LogicalSchema) string {
		if l == nil {
			return ""
		}
		if d, ok := l.(*hamba.DecimalLogicalSchema); ok {
			return fmt.Sprintf("decimal(%d,%d)", d.Precision(), d.Scale())
		}
		return string(l.Type())
	}
	switch t := s.(type) {
	case *hamba.RecordSchema:
		var b strings.Builder
		fmt.Fprintf(&b, "record:%s{", t.FullName())
		for _, f := range t.Fields() {
			fmt.Fprintf(&b, "%s:%s,", f.Name(), describeHamba(f.Type(), seen))
		}
		return b.String() + "}"
	case *hamba.EnumSchema:
		return fmt.Sprintf("enum:%s%v", t.FullName(), t.Symbols())
	case *hamba.FixedSchema:
		return fmt.Sprintf("fixed:%s(%d)%s", t.FullName(), t.Size(), logicalOf(t.Logical()))
	case *hamba.ArraySchema:
		return "array<" + describeHamba(t.Items(), seen) + ">"
	case *hamba.MapSchema:
		return "map<" + describeHamba(t.Values(), seen) + ">"
	case *hamba.UnionSchema:
		var parts []string
		for _, b := range t.Types() {
			parts = append(parts, describeHamba(b, seen))
		}
		return "union[" + strings.Join(parts, ",") + "]"
	case *hamba.PrimitiveSchema:
		return string(t.Type()) + logicalOf(t.Logical())
	case *hamba.NullSchema:
		return "null"
	}
	return fmt.Sprintf("?%T", s)
}

// knownDifference tells why kbatch and hamba may disagree on text, or ""
// when they must agree. kbatch keeps field defaults as JSON without
// checking them against the field's type; it reads only whole numbers as
// a fixed's size; it bounds nesting; it knows the logical types of Avro
// 1.12 that hamba does not (timestamp-nanos, local-timestamp-nanos, uuid
// on a fixed) and takes the precision limit of a fixed decimal from the
// specification (two's complement) where hamba counts one bit more.
// hamba also reads attribute names in any case ("nAme" for "name"), and
// its JSON parser takes a NUL byte after a value for the end of the text.
// As the specification says and hamba does not, kbatch reads a namespace
// "" as the null namespace, refuses a named type called after a
// primitive, and lets no alias hide a name.
func knownDifference(text string, hambaErr error) string {
	switch {
	case regexp.MustCompile(`"namespace"\s*:\s*""`).MatchString(text):
		return "null namespace"
	case primitiveName.MatchString(text):
		return "primitive name"
	case strings.Contains(text, `"aliases"`):
		return "alias"
	case otherCaseKey(text):
		return "case"
	case strings.ContainsRune(text, 0) && !json.Valid([]byte(text)):
		return "NUL"
	case hambaErr != nil && strings.Contains(hambaErr.Error(), "invalid default"):
		return "default"
	case strings.Contains(text, `"size"`) && hambaErr == nil:
		return "size"
	case strings.Count(text, "[")+strings.Count(text, "{") > MaxDepth/2:
		return "depth"
	case strings.Contains(text, "nanos") || strings.Contains(text, "uuid") || strings.Contains(text, "decimal"):
		return "logical"
	}
	return ""
}

var primitiveName = regexp.MustCompile(`"name"\s*:\s*"(null|boolean|int|long|float|double|bytes|string)"`)

var keyPattern = regexp.MustCompile(`"([^"\\]*)"\s*:`)

// otherCaseKey tells whether text has an object key that differs from an
// attribute of the specification in case only.
func otherCaseKey(text string) bool {
	for _, m := range keyPattern.FindAllStringSubmatch(text, -1) {
		for _, k := range []string{"type", "name", "namespace", "fields", "symbols", "items", "values", "size", "aliases", "doc", "default", "order", "logicalType", "precision", "scale"} {
			if m[1] != k && strings.EqualFold(m[1], k) {
				return true
			}
		}
	}
	return false
}

// parseCorpus holds schemas both parsers must read alike: accepted with
// the same tree, or rejected.
var parseCorpus = []string{
	`"string"`, `"null"`, `null`, `string`, `"nope"`, `{"type":"int"}`, `{"type":{"type":"int"}}`,
	`["null","string"]`, `["null","null"]`, `[["int"]]`, `["int","long","float"]`, `[]`,
	`{"type":["int","string"]}`, `{"type":"array","items":"long"}`, `{"type":"array"}`,
	`{"type":"map","values":{"type":"array","items":"bytes"}}`, `{"type":"map"}`,
	`["int",{"type":"int","logicalType":"date"}]`, `["long",{"type":"long","logicalType":"timestamp-millis"},{"type":"long","logicalType":"timestamp-millis"}]`,
	`[{"type":"array","items":"int"},{"type":"array","items":"long"}]`,
	`[{"type":"map","values":"int"},{"type":"map","values":"long"}]`,
	`{"type":"record","name":"R","fields":[]}`, `{"type":"record","name":"R"}`, `{"type":"record","fields":[]}`,
	`{"type":"record","name":"","fields":[]}`, `{"type":"record","name":"1R","fields":[]}`,
	`{"type":"record","name":"a.b.R","fields":[{"name":"x","type":"R"}]}`,
	`{"type":"record","name":"a..R","fields":[]}`, `{"type":"record","name":"R.","fields":[]}`,
	`{"type":"record","name":"R","namespace":"a-b","fields":[]}`, `{"type":"record","name":"R","namespace":"1a","fields":[]}`,
	`{"type":"record","name":"R","namespace":"a.b","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}},{"name":"f","type":"a.b.E"},{"name":"g","type":"E"}]}`,
	`{"type":"record","name":"R","namespace":"a","fields":[{"name":"e","type":{"type":"enum","name":"c.E","symbols":["X"]}},{"name":"f","type":"E"}]}`,
	`{"type":"record","name":"R","namespace":"a","fields":[{"name":"e","type":{"type":"enum","name":"c.E","symbols":["X"]}},{"name":"f","type":"c.E"}]}`,
	`{"type":"record","name":"R","fields":[{"name":"x","type":"int"},{"name":"x","type":"long"}]}`,
	`{"type":"record","name":"R","fields":[{"name":"x"}]}`, `{"type":"record","name":"R","fields":[{"type":"int"}]}`,
	`{"type":"record","name":"R","fields":[{"name":"x-y","type":"int"}]}`, `{"type":"record","name":"R","fields":[{"name":"_x9","type":"int"}]}`,
	`{"type":"record","name":"R","fields":[{"name":"x","type":"int","order":"up"}]}`,
	`{"type":"record","name":"R","fields":[{"name":"x","type":"int","order":"descending"}]}`,
	`{"type":"record","name":"R","fields":[{"name":"x","type":"int","aliases":["y","z"]}]}`,
	`{"type":"record","name":"R","fields":[{"name":"x","type":"int","aliases":["a.y"]}]}`,
	`{"type":"record","name":"R","fields":[{"name":"next","type":["null","R"]}]}`,
	`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"record","name":"R","fields":[]}}]}`,
	`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"E","symbols":["A"]}},{"name":"b","type":{"type":"fixed","name":"E","size":1}}]}`,
	`{"type":"record","name":"R","aliases":["Old"],"fields":[{"name":"a","type":["null","Old"]}]}`,
	`{"type":"record","name":"R","aliases":["1Old"],"fields":[]}`,
	`{"type":"record","name":"R","doc":5,"fields":[]}`, `{"type":"record","name":5,"fields":[]}`,
	`{"type":"record","name":"R","fields":{}}`, `{"type":"record","name":"R","fields":[5]}`,
	`{"type":"error","name":"Oops","fields":[{"name":"m","type":"string"}]}`,
	`{"type":"enum","name":"E","symbols":["A","B"]}`, `{"type":"enum","name":"E","symbols":[]}`,
	`{"type":"enum","name":"E"}`, `{"type":"enum","name":"E","symbols":["A","A"]}`, `{"type":"enum","name":"E","symbols":["1A"]}`,
	`{"type":"enum","name":"E","symbols":["A"],"default":"A"}`, `{"type":"enum","name":"E","symbols":["A"],"default":"B"}`,
	`{"type":"enum","name":"E","symbols":["A",5]}`,
	`{"type":"fixed","name":"F","size":16}`, `{"type":"fixed","name":"F"}`, `{"type":"fixed","name":"F","size":-1}`,
	`{"type":"fixed","name":"F","size":"4"}`, `{"type":"fixed","name":"F","size":12,"logicalType":"duration"}`,
	`{"type":"fixed","name":"F","size":11,"logicalType":"duration"}`,
	`{"type":"int","logicalType":"date"}`, `{"type":"long","logicalType":"date"}`, `{"type":"int","logicalType":"time-millis"}`,
	`{"type":"long","logicalType":"time-micros"}`, `{"type":"long","logicalType":"timestamp-micros"}`,
	`{"type":"long","logicalType":"local-timestamp-millis"}`, `{"type":"long","logicalType":"local-timestamp-micros"}`,
	`{"type":"string","logicalType":"timestamp-millis"}`, `{"type":"int","logicalType":5}`,
	`{"type":"R"}`, `{"type":5}`, `{}`, `5`, `true`, `{"type":"record","name":"R","fields":[]} x`, `{"type":`,
	`[{"type":"record","name":"A","fields":[]},{"type":"record","name":"B","fields":[]},"A"]`,
	`[{"type":"record","name":"A","fields":[]},{"type":"record","name":"n.A","fields":[]}]`,
	`{"type":"record","name":"R","fields":[{"name":"u","type":["null",["int"]]}]}`,
}

// TestParseAgreesWithHamba: for every schema of the corpus and of
// testdata, kbatch and hamba both reject it or both accept it with the
// same tree.
func TestParseAgreesWithHamba(t *testing.T) {
	corpus := append([]string(nil), parseCorpus...)
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "*.avsc"))
	if len(files) == 0 {
		t.Fatal("no .avsc in schema/testdata")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, string(b))
	}
	accepted, rejected := 0, 0
	for _, text := range corpus {
		if agree(t, text) {
			accepted++
		} else {
			rejected++
		}
	}
	if accepted < 20 || rejected < 20 {
		t.Fatalf("%d accepted, %d rejected: the corpus tests one side only", accepted, rejected)
	}
}

// agree fails t unless kbatch and hamba read text alike, and says whether
// they accepted it.
func agree(t *testing.T, text string) bool {
	t.Helper()
	hs, herr := hamba.ParseBytesWithCache([]byte(text), "", &hamba.SchemaCache{})
	s, err := new(Names).Parse([]byte(text))
	if (err == nil) != (herr == nil) {
		t.Errorf("%s\nkbatch: %v\nhamba: %v", text, err, herr)
		return false
	}
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error of more than one line: %q", text, err)
		}
		return false
	}
	if got, want := describe(s, map[string]bool{}), describeHamba(hs, map[string]bool{}); got != want {
		t.Errorf("%s\nkbatch: %s\nhamba:  %s", text, got, want)
	}
	return true
}

// The logical types hamba does not know, and a fixed decimal's precision
// limit, as the specification gives them; invalid ones are ignored.
func TestParseLogicalTypes(t *testing.T) {
	for _, c := range []struct {
		text, want string
	}{
		{`{"type":"long","logicalType":"timestamp-nanos"}`, "longtimestamp-nanos"},
		{`{"type":"long","logicalType":"local-timestamp-nanos"}`, "longlocal-timestamp-nanos"},
		{`{"type":"int","logicalType":"timestamp-nanos"}`, "int"},
		{`{"type":"string","logicalType":"uuid"}`, "stringuuid"},
		{`{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}`, "fixed:U(16)uuid"},
		{`{"type":"fixed","name":"U","size":15,"logicalType":"uuid"}`, "fixed:U(15)"},
		{`{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}`, "bytesdecimal(4,2)"},
		{`{"type":"bytes","logicalType":"decimal","precision":4}`, "bytesdecimal(4,0)"},
		{`{"type":"bytes","logicalType":"decimal","precision":4,"scale":5}`, "bytes"},
		{`{"type":"bytes","logicalType":"decimal","precision":0}`, "bytes"},
		{`{"type":"bytes","logicalType":"decimal","precision":4,"scale":-1}`, "bytes"},
		{`{"type":"bytes","logicalType":"decimal","precision":"4"}`, "bytes"},
		{`{"type":"bytes","logicalType":"decimal","precision":4.5}`, "bytes"},
		{`{"type":"bytes","logicalType":"decimal","precision":4.0}`, "bytesdecimal(4,0)"},
		{`{"type":"string","logicalType":"decimal","precision":4}`, "string"},
		// 2^23-1 = 8388607: 6 digits in 3 bytes; 2^15-1: 4 in 2.
		{`{"type":"fixed","name":"D","size":3,"logicalType":"decimal","precision":6}`, "fixed:D(3)decimal(6,0)"},
		{`{"type":"fixed","name":"D","size":3,"logicalType":"decimal","precision":7}`, "fixed:D(3)"},
		{`{"type":"fixed","name":"D","size":2,"logicalType":"decimal","precision":4,"scale":4}`, "fixed:D(2)decimal(4,4)"},
		{`{"type":"fixed","name":"D","size":200,"logicalType":"decimal","precision":400}`, "fixed:D(200)decimal(400,0)"},
		{`{"type":"fixed","name":"D","size":200,"logicalType":"decimal","precision":482}`, "fixed:D(200)"},
	} {
		s, err := Parse(c.text)
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		if got := describe(s, map[string]bool{}); got != c.want {
			t.Errorf("%s: %s, want %s", c.text, got, c.want)
		}
	}
}

// Names registered by earlier parses resolve, as a registry schema's
// references need; a parse that fails leaves the table as it was.
func TestNamesResolveEarlierParses(t *testing.T) {
	var n Names
	if _, err := n.Parse([]byte(`{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Parse([]byte(`{"type":"record","name":"Broken","namespace":"shop","fields":[{"name":"x","type":"Nope"}]}`)); err == nil {
		t.Fatal("a reference to an unknown name parsed")
	}
	if _, err := n.Parse([]byte(`"shop.Broken"`)); err == nil {
		t.Fatal("a failed parse left its name in the table")
	}
	s, err := n.Parse([]byte(`{"type":"record","name":"Customer","namespace":"shop","fields":[{"name":"home","type":["null","Address"]},{"name":"work","type":"shop.Address"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	home, work := s.Fields[0].Type.Types[1], s.Fields[1].Type
	if home.FullName != "shop.Address" || home != work || home.Fields[0].Name != "city" {
		t.Fatalf("home %+v, work %+v", home, work)
	}
	if _, err := Parse(`{"type":"record","name":"C","namespace":"shop","fields":[{"name":"a","type":"Address"}]}`); err == nil {
		t.Fatal("a fresh table resolved a name it never held")
	}
	// The same names with hamba's shared cache.
	cache := &hamba.SchemaCache{}
	if _, err := hamba.ParseWithCache(`{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}`, "", cache); err != nil {
		t.Fatal(err)
	}
	if _, err := hamba.ParseWithCache(`{"type":"record","name":"Customer","namespace":"shop","fields":[{"name":"home","type":["null","Address"]},{"name":"work","type":"shop.Address"}]}`, "", cache); err != nil {
		t.Fatal(err)
	}
}

func TestParseBoundsDepth(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, MaxDepth+1) + `"int"` + strings.Repeat(`}`, MaxDepth+1)
	_, err := Parse(deep)
	if err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("a schema %d levels deep: %v", MaxDepth+1, err)
	}
	ok := strings.Repeat(`{"type":"array","items":`, MaxDepth-1) + `"int"` + strings.Repeat(`}`, MaxDepth-1)
	if _, err := Parse(ok); err != nil {
		t.Fatalf("a schema %d levels deep: %v", MaxDepth-1, err)
	}
}

// Field defaults are kept as JSON, whatever the field's type.
func TestFieldDefaultsAreKeptAsJSON(t *testing.T) {
	s, err := Parse(`{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"},{"name":"b","type":["null","int"],"default":null},{"name":"c","type":"int"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	f := s.Fields
	if !f[0].HasDefault || f[0].Default != "x" || !f[1].HasDefault || f[1].Default != nil || f[2].HasDefault {
		t.Fatalf("defaults %+v %+v %+v", f[0], f[1], f[2])
	}
	var herr error
	_, herr = hamba.Parse(`{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}`)
	if herr == nil || knownDifference("", herr) != "default" {
		t.Fatalf("hamba's answer to a bad default changed: %v", herr)
	}
}

// FuzzParse: kbatch and hamba agree on every schema text, bar the known
// differences; kbatch's errors are one line.
func FuzzParse(f *testing.F) {
	for _, s := range parseCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		hs, herr := hamba.ParseBytesWithCache([]byte(text), "", &hamba.SchemaCache{})
		s, err := new(Names).Parse([]byte(text))
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
		if knownDifference(text, herr) != "" {
			return
		}
		if err == nil && herr != nil && strings.Contains(herr.Error(), "unknown type") {
			// A name of the null namespace referred to from another
			// namespace: kbatch finds it as Java's Avro does.
			return
		}
		if (err == nil) != (herr == nil) {
			t.Fatalf("%q\nkbatch: %v\nhamba: %v", text, err, herr)
		}
		if err == nil {
			if got, want := describe(s, map[string]bool{}), describeHamba(hs, map[string]bool{}); got != want {
				t.Fatalf("%q\nkbatch: %s\nhamba:  %s", text, got, want)
			}
		}
	})
}
