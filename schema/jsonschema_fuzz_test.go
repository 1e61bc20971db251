package schema

import (
	"strings"
	"testing"
)

// FuzzJSONSchema: a registry's JSON Schema and a record's value, both
// untrusted, end in a compiled schema or an error, and in a reason or an
// error, never in a panic or a hang; a reason is one line.
func FuzzJSONSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"age":{"type":"integer","minimum":0}},"required":["age"]}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}},"$ref":"#/$defs/a"}`,
		`{"items":{"$ref":"#"},"uniqueItems":true,"maxItems":3}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false,"dependencies":{"a":["b"]}}`,
		`{"$dynamicAnchor":"n","anyOf":[{"type":"null"},{"properties":{"x":{"$dynamicRef":"#n"}}}]}`,
		`{"patternProperties":{"^a":{"multipleOf":0.01}},"propertyNames":{"maxLength":3},"contains":{"const":1},"minContains":2}`,
		`{"oneOf":[{"enum":[1,"a",null]},{"not":{"type":"number"}}],"if":{"type":"string"},"then":{"pattern":"^x"},"else":{"format":"email"}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","id":"https://example.com/s.json","properties":{"id":{"minimum":0,"exclusiveMinimum":true},"age":{"$ref":"r.json"}},"definitions":{"id":{"maximum":5,"exclusiveMaximum":false}},"const":1,"dependencies":{"a":["b"]}}`,
		`{"$schema":"http://json-schema.org/draft-06/schema#","contains":{"const":1},"if":{"type":"string"},"then":false,"items":[true,{"propertyNames":{"maxLength":1}}]}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","items":[{"type":"string"},{"$ref":"#"}],"additionalItems":{"type":"integer"},"dependencies":{"a":false},"$defs":{"t":{"$id":"t","$recursiveAnchor":true,"properties":{"x":{"$recursiveRef":"#"}}}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"anyOf":[{"type":"null"},{"properties":{"x":{"$recursiveRef":"#"}}}],"unevaluatedProperties":false}`,
	} {
		f.Add(s, `{"age":-1,"a":1,"x":{"x":null}}`)
		f.Add(s, `[1,1,"x",[2]]`)
	}
	f.Add(`{}`, `[{}]`)
	f.Add(`true`, `1`)
	f.Fuzz(func(t *testing.T, text, payload string) {
		c, err := compileJSONSchema(1, text, []namedSchema{{Name: "r.json", Schema: `{"type":"string"}`}})
		if err != nil {
			return
		}
		reason, err := c.check([]byte(payload))
		if err == nil && strings.ContainsAny(reason, "\n\r") {
			t.Errorf("reason %q is not one line", reason)
		}
	})
}
