package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// JSON Schema values are checked with google/jsonschema-go, which does its
// work when a schema is compiled and none at start: every kbatch process
// (each Tab of a shell completion) initialises every linked package, and
// a validator that compiles its meta-schemas in an init costs each of
// them milliseconds and megabytes. It reads draft-07 and 2020-12 schemas;
// draft-04, draft-06 and 2019-09 ones are translated into those first
// (jsonschema_drafts.go), and a schema naming another draft shows its
// values unchecked.

// jsonChecker is a compiled JSON Schema. A nil *jsonChecker checks
// nothing: the schema names a draft that kbatch does not check.
type jsonChecker struct {
	resolved *jsonschema.Resolved
	graph    *schemaGraph // the schema and its references, as the validator reads them
	root     int          // the schema's node in graph; -1 for true, false and {}
	// places maps a schema object's pointer in the translated schema to
	// the one in the schema as written, where they differ.
	places map[string]string
}

// checkedDraft says whether kbatch checks values against a schema whose
// $schema is draft: draft-04, draft-06, draft-07, 2019-09 and 2020-12
// (http or https, with or without the empty fragment), and a schema
// without $schema, read as 2020-12.
func checkedDraft(draft string) bool {
	return draft == "" || draftNamed(draft) != draftUnknown
}

// compileJSONSchema compiles a registry JSON Schema (text, registered as
// id) with its references. A $ref resolves, relative to the schema's
// location or to its $id when it has one, to one of refs by name, and to
// nothing else: a schema from the registry must not make kbatch read
// files or URLs.
func compileJSONSchema(id int, text string, refs []namedSchema) (*jsonChecker, error) {
	written, err := readJSON(text)
	if err != nil {
		return nil, fmt.Errorf("JSON Schema: %w", err)
	}
	loc := "https://schema-registry.invalid/schemas/ids/" + strconv.Itoa(id)
	bases := []string{loc}
	if obj, ok := written.(map[string]any); ok {
		idKey := "$id"
		if s, _ := obj["$schema"].(string); draftNamed(s) == draft04 {
			idKey = "id"
		}
		if rootID, ok := obj[idKey].(string); ok && rootID != "" {
			bases = append(bases, resolveURL(loc, rootID))
		}
	} else if _, ok := written.(bool); !ok {
		return nil, errors.New("JSON Schema: neither an object nor true or false")
	}
	byURL := map[string]string{}
	for _, r := range refs {
		for _, b := range bases {
			if u := resolveURL(b, r.Name); u != "" {
				if _, ok := byURL[u]; !ok {
					byURL[u] = r.Schema
				}
			}
		}
	}
	set, err := translateSet(loc, text, written, byURL)
	if errors.Is(err, errUnchecked) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("JSON Schema: %w", err)
	}
	for u, doc := range set.docs {
		byURL[u] = doc.text
	}
	root, err := parseJSONSchema(set.docs[loc].text)
	if err != nil {
		return nil, fmt.Errorf("JSON Schema: %w", err)
	}
	// The cycle check reads the schemas as the validator does: through
	// its own parse (encoding/json matches "$rEf" to $ref), written back.
	docs := map[string]string{}
	for u, t := range byURL {
		if u == loc {
			continue
		}
		s, err := parseJSONSchema(t)
		if err != nil {
			continue // a reference that does not parse fails when it is loaded
		}
		if docs[u], err = canonicalJSONSchema(s); err != nil {
			return nil, fmt.Errorf("JSON Schema reference %s: %w", u, err)
		}
	}
	if docs[loc], err = canonicalJSONSchema(root); err != nil {
		return nil, fmt.Errorf("JSON Schema: %w", err)
	}
	g, err := newSchemaGraph(docs)
	if err != nil {
		return nil, fmt.Errorf("JSON Schema: %w", err)
	}
	if err := g.cycle(); err != nil {
		return nil, fmt.Errorf("JSON Schema: %w", err)
	}
	load := func(u *url.URL) (*jsonschema.Schema, error) {
		text, ok := byURL[u.String()]
		if !ok {
			return nil, fmt.Errorf("%s: not among the schema's references", u)
		}
		s, err := parseJSONSchema(text)
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", u, err)
		}
		return s, nil
	}
	resolved, err := root.Resolve(&jsonschema.ResolveOptions{BaseURI: loc, Loader: load})
	if err != nil {
		return nil, fmt.Errorf("JSON Schema: %w", err)
	}
	c := &jsonChecker{resolved: resolved, graph: g, root: -1, places: set.places}
	if n, ok := g.docs[loc]; ok {
		c.root = n
	}
	return c, nil
}

// canonicalJSONSchema is s as the validator reads it, as JSON text.
func canonicalJSONSchema(s *jsonschema.Schema) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

func parseJSONSchema(text string) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// check says why payload does not match the schema: "" when it does,
// when c checks nothing, or when checking it would cost more than
// checkBounded allows; an error when payload is not one JSON value.
// Integers are compared exactly up to 64 bits, other numbers as float64.
func (c *jsonChecker) check(payload []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var inst any
	if err := dec.Decode(&inst); err != nil {
		return "", fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("not JSON: more than one value")
	}
	if c == nil || !c.checkBounded(inst) {
		return "", nil
	}
	if err := c.resolved.Validate(exactNumbers(inst)); err != nil {
		return "does not match its JSON Schema: " + oneLine(firstReason(err.Error(), c.places), 200), nil
	}
	return "", nil
}

// exactNumbers replaces the json.Numbers in v (as a json.Decoder with
// UseNumber gives them) by int64 where they are one, else float64: the
// validator types a value by its Go kind, and an int64 keeps the integers
// beyond float64's 53 bits.
func exactNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = exactNumbers(e)
		}
	}
	return v
}

// firstReason is a validation error's innermost reason, after where in
// the schema it was found: "validating root: validating
// /properties/age: minimum: ..." is "at /properties/age: minimum: ...".
// places maps where the validator found it, in a translated schema, to
// where that is in the schema as written.
func firstReason(msg string, places map[string]string) string {
	const step = "validating "
	at := ""
	for strings.HasPrefix(msg, step) {
		where, rest, ok := strings.Cut(msg[len(step):], ": ")
		if !ok {
			break
		}
		at, msg = where, rest
	}
	msg = plainBound(msg)
	if p, ok := places[at]; ok {
		at = p
	}
	if at == "" || at == "root" {
		return msg
	}
	return "at " + at + ": " + msg
}

// plainBound writes the two numbers of a numeric keyword's reason as JSON
// writes them: the validator gives the value as a fraction ("-1/1") and
// the bound with six decimals ("0.000000"). Other reasons are returned
// as they are.
func plainBound(msg string) string {
	kw, rest, ok := strings.Cut(msg, ": ")
	switch kw {
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
	default:
		return msg
	}
	value, middle, ok2 := strings.Cut(rest, " ")
	i := strings.LastIndexByte(middle, ' ')
	if !ok || !ok2 || i < 0 {
		return msg
	}
	r, okR := new(big.Rat).SetString(value)
	bound, err := strconv.ParseFloat(middle[i+1:], 64)
	if !okR || err != nil {
		return msg
	}
	v := r.RatString()
	if !r.IsInt() {
		v = strings.TrimRight(r.FloatString(20), "0")
	}
	return kw + ": " + v + " " + middle[:i+1] + strconv.FormatFloat(bound, 'f', -1, 64)
}
