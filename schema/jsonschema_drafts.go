package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// google/jsonschema-go validates draft-07 and 2020-12 schemas. A schema
// of draft-04 or draft-06 is translated into draft-07, and one of
// 2019-09 into 2020-12, with the same meaning, and then compiled as those
// are; draft-07 and 2020-12 schemas are compiled as they are written.
//
// The translation walks only the places of a schema that hold schemas
// (properties' values, not their names), at most maxSchemaDepth levels
// deep, and changes:
//
//   - draft-04: id is $id; a boolean exclusiveMaximum or exclusiveMinimum
//     takes the number of maximum or minimum (true) or goes (false); the
//     keywords draft-04 does not have (const, contains, propertyNames,
//     if, then, else, $id and those of 2019-09) go, so that they are
//     ignored as draft-04 ignores them. A draft-04 schema written in the
//     form of a later draft (true or false where a schema goes, a numeric
//     exclusiveMinimum) is read as draft-06 reads it rather than refused.
//   - draft-06: if, then and else go (draft-06 ignores them), and so do
//     the keywords of 2019-09.
//   - 2019-09: an array of items is prefixItems, and additionalItems is
//     then items (it goes when items is one schema: it means nothing
//     then); $recursiveAnchor true at the root of a schema resource is a
//     $dynamicAnchor, and $recursiveRef "#" is a $dynamicRef to it (or to
//     the resource's root when that has no $recursiveAnchor: then it is a
//     $ref). dependencies, prefixItems, $dynamicRef and $dynamicAnchor are
//     not 2019-09 keywords and go.
//
// Each translated document says the draft it is compiled as in $schema.
// The validator reads a schema and its references in one draft (the
// first one's), so a set whose documents are of draft-04, -06 or -07 and
// of 2019-09 or 2020-12 at once is not checked; nor is a set with a
// document of another draft (draft-03, an unknown URL), or a 2019-09
// $recursiveRef other than "#", which has no exact 2020-12 form.

// draft is a JSON Schema draft, as a schema's $schema names it.
type draft int

const (
	draftUnknown draft = iota
	draft04
	draft06
	draft07
	draft2019
	draft2020
)

// maxSchemaDepth bounds how deeply subschemas may nest in a schema
// document: the walks over a schema are recursive.
const maxSchemaDepth = 1000

// recursiveAnchor names the $dynamicAnchor a 2019-09 $recursiveAnchor
// becomes. It is no valid $anchor name ("!" is not allowed in one), so it
// names no anchor of the user's.
const recursiveAnchor = "!recursive"

// errNotExact says a schema has no translation of the same meaning.
var errNotExact = errors.New("no exact translation")

// draftNamed is the draft a $schema URL names, with http or https and
// with or without the empty fragment; draftUnknown for any other.
func draftNamed(uri string) draft {
	switch strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(uri, "http://"), "https://"), "#") {
	case "json-schema.org/draft-04/schema":
		return draft04
	case "json-schema.org/draft-06/schema":
		return draft06
	case "json-schema.org/draft-07/schema":
		return draft07
	case "json-schema.org/draft/2019-09/schema":
		return draft2019
	case "json-schema.org/draft/2020-12/schema":
		return draft2020
	}
	return draftUnknown
}

// compiledAs is the draft the validator reads a schema of d as.
func (d draft) compiledAs() draft {
	switch d {
	case draft04, draft06, draft07:
		return draft07
	case draft2019, draft2020:
		return draft2020
	}
	return draftUnknown
}

// uri is the $schema of a document compiled as d, as the validator
// spells it.
func (d draft) uri() string {
	if d == draft07 {
		return "http://json-schema.org/draft-07/schema#"
	}
	return "https://json-schema.org/draft/2020-12/schema"
}

// laterKeywords are keywords of 2019-09 and 2020-12 that the validator
// applies in draft-07 schemas too; draft-04 and draft-06 do not have them.
var laterKeywords = []string{"$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef", "$vocabulary",
	"prefixItems", "unevaluatedItems", "unevaluatedProperties", "minContains", "maxContains", "dependentRequired", "dependentSchemas", "contentSchema"}

// validatorKeywords are the keywords google/jsonschema-go reads. It
// matches them to a schema's members as encoding/json does, ignoring
// case: it would read "Const" as const.
var validatorKeywords = []string{"$id", "$schema", "$ref", "$comment", "$defs", "definitions", "dependencies", "$anchor",
	"$dynamicAnchor", "$dynamicRef", "$vocabulary", "title", "description", "default", "deprecated", "readOnly", "writeOnly",
	"examples", "type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "pattern", "prefixItems", "items", "minItems", "maxItems", "additionalItems", "uniqueItems",
	"contains", "minContains", "maxContains", "unevaluatedItems", "minProperties", "maxProperties", "required",
	"dependentRequired", "properties", "patternProperties", "additionalProperties", "propertyNames",
	"unevaluatedProperties", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas",
	"contentEncoding", "contentMediaType", "contentSchema", "format"}

// dropped says whether a schema of draft d ignores member k, which the
// validator would not. Keywords are case-sensitive: in a translated
// schema, a member that is a keyword in other letters ("Const") is not
// one and goes too.
func dropped(d draft, k string) bool {
	if d == draft04 || d == draft06 || d == draft2019 {
		for _, kw := range validatorKeywords {
			if k != kw && strings.EqualFold(k, kw) {
				return true
			}
		}
	}
	switch d {
	case draft04:
		switch k {
		case "$id", "const", "contains", "propertyNames", "if", "then", "else":
			return true
		}
		return slices.Contains(laterKeywords, k)
	case draft06:
		switch k {
		case "if", "then", "else":
			return true
		}
		return slices.Contains(laterKeywords, k)
	case draft2019:
		switch k {
		case "dependencies", "prefixItems", "$dynamicRef", "$dynamicAnchor":
			return true
		}
	}
	return false
}

// The places of a schema object that hold schemas: one, an array of
// them, or an object of them by name.
var (
	oneSchemaKeywords   = []string{"additionalItems", "items", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaListKeywords  = []string{"allOf", "anyOf", "oneOf", "items", "prefixItems"}
	schemaByNameKeyword = []string{"properties", "patternProperties", "definitions", "$defs", "dependencies", "dependentSchemas"}
)

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// schemaDoc is one document of a schema's set, translated.
type schemaDoc struct {
	draft draft  // as it is written
	text  string // as it is compiled
	// places maps the JSON pointer of each schema object in text, as the
	// validator names it in a reason, to its pointer in the document as
	// written.
	places map[string]string
	refs   []string // the absolute URLs (without fragment) its $refs name
}

// readJSON is text as one JSON value, its numbers as json.Numbers.
func readJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// translateDoc translates v, a document at URL loc read as draft d
// (text as written), into the draft d is compiled as.
func translateDoc(text string, v any, d draft, loc string) (*schemaDoc, error) {
	w := draftWalk{from: d, doc: &schemaDoc{draft: d, places: map[string]string{}}}
	out, err := w.schema(v, "", "", loc, false, 0)
	if err != nil {
		return nil, err
	}
	slices.Sort(w.doc.refs)
	w.doc.refs = slices.Compact(w.doc.refs)
	obj, isObject := out.(map[string]any)
	switch {
	case !isObject:
		w.doc.text = text
	case d == draft07 || d == draft2020:
		// As written, so that the validator reads it as it always has;
		// a $schema last wins over one before it.
		t := strings.TrimSpace(text)
		sep := ","
		if len(obj) == 0 {
			sep = ""
		}
		w.doc.text = t[:len(t)-1] + sep + `"$schema":"` + d.uri() + `"}`
	default:
		obj["$schema"] = d.compiledAs().uri()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return nil, err
		}
		w.doc.text = strings.TrimSuffix(buf.String(), "\n")
	}
	return w.doc, nil
}

type draftWalk struct {
	from draft
	doc  *schemaDoc
}

// schema translates v, found at pointer src of the document as written
// and dst as translated, whose relative references resolve against base;
// recursive says whether the root of the schema resource v is in has
// $recursiveAnchor true (2019-09).
func (w *draftWalk) schema(v any, src, dst, base string, recursive bool, depth int) (any, error) {
	w.doc.places[dst] = src
	obj, ok := v.(map[string]any)
	if !ok {
		return v, nil // true, false, or not a schema (the validator says so)
	}
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("subschemas nested more than %d levels deep", maxSchemaDepth)
	}
	idKey := "$id"
	if w.from == draft04 {
		idKey = "id"
	}
	resource := depth == 0
	if id, ok := obj[idKey].(string); ok && !strings.HasPrefix(id, "#") {
		if u := resolveURL(base, id); u != "" {
			base, resource = u, true
		}
	}
	if resource {
		recursive = obj["$recursiveAnchor"] == true
	}
	out := make(map[string]any, len(obj))
	for k, e := range obj {
		if dropped(w.from, k) {
			continue
		}
		sk, dk := k, k // the keyword as written and as translated
		switch {
		case w.from == draft04 && k == "id":
			out["$id"] = e
			continue
		case w.from == draft2019 && k == "items":
			if _, isList := e.([]any); isList {
				dk = "prefixItems"
			}
		case w.from == draft2019 && k == "additionalItems":
			if _, isList := obj["items"].([]any); !isList {
				continue
			}
			dk = "items"
		case w.from == draft2019 && k == "$recursiveAnchor":
			if e == true && resource {
				out["$dynamicAnchor"] = recursiveAnchor
			}
			continue
		case w.from == draft2019 && k == "$recursiveRef":
			if e != "#" {
				return nil, fmt.Errorf("at %s: $recursiveRef %v: %w", src, e, errNotExact)
			}
			if recursive {
				out["$dynamicRef"] = "#" + recursiveAnchor
			} else {
				out["$dynamicRef"] = "#"
			}
			continue
		case k == "$ref":
			if ref, ok := e.(string); ok {
				if u := resolveURL(base, ref); u != "" {
					w.doc.refs = append(w.doc.refs, strings.SplitN(u, "#", 2)[0])
				}
			}
		}
		t, err := w.keyword(sk, dk, e, src, dst, base, recursive, depth)
		if err != nil {
			return nil, err
		}
		out[dk] = t
	}
	if w.from == draft04 {
		for _, b := range [...][2]string{{"exclusiveMaximum", "maximum"}, {"exclusiveMinimum", "minimum"}} {
			switch out[b[0]] {
			case true:
				if bound, ok := out[b[1]]; ok {
					out[b[0]] = bound
					delete(out, b[1])
					continue
				}
				delete(out, b[0]) // without its bound it bounds nothing
			case false:
				delete(out, b[0])
			}
		}
	}
	return out, nil
}

// keyword translates e, the value of keyword sk (dk once translated) of
// the schema object at src (dst once translated).
func (w *draftWalk) keyword(sk, dk string, e any, src, dst, base string, recursive bool, depth int) (any, error) {
	at := func(p, k string) string { return p + "/" + pointerEscaper.Replace(k) }
	if _, isList := e.([]any); !isList && slices.Contains(oneSchemaKeywords, sk) {
		return w.schema(e, at(src, sk), at(dst, dk), base, recursive, depth+1)
	}
	switch e := e.(type) {
	case map[string]any:
		if slices.Contains(schemaByNameKeyword, sk) {
			out := make(map[string]any, len(e))
			for name, s := range e {
				t, err := w.schema(s, at(at(src, sk), name), at(at(dst, dk), name), base, recursive, depth+1)
				if err != nil {
					return nil, err
				}
				out[name] = t
			}
			return out, nil
		}
	case []any:
		if slices.Contains(schemaListKeywords, sk) {
			out := make([]any, len(e))
			for i, s := range e {
				t, err := w.schema(s, at(at(src, sk), strconv.Itoa(i)), at(at(dst, dk), strconv.Itoa(i)), base, recursive, depth+1)
				if err != nil {
					return nil, err
				}
				out[i] = t
			}
			return out, nil
		}
	}
	return e, nil
}

// schemaSet is a schema and its references, each translated into the
// draft it is compiled as.
type schemaSet struct {
	docs   map[string]*schemaDoc // by URL
	places map[string]string     // translated pointer to the one as written, where they differ
}

// errUnchecked says a schema set is not checked (see the top of this file).
var errUnchecked = errors.New("not checked")

// translateSet translates the schema at loc (rootText, read as root) and
// its references (refTexts by URL). The schema without $schema (or with
// an empty one) is read as 2020-12. A reference without $schema is read
// in the draft of the schema that references it: the first document,
// from the schema on, whose $ref names it (the schema's draft when none
// does). A reference whose text is not JSON is left as it is: it fails
// when it is loaded. errUnchecked when the set cannot be checked.
func translateSet(loc, rootText string, root any, refTexts map[string]string) (*schemaSet, error) {
	values := map[string]any{loc: root}
	written := map[string]draft{}
	for u, t := range refTexts {
		if u == loc {
			continue // the validator finds the schema itself there
		}
		v, err := readJSON(t)
		if err != nil {
			continue
		}
		values[u] = v
	}
	texts := maps.Clone(refTexts)
	texts[loc] = rootText
	for u, v := range values {
		if obj, ok := v.(map[string]any); ok {
			if s, ok := obj["$schema"]; ok {
				name, isString := s.(string)
				if !isString && u == loc {
					return nil, errors.New("$schema is not a string")
				}
				if isString && name == "" {
					continue // as if there were none
				}
				written[u] = draftNamed(name)
				if written[u] == draftUnknown && u != loc {
					return nil, errUnchecked
				}
			}
		}
	}
	rootDraft, ok := written[loc]
	if !ok {
		rootDraft = draft2020
	}
	if rootDraft == draftUnknown {
		return nil, errUnchecked
	}
	set := &schemaSet{docs: map[string]*schemaDoc{}}
	translate := func(u string, d draft) error {
		if d.compiledAs() != rootDraft.compiledAs() {
			return errUnchecked
		}
		doc, err := translateDoc(texts[u], values[u], d, u)
		if err != nil {
			if errors.Is(err, errNotExact) {
				return errUnchecked
			}
			if u == loc {
				return err
			}
			return fmt.Errorf("reference %s: %w", u, err)
		}
		set.docs[u] = doc
		return nil
	}
	queue := []string{loc}
	if err := translate(loc, rootDraft); err != nil {
		return nil, err
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, r := range set.docs[u].refs {
			if _, done := set.docs[r]; done {
				continue
			}
			if _, known := values[r]; !known {
				continue
			}
			d, ok := written[r]
			if !ok {
				d = set.docs[u].draft
			}
			if err := translate(r, d); err != nil {
				return nil, err
			}
			queue = append(queue, r)
		}
	}
	for u := range values {
		if _, done := set.docs[u]; done {
			continue
		}
		d, ok := written[u]
		if !ok {
			d = rootDraft
		}
		if err := translate(u, d); err != nil {
			return nil, err
		}
	}
	// A reason names a schema object by its translated pointer, and not
	// the document it is in: a pointer is read back only when every
	// document that has a schema object there read it the same way.
	read := map[string]string{}
	ambiguous := map[string]bool{}
	for _, doc := range set.docs {
		for dst, src := range doc.places {
			if prev, ok := read[dst]; ok && prev != src {
				ambiguous[dst] = true
			}
			read[dst] = src
		}
	}
	set.places = map[string]string{}
	for dst, src := range read {
		if dst != src && !ambiguous[dst] {
			set.places[dst] = src
		}
	}
	return set, nil
}
