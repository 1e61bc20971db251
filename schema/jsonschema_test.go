package schema

import (
	"strings"
	"testing"
)

// The reason a value does not match names where in the schema and what.
func TestJSONSchemaReasonNamesTheSchemaPlace(t *testing.T) {
	c, err := compileJSONSchema(7, `{"type":"object","properties":{"age":{"type":"integer","minimum":0}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ payload, reason string }{
		{`{"age":3}`, ""},
		{`{"age":-1}`, "does not match its JSON Schema: at /properties/age: minimum: -1 is less than 0"},
		{`{"age":"x"}`, `does not match its JSON Schema: at /properties/age: type: x has type "string", want "integer"`},
		{`[]`, `does not match its JSON Schema: type: [] has type "array", want "object"`},
	} {
		reason, err := c.check([]byte(tc.payload))
		if err != nil {
			t.Fatalf("%s: %v", tc.payload, err)
		}
		if tc.reason == "" && reason != "" || !strings.HasPrefix(reason, tc.reason) {
			t.Errorf("%s: reason %q, want %q", tc.payload, reason, tc.reason)
		}
	}
}

// Integers beyond float64's 53 bits are compared as integers: 2^53+1 is
// above a maximum of 2^53, which a float64 would round it to.
func TestJSONSchemaIntegersAreExact(t *testing.T) {
	c, err := compileJSONSchema(7, `{"type":"integer","maximum":9007199254740992}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reason, err := c.check([]byte(`9007199254740992`)); err != nil || reason != "" {
		t.Errorf("2^53: reason %q, err %v; want it to match", reason, err)
	}
	if reason, err := c.check([]byte(`9007199254740993`)); err != nil || !strings.Contains(reason, "maximum") {
		t.Errorf("2^53+1: reason %q, err %v; want maximum", reason, err)
	}
	if reason, err := c.check([]byte(`1.5`)); err != nil || !strings.Contains(reason, "type") {
		t.Errorf("1.5: reason %q, err %v; want type", reason, err)
	}
}

// draft-07 and 2020-12 schemas are checked; a schema naming another draft
// compiles to a checker of nothing, so its values show unchecked rather
// than as undecodable bytes.
func TestJSONSchemaDrafts(t *testing.T) {
	for _, tc := range []struct {
		draft   string
		checked bool
	}{
		{"", true},
		{"http://json-schema.org/draft-07/schema#", true},
		{"https://json-schema.org/draft-07/schema", true},
		{"https://json-schema.org/draft/2020-12/schema", true},
		{"http://json-schema.org/draft-04/schema#", false},
		{"http://json-schema.org/draft-06/schema#", false},
		{"https://json-schema.org/draft/2019-09/schema", false},
	} {
		head := ""
		if tc.draft != "" {
			head = `"$schema":"` + tc.draft + `",`
		}
		// draft-04's exclusiveMinimum is a boolean, which the later drafts refuse.
		c, err := compileJSONSchema(1, `{`+head+`"type":"object","required":["id"],"properties":{"n":{"minimum":0,"exclusiveMinimum":true}}}`, nil)
		if tc.checked {
			if err == nil {
				t.Errorf("%q: a boolean exclusiveMinimum compiled", tc.draft)
			}
			c, err = compileJSONSchema(1, `{`+head+`"type":"object","required":["id"]}`, nil)
		}
		if err != nil {
			t.Errorf("%q: %v", tc.draft, err)
			continue
		}
		reason, err := c.check([]byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := reason != ""; got != tc.checked {
			t.Errorf("%q: reason %q; want checked %v", tc.draft, reason, tc.checked)
		}
	}
}

// A value is one JSON value, checked or not.
func TestJSONSchemaValueIsOneJSONValue(t *testing.T) {
	checked, err := compileJSONSchema(1, `{"type":"object"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	unchecked, err := compileJSONSchema(1, `{"$schema":"http://json-schema.org/draft-04/schema#"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*jsonChecker{checked, unchecked} {
		for _, payload := range []string{`{"a":`, `{} {}`, `{}x`, ``} {
			if _, err := c.check([]byte(payload)); err == nil || !strings.HasPrefix(err.Error(), "not JSON") {
				t.Errorf("%q: err %v, want not JSON", payload, err)
			}
		}
	}
}

// A $ref reaches the schema's references, by name relative to its
// location or its $id, and nothing else.
func TestJSONSchemaRefsOnlyToReferences(t *testing.T) {
	refs := []namedSchema{{Name: "address.json", Schema: `{"type":"object","required":["city"]}`}}
	for _, text := range []string{
		`{"properties":{"a":{"$ref":"address.json"}}}`,
		`{"$id":"https://example.com/s/customer.json","properties":{"a":{"$ref":"address.json"}}}`,
		`{"$id":"https://example.com/s/customer.json","properties":{"a":{"$ref":"https://example.com/s/address.json"}}}`,
	} {
		c, err := compileJSONSchema(3, text, refs)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		reason, err := c.check([]byte(`{"a":{}}`))
		if err != nil || !strings.Contains(reason, "city") {
			t.Errorf("%s: reason %q, err %v; want the reference's required city", text, reason, err)
		}
	}
	for _, text := range []string{
		`{"$ref":"other.json"}`,
		`{"$ref":"https://example.com/address.json"}`,
		`{"$ref":"file:///etc/passwd"}`,
	} {
		if _, err := compileJSONSchema(3, text, refs); err == nil || !strings.Contains(err.Error(), "not among the schema's references") {
			t.Errorf("%s: err %v, want not among the references", text, err)
		}
	}
}

// A schema whose references lead back to themselves without going into
// the value is refused when compiled: validating against it would
// recurse until the stack overflows, which no recover catches. Recursion
// that goes into the value is a schema like any other.
func TestJSONSchemaRefCycleRefused(t *testing.T) {
	address := []namedSchema{{Name: "address.json", Schema: `{"$ref":"customer.json"}`}}
	customer := []namedSchema{{Name: "customer.json", Schema: `{"allOf":[{"$ref":"address.json"}]}`}}
	for _, tc := range []struct {
		text string
		refs []namedSchema
	}{
		{`{"$ref":"#"}`, nil},
		{`{"allOf":[{"$ref":"#"}]}`, nil},
		{`{"anyOf":[{"type":"string"},{"not":{"$ref":"#"}}]}`, nil},
		{`{"if":{"$ref":"#/$defs/a"},"$defs":{"a":{"then":{"$ref":"#"}}}}`, nil},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, nil},
		{`{"$defs":{"a~b/c":{"$ref":"#/$defs/a~0b~1c"}}}`, nil},
		{`{"$defs":{"a":{"$anchor":"x","oneOf":[{"$ref":"#x"}]}}}`, nil},
		{`{"$id":"https://example.com/s/root.json","$defs":{"a":{"$ref":"https://example.com/s/root.json"}},"$ref":"#/$defs/a"}`, nil},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$id":"#a","dependencies":{"x":{"$ref":"#a"}}}}}`, nil},
		{`{"dependentSchemas":{"x":{"$ref":"#"}}}`, nil},
		{`{"$rEf":"#"}`, nil},
		{`{"$defs":{"a":{"ALLOF":[{"$REF":"#"}]}},"$ref":"#/$defs/a"}`, nil},
		{`{"$ref":"#/$defs/a","$REF":"#"}`, nil},
		{`{"$ref":"address.json"}`, append(address, customer...)},
	} {
		_, err := compileJSONSchema(9, tc.text, tc.refs)
		if err == nil || !strings.Contains(err.Error(), "lead back to themselves") {
			t.Errorf("%s: err %v, want the cycle refused", tc.text, err)
		}
	}
	tree, err := compileJSONSchema(9, `{"type":"object","required":["n"],"properties":{"n":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#"}}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"object"}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reason, err := tree.check([]byte(`{"n":1,"kids":[{"n":2,"kids":[{"n":3},{"m":4}]}]}`)); err != nil || !strings.Contains(reason, "required") {
		t.Errorf("tree: reason %q, err %v; want the deepest kid's missing n", reason, err)
	}
}

// A value is checked when the validator's work on it is bounded: nested
// at most 64 levels, and within maxCheckCost. Past that it is shown
// unchecked: a record must not stall the decoder (a value nested 10,000
// levels took 22 s; anyOf's recursive branches double the work at each
// level, and never end at 40).
func TestJSONSchemaCheckWorkIsBounded(t *testing.T) {
	nested := func(depth int, leaf string) []byte {
		return []byte(strings.Repeat("[", depth) + leaf + strings.Repeat("]", depth))
	}
	arrays, err := compileJSONSchema(1, `{"type":"array","items":{"$ref":"#"}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	doubling, err := compileJSONSchema(2, `{"type":"array","anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := compileJSONSchema(3, `{"type":"array","items":{"type":"object","required":["f0"],"properties":{`+
		`"f0":{"type":"integer"},"f1":{"type":"integer"},"f2":{"type":"integer"},"f3":{"type":"integer"},"f4":{"type":"integer"},`+
		`"f5":{"type":"integer"},"f6":{"type":"integer"},"f7":{"type":"integer"},"f8":{"type":"integer"},"f9":{"type":"integer"}}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := `{"f0":1,"f1":1,"f2":1,"f3":1,"f4":1,"f5":1,"f6":1,"f7":1,"f8":1,"f9":1}`
	wideValue := "[" + strings.Repeat(row+",", 999) + `{"f1":1}]`
	for _, tc := range []struct {
		name    string
		c       *jsonChecker
		payload []byte
		checked bool
	}{
		{"64 levels", arrays, nested(64, "1"), true},
		{"65 levels", arrays, nested(65, "1"), false},
		{"10,000 levels", arrays, nested(9990, "1"), false},
		{"doubling, 6 levels", doubling, nested(6, "1"), true},
		{"doubling, 40 levels", doubling, nested(40, "1"), false},
		{"1000 rows of 10 fields", wide, []byte(wideValue), true},
	} {
		reason, err := tc.c.check(tc.payload)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := reason != ""; got != tc.checked {
			t.Errorf("%s: reason %q; want checked %v", tc.name, reason, tc.checked)
		}
	}
}

// true, false and {} are schemas: everything matches the first and the
// last, nothing the second.
func TestJSONSchemaBooleanAndEmpty(t *testing.T) {
	for _, tc := range []struct {
		schema string
		match  bool
	}{{`true`, true}, {`{}`, true}, {`false`, false}, {`{"properties":{"a":false}}`, true}} {
		c, err := compileJSONSchema(1, tc.schema, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		for _, payload := range []string{`1`, `[1,{"b":[]}]`, `{"b":null}`} {
			reason, err := c.check([]byte(payload))
			if err != nil || (reason == "") != tc.match {
				t.Errorf("%s, %s: reason %q, err %v; want match %v", tc.schema, payload, reason, err, tc.match)
			}
		}
	}
}

// A numeric bound's reason reads its numbers as JSON writes them.
func TestJSONSchemaBoundReasonsReadAsJSON(t *testing.T) {
	for _, tc := range []struct{ schema, payload, reason string }{
		{`{"maximum":2.5}`, `2.75`, "maximum: 2.75 is greater than 2.5"},
		{`{"exclusiveMinimum":0}`, `-0.125`, "exclusiveMinimum: -0.125 is less than or equal to 0"},
		{`{"multipleOf":3}`, `10`, "multipleOf: 10 is not a multiple of 3"},
		{`{"maximum":9007199254740992}`, `9007199254740993`, "maximum: 9007199254740993 is greater than 9007199254740992"},
	} {
		c, err := compileJSONSchema(7, tc.schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		reason, err := c.check([]byte(tc.payload))
		if err != nil || reason != "does not match its JSON Schema: "+tc.reason {
			t.Errorf("%s against %s: reason %q, err %v; want %q", tc.payload, tc.schema, reason, err, tc.reason)
		}
	}
}
