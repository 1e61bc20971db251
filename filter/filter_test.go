package filter

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

func refund(value string) *record.Record {
	return &record.Record{Topic: "payments", Partition: 3, Offset: 1200,
		Timestamp: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		Key:       []byte("user-7"), Value: []byte(value),
		Headers: []*record.Header{
			{Key: []byte("source"), Value: []byte("web")},
			{Key: []byte("trace"), Value: []byte("a")},
			{Key: []byte("trace"), Value: []byte("b")},
		}}
}

// TestMatch: what each variable holds, as the package comment says.
func TestMatch(t *testing.T) {
	fr := refund(`{"amount":95.5,"country":"FR","type":"refund","items":[{"sku":"x"}],"count":3}`)
	for _, c := range []struct {
		expr string
		r    *record.Record
		want bool
	}{
		{`value.amount > 90.0 && value.country == "FR" && value.type == "refund"`, fr, true},
		{`value.amount > 90.0 && value.country == "DE"`, fr, false},
		{`value.amount > 90`, fr, true},                     // double against int
		{`value.count == 3 && value.count < 3.5`, fr, true}, // int against int and double
		{`value.items[0].sku == "x"`, fr, true},
		{`value.items.exists(i, i.sku == "y")`, fr, false},
		{`key == "user-7"`, fr, true},
		{`key.startsWith("user-")`, fr, true},
		{`topic == "payments" && partition == 3 && offset == 1200`, fr, true},
		{`offset >= 1200 && offset < 1300`, fr, true},
		{`timestamp > timestamp("2026-11-29T09:59:59Z")`, fr, true},
		{`timestamp < timestamp("2026-11-29T10:00:00Z")`, fr, false},
		{`headers.source == "web"`, fr, true},
		{`headers["trace"] == "b"`, fr, true}, // the last value wins
		{`headers_list.filter(h, h.key == "trace").map(h, h.value) == ["a", "b"]`, fr, true},
		{`size == 6 + ` + strconv.Itoa(len(fr.Value)) + ` + 6 + 3 + 5 + 1 + 5 + 1`, fr, true},
		{`"source" in headers && !("missing" in headers)`, fr, true},
		{`has(value.amount) && !has(value.vat)`, fr, true},
		{`value == "plain text"`, refund("plain text"), true},
		{`value.contains("text")`, refund("plain text"), true},
		{`value == 42`, refund("42"), true},
		{`value == b"\xff\x00"`, refund("\xff\x00"), true},
		{`value == null`, &record.Record{Topic: "t"}, true},
		{`key == null && value == ""`, &record.Record{Topic: "t", Value: []byte{}}, true},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		got, err := p.Match(c.r, nil)
		if err != nil {
			t.Errorf("%s: error %v", c.expr, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s on %s = %v, want %v", c.expr, c.r.Value, got, c.want)
		}
	}
}

// TestMatchErrors: a missing field, a type that does not fit, and a
// result that is not a bool are errors (no match), not a crash.
func TestMatchErrors(t *testing.T) {
	for _, c := range []struct{ expr, value, want string }{
		{`value.vat > 1.0`, `{"amount":1}`, "no such key: vat"},
		{`value.amount > 1.0`, `plain text`, "no such key"},
		{`value.amount`, `{"amount":1}`, "gave a int, not a bool"},
		{`value.amount == "x" || value.amount > "a"`, `{"amount":1}`, "no such overload"},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		ok, err := p.Match(refund(c.value), nil)
		if ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s = %v, %v; want no match and an error with %q", c.expr, c.value, ok, err, c.want)
		}
	}
}

// TestCompileErrors: a bad expression names its column and what was
// expected; one that can never be a bool is refused.
func TestCompileErrors(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`value.amount > `, "column 16: Syntax error: the expression ends too early expecting a value"},
		{`value.amount >> 3`, "column 15: Syntax error: extraneous input '>' expecting a value"},
		{"topic == 'x' &&\n  offset >", "line 2, column 11: "},
		{`nosuch == 1`, "column 1: undeclared reference to 'nosuch'"},
		{`"abc"`, "the expression is a string, never a bool"},
		{`offset + 1`, "the expression is an int, never a bool"},
		{`headers["a"] == 1`, "column 14: found no matching overload for '_==_' applied to '(string, int)'"},
		{`  `, "the expression is empty"},
		{"value == \"\x1b[31m", "\x1b[31m"},
	} {
		_, err := Compile(c.expr)
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("%q: %v, want a CompileError", c.expr, err)
			continue
		}
		// One line, raw: the printer escapes it once (record.String).
		msg := ce.Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.ContainsRune(record.String(msg), 0x1b) {
			t.Errorf("%q: %q, want one line with %q, safe once escaped", c.expr, msg, c.want)
		}
	}
}

// TestMatchAvro: a value that a schema decodes is matched by its fields,
// not by its bytes.
func TestMatchAvro(t *testing.T) {
	const avsc = `{"type":"record","name":"Payment","fields":[{"name":"amount","type":"double"},
	 {"name":"country","type":"string"},{"name":"type","type":{"type":"enum","name":"Kind","symbols":["sale","refund"]}},
	 {"name":"note","type":["null","string"],"default":null}]}`
	dec := avroFileDecoder(t, avsc)
	b, err := avro.Marshal(avro.MustParse(avsc), map[string]any{"amount": 95.5, "country": "FR", "type": "refund", "note": nil})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(`value.amount > 90.0 && value.country == "FR" && value.type == "refund" && value.note == null`)
	if err != nil {
		t.Fatal(err)
	}
	r := &record.Record{Topic: "payments", Value: b}
	if ok, err := p.Match(r, Schemas(dec)); !ok || err != nil {
		t.Errorf("decoded Avro = %v, %v; want a match", ok, err)
	}
	if ok, _ := p.Match(r, nil); ok {
		t.Error("the Avro bytes matched without their schema")
	}
}

// TestProjection: an expression that reads a value only through its
// top-level fields gets only those built; any other use gets all of it.
func TestProjection(t *testing.T) {
	for _, c := range []struct {
		expr   string
		whole  bool
		fields string
	}{
		{`value.amount > 90.0 && value.country == "FR"`, false, "amount country"},
		{`has(value.vat) || value["type"] == "refund"`, false, "vat type"},
		{`value.items[0].sku == "x"`, false, "items"},
		{`value == "x"`, true, ""},
		{`value.amount > 1.0 && size(value) > 2`, true, "amount"},
		{`headers_list.exists(value, value.key == "a")`, false, "key"}, // a shadowing variable only adds a field
		{`topic == "t"`, false, ""},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := strings.Join(p.valueProj.fields, " "); p.valueProj.whole != c.whole || got != c.fields {
			t.Errorf("%s: whole %v, fields %q; want %v, %q", c.expr, p.valueProj.whole, got, c.whole, c.fields)
		}
	}
	// Projected and whole values match alike.
	v := `{"amount":95.5,"country":"FR","type":"refund","vat":null,"x":[1,{"y":"\u00e9"}]}`
	for _, expr := range []string{`value.amount > 90.0 && value.vat == null`, `has(value.x) && !has(value.nope)`, `value["type"] == "refund"`} {
		p, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := Compile(expr + ` && size(value) == 5`)
		a, errA := p.Match(refund(v), nil)
		b, errB := whole.Match(refund(v), nil)
		if !a || !b || errA != nil || errB != nil {
			t.Errorf("%s: projected %v %v, whole %v %v; want both true", expr, a, errA, b, errB)
		}
	}
}

// TestSparkSQL: what means the same over Spark's Kafka columns is
// translated; what kbatch decodes is not.
func TestSparkSQL(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`partition in [0, 2] && offset >= 1200`, "((`partition` IN (0, 2)) AND (`offset` >= 1200))"},
		{`timestamp >= timestamp("2026-11-29T10:00:00Z") && !(topic == "a'b\\c")`,
			"((`timestamp` >= CAST('2026-11-29T10:00:00Z' AS TIMESTAMP)) AND (NOT (topic = 'a\\'b\\\\c')))"},
		{`offset - 10 > 5 || partition != 1`, "(((`offset` - 10) > 5) OR (`partition` <> 1))"},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.SparkSQL()
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{`value.amount > 90.0`, "value is decoded by kbatch"},
		{`partition == 1 && key == "k"`, "key is decoded by kbatch"},
		{`size > 10`, "size is not one of the columns"},
		{`topic.startsWith("a")`, "no form of startsWith"},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := p.SparkSQL(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error with %q", c.expr, got, err, c.want)
		}
	}
}

// textOnly hides a decoder's Go values: the filter parses its JSON text.
type textOnly struct{ Decoder }

// TestMatchAvroValuesAsText: a filter reads an Avro value decoded straight
// into values (only the fields it names, or all of it) as it reads the
// value's JSON text: the same matches, the same failures.
func TestMatchAvroValuesAsText(t *testing.T) {
	const avsc = `{"type":"record","name":"P","fields":[{"name":"amount","type":"double"},{"name":"n","type":"int"},
	 {"name":"tags","type":{"type":"array","items":"string"}},{"name":"m","type":{"type":"map","values":"long"}},
	 {"name":"note","type":["null","string"],"default":null},{"name":"big","type":"string"}]}`
	dec := avroFileDecoder(t, avsc)
	b, err := avro.Marshal(avro.MustParse(avsc), map[string]any{"amount": 95.0, "n": 3, "tags": []string{"a", "b"},
		"m": map[string]int64{"k": 2}, "note": map[string]any{"string": "hi"}, "big": "x"})
	if err != nil {
		t.Fatal(err)
	}
	r := &record.Record{Topic: "p", Value: b}
	for _, c := range []struct {
		expr  string
		match bool
		fails bool
	}{
		{expr: `value.amount == 95`, match: true},
		{expr: `value.amount > 90.5 && value.n == 3`, match: true},
		{expr: `"b" in value.tags && value.m.k == 2 && value["note"] == "hi"`, match: true},
		{expr: `has(value.absent)`},
		{expr: `value.absent == 1`, fails: true},
		{expr: `value.size() == 6 && value.n == 3`, match: true},
		{expr: `value.exists(f, f == "big")`, match: true},
		{expr: `value == {"amount": 95.0}`},
		{expr: `value.note.size() == 2`, match: true},
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []Decoder{Schemas(dec), textOnly{Schemas(dec)}} {
			ok, err := p.Match(r, d)
			if ok != c.match || (err != nil) != c.fails {
				t.Errorf("%s with %T: %v, %v; want match %v, fails %v", c.expr, d, ok, err, c.match, c.fails)
			}
		}
	}
}

// avroFileDecoder is a decoder of the Avro schema avsc, read from a file,
// closed when the test ends.
func avroFileDecoder(tb testing.TB, avsc string) *schema.Decoder {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "schema.avsc")
	if err := os.WriteFile(path, []byte(avsc), 0o600); err != nil {
		tb.Fatal(err)
	}
	dec, err := schema.New(schema.Options{Local: []schema.Local{{AvroFile: path}}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(dec.Close)
	return dec
}
