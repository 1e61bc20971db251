package avro

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// A namespace of "" is the null namespace, as the specification says: the
// type's full name has no namespace, and names inside it resolve from
// there, not from the enclosing namespace.
func TestEmptyNamespaceIsTheNullNamespace(t *testing.T) {
	s, err := Parse(`{"type":"record","name":"R","namespace":"a","fields":[
		{"name":"i","type":{"type":"record","name":"I","namespace":"","fields":[
			{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}}]}},
		{"name":"j","type":"I"},
		{"name":"k","type":"E"},
		{"name":"l","type":{"type":"record","name":"L","namespace":null,"fields":[]}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	i := s.Fields[0].Type
	if i.FullName != "I" || i.Namespace != "" || s.Fields[1].Type != i {
		t.Fatalf("I is %q, j is %q", i.FullName, s.Fields[1].Type.FullName)
	}
	if e := i.Fields[0].Type; e.FullName != "E" || s.Fields[2].Type != e {
		t.Fatalf("E is %q", e.FullName)
	}
	if l := s.Fields[3].Type; l.FullName != "a.L" {
		t.Fatalf("a null namespace is absent: L is %q", l.FullName)
	}
	if _, err := Parse(`{"type":"record","name":"R","namespace":"a","fields":[{"name":"i","type":{"type":"record","name":"I","namespace":"","fields":[]}},{"name":"j","type":"a.I"}]}`); err == nil {
		t.Fatal("a.I resolved, but I has the null namespace")
	}
	// A name of the null namespace is found from inside another
	// namespace when that namespace has none of it, as Java's Avro does.
	s, err = Parse(`{"type":"record","name":"Top","fields":[{"name":"s","type":{"type":"record","name":"S","namespace":"a","fields":[{"name":"up","type":["null","Top"]}]}}]}`)
	if err != nil || s.Fields[0].Type.Fields[0].Type.Types[1] != s {
		t.Fatalf("Top from namespace a: %v", err)
	}
}

// A named type called after a primitive type is refused: a reference to
// that name could only mean the primitive.
func TestPrimitiveNamesCannotNameTypes(t *testing.T) {
	for _, text := range []string{
		`{"type":"record","name":"int","fields":[]}`,
		`{"type":"enum","name":"string","symbols":["A"]}`,
		`{"type":"fixed","name":"null","size":1}`,
		`{"type":"record","name":"R","fields":[{"name":"f","type":{"type":"fixed","name":"bytes","namespace":"","size":1}}]}`,
	} {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), "primitive") {
			t.Errorf("%s: %v", text, err)
		}
	}
	// In a namespace the full name is another, as Java's Avro reads it.
	if s, err := Parse(`{"type":"record","name":"x.int","fields":[]}`); err != nil || s.FullName != "x.int" {
		t.Fatalf("x.int: %v", err)
	}
	// A symbol is no type name.
	if _, err := Parse(`{"type":"enum","name":"E","symbols":["null","int"]}`); err != nil {
		t.Fatal(err)
	}
}

// An alias never hides a name: a reference resolves to the type of that
// name whether the alias comes before or after it, and to an alias only
// when no type has the name.
func TestAliasNeverHidesAName(t *testing.T) {
	for _, text := range []string{
		`{"type":"record","name":"R","fields":[
			{"name":"b","type":{"type":"record","name":"B","fields":[{"name":"i","type":"int"}]}},
			{"name":"a","type":{"type":"record","name":"A","aliases":["B"],"fields":[]}},
			{"name":"c","type":"B"}]}`,
		`{"type":"record","name":"R","fields":[
			{"name":"a","type":{"type":"record","name":"A","aliases":["B"],"fields":[]}},
			{"name":"b","type":{"type":"record","name":"B","fields":[{"name":"i","type":"int"}]}},
			{"name":"c","type":"B"}]}`,
	} {
		s, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Fields[2].Type; c.FullName != "B" || len(c.Fields) != 1 {
			t.Fatalf("c resolved to %q", c.FullName)
		}
	}
	var n Names
	if _, err := n.Parse([]byte(`{"type":"record","name":"B","namespace":"s","fields":[{"name":"i","type":"int"}]}`)); err != nil {
		t.Fatal(err)
	}
	s, err := n.Parse([]byte(`{"type":"record","name":"R","namespace":"s","fields":[
		{"name":"a","type":{"type":"record","name":"A","aliases":["B","Old"],"fields":[]}},
		{"name":"c","type":"B"},{"name":"d","type":"Old"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c, d := s.Fields[1].Type, s.Fields[2].Type; c.FullName != "s.B" || d.FullName != "s.A" {
		t.Fatalf("c resolved to %q, d to %q", c.FullName, d.FullName)
	}
}

// A schema cannot define again a name its references define, as Java's
// Avro refuses: the two definitions could differ, and which one a
// reference meant would depend on the order of parsing.
func TestAReferencedNameCannotBeRedefined(t *testing.T) {
	var n Names
	if _, err := n.Parse([]byte(`{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}`)); err != nil {
		t.Fatal(err)
	}
	_, err := n.Parse([]byte(`{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"a","type":{"type":"record","name":"Address","fields":[{"name":"zip","type":"int"}]}}]}`))
	if err == nil || !strings.Contains(err.Error(), "already defined") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("redefinition: %v", err)
	}
	if s, err := n.Parse([]byte(`"shop.Address"`)); err != nil || s.Fields[0].Name != "city" {
		t.Fatalf("the table changed: %v", err)
	}
}

// Spec edge cases of names: a dotted name overrides the namespace, a
// reference to a name defined later in the text is unknown, unicode
// names are refused, and a type object as a type is refused.
func TestNameEdgeCases(t *testing.T) {
	s, err := Parse(`{"type":"record","name":"a.b.R","namespace":"x","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}},{"name":"f","type":"a.b.E"}]}`)
	if err != nil || s.FullName != "a.b.R" || s.Namespace != "a.b" || s.Fields[1].Type.FullName != "a.b.E" {
		t.Fatalf("dotted name: %+v, %v", s, err)
	}
	for _, text := range []string{
		`{"type":"record","name":"R","fields":[{"name":"f","type":"S"},{"name":"g","type":{"type":"record","name":"S","fields":[]}}]}`,
		`{"type":"record","name":"R","namespace":"é","fields":[]}`,
		`{"type":"record","name":"Ré","fields":[]}`,
		`{"type":{"type":"int"}}`,
		`["R",{"type":"record","name":"R","fields":[]}]`,
		`[{"type":"record","name":"R","fields":[]},{"type":"record","name":"R","fields":[]}]`,
	} {
		if _, err := Parse(text); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", text, err)
		}
	}
}

// The digits a fixed of a size holds are computed once per size in a
// parse: thousands of big fixed decimals in a registry schema cost what
// their text does, not a big number printed for each.
func TestFixedDecimalBoundCostsOncePerSize(t *testing.T) {
	const n = 1000
	var b strings.Builder
	b.WriteString(`{"type":"record","name":"R","fields":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"f%d","type":{"type":"fixed","name":"F%d","size":4096,"logicalType":"decimal","precision":9000}}`, i, i)
	}
	b.WriteString("]}")
	text := b.String()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Parse(text)
	runtime.ReadMemStats(&after)
	if err != nil || s.Fields[n-1].Type.Logical != Decimal || s.Fields[n-1].Type.Precision != 9000 {
		t.Fatalf("%v", err)
	}
	// The parse itself takes about 20 times the text; a bound printed for
	// every field would take 20 kB more each.
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(40*len(text)) {
		t.Fatalf("parsing %d bytes of schema allocated %d bytes", len(text), got)
	}
}
