package schema

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A JSON Schema whose subschemas lead back to themselves without
// descending into the value ({"$ref": "#"}, two $defs that refer to each
// other) would make the validator recurse until the stack overflows,
// which ends the process: no recover catches it. A registry's schema is
// untrusted, so such a schema is refused when it is compiled. Recursion
// through properties, items and the like is fine: each step goes one
// level into the value, and the value's depth is bounded.

// sameValueKeywords name the subschemas applied to the value their
// schema applies to (not to a part of it), besides $ref and $dynamicRef.
var sameValueKeywords = [...]string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies"}

// schemaGraph indexes the subschemas of a set of JSON Schema documents by
// the URLs a $ref may name them by.
type schemaGraph struct {
	// byURL maps an absolute URL, its fragment unescaped, to the nodes it
	// names: all of them when two documents claim one URL, so that every
	// reading of a $ref is an edge.
	byURL   map[string][]int
	dynamic map[string][]int // $dynamicAnchor name to nodes
	byObj   map[uintptr]int  // a schema object (its map) to node
	docs    map[string]int   // a document's URL to its root node
	nodes   []schemaNode
}

type schemaNode struct {
	obj  map[string]any
	base string // the URL its relative references resolve against
}

// newSchemaGraph indexes docs (absolute URL to schema text).
func newSchemaGraph(docs map[string]string) (*schemaGraph, error) {
	g := &schemaGraph{byURL: map[string][]int{}, dynamic: map[string][]int{}, byObj: map[uintptr]int{}, docs: map[string]int{}}
	for u, text := range docs {
		var doc any
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			return nil, err
		}
		if _, ok := doc.(map[string]any); ok {
			g.docs[u] = len(g.nodes)
		}
		g.add(doc, u, u, "")
	}
	return g, nil
}

// cycle returns an error when a subschema can reach itself through $ref,
// $dynamicRef and the keywords that apply a subschema to the same value.
// A $ref that names nothing in the graph adds no edge: resolving it fails
// on its own.
func (g *schemaGraph) cycle() error {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(g.nodes))
	var visit func(n int) bool
	visit = func(n int) bool {
		state[n] = onPath
		for _, m := range g.edges(n) {
			if state[m] == onPath || state[m] == unseen && visit(m) {
				return true
			}
		}
		state[n] = done
		return false
	}
	for n := range g.nodes {
		if state[n] == unseen && visit(n) {
			return errors.New("its references lead back to themselves without going into the value: validating would never end")
		}
	}
	return nil
}

// add indexes v, a value found at pointer ptr (from the resource whose
// URL is resource) in a document whose subschemas resolve against base,
// and what it holds.
func (g *schemaGraph) add(v any, base, resource, ptr string) {
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			g.add(e, base, resource, ptr+"/"+strconv.Itoa(i))
		}
	case map[string]any:
		n := len(g.nodes)
		if id, ok := v["$id"].(string); ok {
			if u := resolveURL(base, id); u != "" {
				if key, frag := fragmentKey(u); frag { // draft-07's "$id": "#name" names an anchor
					g.byURL[key] = append(g.byURL[key], n)
				} else {
					base, resource, ptr = u, u, ""
				}
			}
		}
		g.nodes = append(g.nodes, schemaNode{obj: v, base: base})
		g.byObj[reflect.ValueOf(v).Pointer()] = n
		g.name(resource+"#"+ptr, n)
		if ptr == "" {
			g.name(resource, n)
		}
		if a, ok := v["$anchor"].(string); ok {
			g.name(base+"#"+a, n)
		}
		if a, ok := v["$dynamicAnchor"].(string); ok {
			g.name(base+"#"+a, n)
			g.dynamic[a] = append(g.dynamic[a], n)
		}
		for k, e := range v {
			g.add(e, base, resource, ptr+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
		}
	}
}

func (g *schemaGraph) name(u string, n int) { g.byURL[u] = append(g.byURL[u], n) }

// edges are the nodes that node n applies to the value n applies to.
func (g *schemaGraph) edges(n int) []int {
	node := g.nodes[n]
	var out []int
	target := func(ref string) {
		if u := resolveURL(node.base, ref); u != "" {
			out = append(out, g.byURL[mustKey(u)]...)
		}
	}
	if ref, ok := node.obj["$ref"].(string); ok {
		target(ref)
	}
	if ref, ok := node.obj["$dynamicRef"].(string); ok {
		// The validator applies one of these: its lexical target or a
		// schema with the dynamic anchor. Each is counted once.
		from := len(out)
		target(ref)
		if _, frag, ok := strings.Cut(ref, "#"); ok {
			for _, m := range g.dynamic[frag] {
				if !slices.Contains(out[from:], m) {
					out = append(out, m)
				}
			}
		}
	}
	for _, k := range sameValueKeywords {
		switch v := node.obj[k].(type) {
		case map[string]any:
			if k == "dependentSchemas" || k == "dependencies" {
				for _, s := range v {
					out = append(out, g.nodeOf(s)...)
				}
			} else {
				out = append(out, g.nodeOf(v)...)
			}
		case []any:
			if k == "allOf" || k == "anyOf" || k == "oneOf" {
				for _, s := range v {
					out = append(out, g.nodeOf(s)...)
				}
			}
		}
	}
	return out
}

// nodeOf is the node of v when v is a schema object.
func (g *schemaGraph) nodeOf(v any) []int {
	if obj, ok := v.(map[string]any); ok {
		if n, ok := g.byObj[reflect.ValueOf(obj).Pointer()]; ok {
			return []int{n}
		}
	}
	return nil
}

// fragmentKey is u as byURL keys it, its fragment unescaped (as JSON
// pointers and anchors are indexed), and whether u has a fragment.
func fragmentKey(u string) (string, bool) {
	pu, err := url.Parse(u)
	if err != nil || pu.Fragment == "" {
		return strings.TrimSuffix(u, "#"), false
	}
	frag := pu.Fragment
	pu.Fragment, pu.RawFragment = "", ""
	return pu.String() + "#" + frag, true
}

func mustKey(u string) string {
	k, _ := fragmentKey(u)
	return k
}
