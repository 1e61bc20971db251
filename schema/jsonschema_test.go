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

// Schemas of draft-04, draft-06, draft-07, 2019-09 and 2020-12 are
// checked; a schema naming another draft compiles to a checker of
// nothing, so its values show unchecked rather than as undecodable bytes.
func TestJSONSchemaDrafts(t *testing.T) {
	for _, tc := range []struct {
		draft   string
		checked bool
	}{
		{"", true},
		{"http://json-schema.org/draft-04/schema#", true},
		{"http://json-schema.org/draft-06/schema#", true},
		{"http://json-schema.org/draft-07/schema#", true},
		{"https://json-schema.org/draft-07/schema", true},
		{"https://json-schema.org/draft/2019-09/schema", true},
		{"https://json-schema.org/draft/2020-12/schema", true},
		{"http://json-schema.org/draft-03/schema#", false},
		{"https://example.com/my-own-meta-schema", false},
	} {
		head := ""
		if tc.draft != "" {
			head = `"$schema":"` + tc.draft + `",`
		}
		c, err := compileJSONSchema(1, `{`+head+`"type":"object","required":["id"]}`, nil)
		if err != nil {
			t.Errorf("%q: %v", tc.draft, err)
			continue
		}
		reason, err := c.check([]byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if tc.checked {
			want = `does not match its JSON Schema: required: missing properties: ["id"]`
		}
		if reason != want {
			t.Errorf("%q: reason %q, want %q", tc.draft, reason, want)
		}
	}
	c, err := compileJSONSchema(1, `{"$schema":"","type":"object"}`, nil)
	if err != nil || c == nil {
		t.Errorf(`"$schema":"": checker %v, err %v; want it read as 2020-12`, c, err)
	}
}

// A draft-04 schema is checked as draft-04 reads it: its values pass and
// fail, with the reason at the place in the schema as written.
func TestJSONSchemaDraft04Values(t *testing.T) {
	c, err := compileJSONSchema(4, `{"$schema":"http://json-schema.org/draft-04/schema#","id":"https://example.com/s/customer.json",
		"type":"object","required":["id","age"],"additionalProperties":false,
		"properties":{"id":{"type":"string","pattern":"^c-"},"age":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"$ref":"#/definitions/tag"}}},
		"definitions":{"tag":{"type":"string","maxLength":3}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ payload, reason string }{
		{`{"id":"c-1","age":3,"tags":["a","bc"]}`, ""},
		{`{"id":"c-1","age":-1}`, "at /properties/age: minimum: -1 is less than 0"},
		{`{"id":"x","age":1}`, `at /properties/id: pattern: "x" does not match regular expression "^c-"`},
		{`{"id":"c-1","age":1,"tags":["abcd"]}`, `at /definitions/tag: maxLength: "abcd" contains 4 Unicode code points, more than 3`},
		{`{"age":1}`, `at https://example.com/s/customer.json: required: missing properties: ["id"]`},
	} {
		want := ""
		if tc.reason != "" {
			want = "does not match its JSON Schema: " + tc.reason
		}
		if reason, err := c.check([]byte(tc.payload)); err != nil || reason != want {
			t.Errorf("%s: reason %q, err %v; want %q", tc.payload, reason, err, want)
		}
	}
}

// draft-04's id is a schema's id only where a schema is: a property,
// pattern property, definition or dependency named "id" is a name, and
// stays one. The schema's own id is the base its $refs resolve against.
func TestJSONSchemaDraft04PropertyNamedID(t *testing.T) {
	refs := []namedSchema{{Name: "address.json", Schema: `{"type":"object","required":["city"]}`}}
	c, err := compileJSONSchema(4, `{"$schema":"http://json-schema.org/draft-04/schema#","id":"https://example.com/s/customer.json",
		"properties":{"id":{"type":"string"},"home":{"$ref":"address.json"}},
		"patternProperties":{"^id$":{"maxLength":3}},
		"dependencies":{"id":{"required":["age"]}},
		"definitions":{"id":{"type":"integer"}}}`, refs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ payload, reason string }{
		{`{"id":"abc","age":1,"home":{"city":"x"}}`, ""},
		{`{"id":5,"age":1}`, `at /properties/id: type: 5 has type "integer", want "string"`},
		{`{"id":"abcd","age":1}`, `at /patternProperties/^id$: maxLength: "abcd" contains 4 Unicode code points, more than 3`},
		{`{"id":"abc"}`, `at /dependencies/id: required: missing properties: ["age"]`},
		{`{"home":{}}`, `required: missing properties: ["city"]`},
	} {
		want := ""
		if tc.reason != "" {
			want = "does not match its JSON Schema: " + tc.reason
		}
		if reason, err := c.check([]byte(tc.payload)); err != nil || reason != want {
			t.Errorf("%s: reason %q, err %v; want %q", tc.payload, reason, err, want)
		}
	}
}

// draft-04's exclusiveMaximum and exclusiveMinimum are booleans that make
// maximum and minimum exclusive; false leaves them inclusive. A numeric
// one, the form of later drafts, is read as draft-06 reads it.
func TestJSONSchemaDraft04ExclusiveBounds(t *testing.T) {
	c, err := compileJSONSchema(4, `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{
		"lo":{"minimum":0,"exclusiveMinimum":true},
		"hi":{"maximum":10,"exclusiveMaximum":true},
		"both":{"minimum":0,"exclusiveMinimum":false,"maximum":10,"exclusiveMaximum":false},
		"alone":{"exclusiveMinimum":true},
		"numeric":{"exclusiveMinimum":5}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ payload, reason string }{
		{`{"lo":0.5,"hi":9.5,"both":0,"alone":-1,"numeric":6}`, ""},
		{`{"both":10}`, ""},
		{`{"lo":0}`, "at /properties/lo: exclusiveMinimum: 0 is less than or equal to 0"},
		{`{"hi":10}`, "at /properties/hi: exclusiveMaximum: 10 is greater than or equal to 10"},
		{`{"both":-1}`, "at /properties/both: minimum: -1 is less than 0"},
		{`{"both":11}`, "at /properties/both: maximum: 11 is greater than 10"},
		{`{"numeric":5}`, "at /properties/numeric: exclusiveMinimum: 5 is less than or equal to 5"},
	} {
		want := ""
		if tc.reason != "" {
			want = "does not match its JSON Schema: " + tc.reason
		}
		if reason, err := c.check([]byte(tc.payload)); err != nil || reason != want {
			t.Errorf("%s: reason %q, err %v; want %q", tc.payload, reason, err, want)
		}
	}
}

// Keywords draft-04 does not have are ignored in a draft-04 schema, as
// are keywords written in other letters; true and false where a schema
// goes are read as draft-06 reads them.
func TestJSONSchemaDraft04IgnoresLaterKeywords(t *testing.T) {
	c, err := compileJSONSchema(4, `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{
		"c":{"const":1},"k":{"contains":{"type":"string"}},"p":{"propertyNames":{"maxLength":1}},
		"i":{"if":{"type":"integer"},"then":{"minimum":100}},"u":{"unevaluatedProperties":false},
		"m":{"Maximum":1,"CONST":2},"no":false,"any":true}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reason, err := c.check([]byte(`{"c":2,"k":[1],"p":{"long":1},"i":1,"u":{"x":1},"m":5,"any":[]}`)); err != nil || reason != "" {
		t.Errorf("later keywords: reason %q, err %v; want them ignored", reason, err)
	}
	if reason, err := c.check([]byte(`{"no":1}`)); err != nil || !strings.HasPrefix(reason, "does not match its JSON Schema: at /properties/no: ") {
		t.Errorf("false: reason %q, err %v; want it to match nothing", reason, err)
	}
}

// draft-06 has const, contains and propertyNames, and not if, then and
// else.
func TestJSONSchemaDraft06Values(t *testing.T) {
	c, err := compileJSONSchema(6, `{"$schema":"http://json-schema.org/draft-06/schema#","$id":"https://example.com/s/x.json",
		"properties":{"c":{"const":1},"k":{"contains":{"type":"string"}},"n":{"exclusiveMinimum":0},
		"i":{"if":{"type":"integer"},"then":{"minimum":100},"else":false}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ payload, reason string }{
		{`{"c":1,"k":[1,"a"],"n":1,"i":1}`, ""},
		{`{"i":"x"}`, ""},
		{`{"c":2}`, "at /properties/c: const: 2 does not equal 1"},
		{`{"n":0}`, "at /properties/n: exclusiveMinimum: 0 is less than or equal to 0"},
	} {
		want := ""
		if tc.reason != "" {
			want = "does not match its JSON Schema: " + tc.reason
		}
		if reason, err := c.check([]byte(tc.payload)); err != nil || reason != want {
			t.Errorf("%s: reason %q, err %v; want %q", tc.payload, reason, err, want)
		}
	}
	if reason, err := c.check([]byte(`{"k":[1]}`)); err != nil || !strings.HasPrefix(reason, "does not match its JSON Schema: at /properties/k: contains: ") {
		t.Errorf("contains: reason %q, err %v", reason, err)
	}
}

// A 2019-09 array of items applies to the value's first items, and
// additionalItems to the rest; a reason names them as written, not as
// 2020-12's prefixItems and items. With one schema for items,
// additionalItems means nothing.
func TestJSONSchema2019TupleItems(t *testing.T) {
	const d = `"$schema":"https://json-schema.org/draft/2019-09/schema",`
	tuple, err := compileJSONSchema(19, `{`+d+`"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":{"type":"boolean"}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed, err := compileJSONSchema(19, `{`+d+`"items":[{"type":"string"}],"additionalItems":false}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := compileJSONSchema(19, `{`+d+`"items":{"type":"string"},"additionalItems":false}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c               *jsonChecker
		payload, reason string
	}{
		{tuple, `["a",1,true,false]`, ""},
		{tuple, `["a"]`, ""},
		{tuple, `[1]`, `at /items/0: type: 1 has type "integer", want "string"`},
		{tuple, `["a","b"]`, `at /items/1: type: b has type "string", want "integer"`},
		{tuple, `["a",1,2]`, `at /additionalItems: type: 2 has type "integer", want "boolean"`},
		{closed, `["a"]`, ""},
		{closed, `["a",1]`, "at /additionalItems: not: "},
		{list, `["a","b","c"]`, ""},
		{list, `["a",1]`, `at /items: type: 1 has type "integer", want "string"`},
	} {
		reason, err := tc.c.check([]byte(tc.payload))
		if err != nil || (tc.reason == "") != (reason == "") || !strings.HasPrefix(reason, "does not match its JSON Schema: "+tc.reason) && tc.reason != "" {
			t.Errorf("%s: reason %q, err %v; want %q", tc.payload, reason, err, tc.reason)
		}
	}
}

// 2019-09's $recursiveRef "#" goes to the outermost schema resource, in
// the value's path through the schema, whose root says $recursiveAnchor
// true: a tree extended by a stricter tree is strict down to its leaves.
// Without $recursiveAnchor it is a $ref to its resource's root. Another
// $recursiveRef has no exact 2020-12 form: the values are unchecked.
func TestJSONSchema2019RecursiveRef(t *testing.T) {
	const d = `"$schema":"https://json-schema.org/draft/2019-09/schema",`
	tree := `{"$id":"tree","$recursiveAnchor":true,"type":"object","properties":{"data":true,"children":{"type":"array","items":{"$recursiveRef":"#"}}}}`
	strict, err := compileJSONSchema(19, `{`+d+`"$id":"https://example.com/strict","$recursiveAnchor":true,"$ref":"tree","unevaluatedProperties":false,"$defs":{"tree":`+tree+`}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	loose, err := compileJSONSchema(19, `{`+d+`"$id":"https://example.com/loose","$ref":"tree","unevaluatedProperties":false,"$defs":{"tree":`+tree+`}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := compileJSONSchema(19, `{`+d+`"type":"object","required":["n"],"properties":{"kids":{"items":{"$recursiveRef":"#"}}}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		c       *jsonChecker
		payload string
		match   bool
	}{
		{"strict", strict, `{"data":1,"children":[{"data":2,"children":[]}]}`, true},
		{"strict, a leaf's unknown member", strict, `{"children":[{"children":[{"daat":1}]}]}`, false},
		{"loose, a leaf's unknown member", loose, `{"children":[{"children":[{"daat":1}]}]}`, true},
		{"loose, the root's unknown member", loose, `{"daat":1}`, false},
		{"plain", plain, `{"n":1,"kids":[{"n":2,"kids":[{"n":3}]}]}`, true},
		{"plain, a kid without n", plain, `{"n":1,"kids":[{"n":2,"kids":[{}]}]}`, false},
	} {
		reason, err := tc.c.check([]byte(tc.payload))
		if err != nil || (reason == "") != tc.match {
			t.Errorf("%s: reason %q, err %v; want match %v", tc.name, reason, err, tc.match)
		}
	}
	other, err := compileJSONSchema(19, `{`+d+`"properties":{"a":{"$recursiveRef":"#/$defs/x"}},"required":["b"]}`, nil)
	if err != nil || other != nil {
		t.Errorf("$recursiveRef other than #: checker %v, err %v; want unchecked", other, err)
	}
}

// Each reference is read in its own draft, or, without $schema, in the
// draft of the schema whose $ref names it. A set mixing draft-04/06/07
// with 2019-09/2020-12 is read by the validator in one draft, which would
// misread the others: it is not checked.
func TestJSONSchemaReferenceOfAnotherDraft(t *testing.T) {
	const (
		d4   = `"$schema":"http://json-schema.org/draft-04/schema#",`
		d7   = `"$schema":"http://json-schema.org/draft-07/schema#",`
		d19  = `"$schema":"https://json-schema.org/draft/2019-09/schema",`
		d20  = `"$schema":"https://json-schema.org/draft/2020-12/schema",`
		open = `"properties":{"a":{"$ref":"a.json"}}}`
	)
	for _, tc := range []struct {
		name, schema, ref, payload, reason string
	}{
		{"draft-07 to draft-04", `{` + d7 + open, `{` + d4 + `"minimum":0,"exclusiveMinimum":true}`, `{"a":0}`,
			"exclusiveMinimum: 0 is less than or equal to 0"},
		{"draft-04 to no $schema", `{` + d4 + open, `{"minimum":0,"exclusiveMinimum":true,"const":5}`, `{"a":0}`,
			"exclusiveMinimum: 0 is less than or equal to 0"},
		{"draft-04 to no $schema, const ignored", `{` + d4 + open, `{"const":5}`, `{"a":0}`, ""},
		{"2020-12 to 2019-09", `{` + d20 + open, `{` + d19 + `"items":[{"type":"string"}],"additionalItems":false}`, `{"a":["x",1]}`,
			"at /additionalItems: not: "},
		{"2019-09 to no $schema", `{` + d19 + open, `{"items":[{"type":"string"}]}`, `{"a":[1]}`,
			`at /items/0: type: 1 has type "integer", want "string"`},
	} {
		c, err := compileJSONSchema(5, tc.schema, []namedSchema{{Name: "a.json", Schema: tc.ref}})
		if err != nil || c == nil {
			t.Errorf("%s: checker %v, err %v", tc.name, c, err)
			continue
		}
		reason, err := c.check([]byte(tc.payload))
		if err != nil || (tc.reason == "") != (reason == "") || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: reason %q, err %v; want %q", tc.name, reason, err, tc.reason)
		}
	}
	for _, tc := range []struct{ schema, ref string }{
		{`{` + d4 + open, `{` + d20 + `"type":"string"}`},
		{`{` + d19 + open, `{` + d7 + `"type":"string"}`},
		{`{` + d7 + open, `{` + d20 + `"prefixItems":[{"type":"string"}]}`},
		{`{` + d20 + open, `{"$schema":"http://json-schema.org/draft-03/schema#"}`},
	} {
		c, err := compileJSONSchema(5, tc.schema, []namedSchema{{Name: "a.json", Schema: tc.ref}})
		if err != nil || c != nil {
			t.Errorf("%s with %s: checker %v, err %v; want unchecked", tc.schema, tc.ref, c, err)
		}
	}
}

// The translation walks a schema's nesting to a bound, so a deeply
// nested schema is refused in one line rather than exhausting the stack.
func TestJSONSchemaDraftNestingIsBounded(t *testing.T) {
	nested := func(head string, depth int) string {
		return strings.Repeat(`{`+head+`"not":`, depth) + `{}` + strings.Repeat(`}`, depth)
	}
	for _, head := range []string{`"$schema":"http://json-schema.org/draft-04/schema#",`, `"$schema":"https://json-schema.org/draft/2019-09/schema",`, ``} {
		_, err := compileJSONSchema(1, nested(head, 5000), nil)
		if err == nil || !strings.Contains(err.Error(), "nested more than 1000 levels") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s 5000 levels: err %v; want refused for its nesting", head, err)
		}
		c, err := compileJSONSchema(1, `{"$schema":"http://json-schema.org/draft-04/schema#","not":`+nested("", 100)+`}`, nil)
		if err != nil || c == nil {
			t.Errorf("100 levels: checker %v, err %v", c, err)
		}
	}
}

// A value is one JSON value, checked or not.
func TestJSONSchemaValueIsOneJSONValue(t *testing.T) {
	checked, err := compileJSONSchema(1, `{"type":"object"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	unchecked, err := compileJSONSchema(1, `{"$schema":"http://json-schema.org/draft-03/schema#"}`, nil)
	if err != nil || unchecked != nil {
		t.Fatalf("draft-03: checker %v, err %v; want unchecked", unchecked, err)
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

// A reason names a place by its pointer alone, not the document it is
// in: where a 2019-09 reference's translated place is also a place of
// another document, the reason gives it as the validator names it
// rather than guess.
func TestJSONSchemaPlaceTwoDocumentsNameDifferently(t *testing.T) {
	c, err := compileJSONSchema(8, `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"$ref":"a.json"}]}`,
		[]namedSchema{{Name: "a.json", Schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","items":[{"type":"string"}]}`}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ payload, reason string }{
		{`[["x"]]`, ""},
		{`[[1]]`, `does not match its JSON Schema: at /prefixItems/0: type: 1 has type "integer", want "string"`},
	} {
		if reason, err := c.check([]byte(tc.payload)); err != nil || reason != tc.reason {
			t.Errorf("%s: reason %q, err %v; want %q", tc.payload, reason, err, tc.reason)
		}
	}
}

// The bounds hold for a translated schema as for any other: references
// that lead back to themselves without going into the value are refused,
// and a value whose check would double at each level is unchecked.
func TestJSONSchemaDraftBoundsHold(t *testing.T) {
	const (
		d4  = `"$schema":"http://json-schema.org/draft-04/schema#",`
		d19 = `"$schema":"https://json-schema.org/draft/2019-09/schema",`
	)
	for _, text := range []string{
		`{` + d4 + `"$ref":"#"}`,
		`{` + d4 + `"id":"https://example.com/a.json","definitions":{"a":{"allOf":[{"$ref":"a.json"}]}},"not":{"$ref":"#/definitions/a"}}`,
		`{` + d19 + `"$recursiveAnchor":true,"anyOf":[{"$recursiveRef":"#"}]}`,
		`{` + d19 + `"oneOf":[{"type":"string"},{"$recursiveRef":"#"}]}`,
	} {
		if _, err := compileJSONSchema(9, text, nil); err == nil || !strings.Contains(err.Error(), "lead back to themselves") {
			t.Errorf("%s: err %v, want the cycle refused", text, err)
		}
	}
	nested := func(depth int) []byte {
		return []byte(strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth))
	}
	for _, text := range []string{
		`{` + d4 + `"type":"array","anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}`,
		`{` + d19 + `"$recursiveAnchor":true,"type":"array","anyOf":[{"items":{"$recursiveRef":"#"}},{"additionalItems":true,"items":[{"$recursiveRef":"#"}]}]}`,
	} {
		c, err := compileJSONSchema(2, text, nil)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		for _, tc := range []struct {
			depth   int
			checked bool
		}{{6, true}, {40, false}} {
			reason, err := c.check(nested(tc.depth))
			if err != nil || (reason != "") != tc.checked {
				t.Errorf("%s, %d levels: reason %q, err %v; want checked %v", text, tc.depth, reason, err, tc.checked)
			}
		}
	}
}
