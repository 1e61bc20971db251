package schema

// The validator applies subschemas to parts of a value recursively and
// tries every branch of anyOf and oneOf, with no memory of what it has
// tried: a schema such as {"anyOf": [{"items": {"$ref": "#"}}, {"items":
// {"$ref": "#"}}]} doubles its work at each level of a nested array, and
// each level also wraps the error below it, so a deep value costs the
// square of its depth. A record's value is untrusted; it is checked only
// when the work is bounded, and shown unchecked otherwise.

const (
	// maxCheckedDepth is the deepest nesting of arrays and objects a
	// value may have to be checked against its schema.
	maxCheckedDepth = 64
	// maxCheckSteps is the most applications of a subschema to a part of
	// the value (the validator's steps, counted from above) a check may
	// take: about a tenth of a second.
	maxCheckSteps = 200_000
)

// valuePart is a part of a decoded JSON value (the value, its elements
// and members, theirs...), each at an index of a []valuePart.
type valuePart struct {
	object bool
	array  bool
	keys   []string // an object's member names, in the order of kids
	kids   []int    // the parts of an array's elements or an object's members
}

// flatten appends v and its parts to parts and returns v's index and
// nesting depth (0 for a scalar).
func flatten(v any, parts *[]valuePart) (int, int) {
	i := len(*parts)
	*parts = append(*parts, valuePart{})
	depth := 0
	switch v := v.(type) {
	case []any:
		kids := make([]int, len(v))
		for j, e := range v {
			k, d := flatten(e, parts)
			kids[j], depth = k, max(depth, d+1)
		}
		(*parts)[i] = valuePart{array: true, kids: kids}
		depth = max(depth, 1)
	case map[string]any:
		p := valuePart{object: true}
		for name, e := range v {
			k, d := flatten(e, parts)
			p.keys, p.kids, depth = append(p.keys, name), append(p.kids, k), max(depth, d+1)
		}
		(*parts)[i] = p
		depth = max(depth, 1)
	}
	return i, depth
}

// checkBounded says whether checking inst against c takes at most
// maxCheckedDepth levels and maxCheckSteps steps.
func (c *jsonChecker) checkBounded(inst any) bool {
	var parts []valuePart
	root, depth := flatten(inst, &parts)
	if depth > maxCheckedDepth {
		return false
	}
	parts = append(parts, valuePart{}) // a member's name, for propertyNames
	w := workCount{g: c.graph, parts: parts, name: len(parts) - 1, memo: map[[2]int]int{}, limit: maxCheckSteps}
	return w.steps(c.root, root) <= maxCheckSteps
}

// workCount counts, from above, the steps of validating parts of a value
// against nodes of a schema graph: one per application of a node to a
// part, plus those of the nodes it applies to the part and to its kids.
// A count above limit stops counting.
type workCount struct {
	g     *schemaGraph
	parts []valuePart
	name  int // the part propertyNames applies to: a string
	memo  map[[2]int]int
	limit int
}

func (w *workCount) steps(n, part int) int {
	key := [2]int{n, part}
	if s, ok := w.memo[key]; ok {
		return s
	}
	w.memo[key] = w.limit + 1 // a cycle counts as too much (compile refuses them)
	total := 1
	add := func(m int, kid int) bool {
		total += w.steps(m, kid)
		return total <= w.limit
	}
	obj := w.g.nodes[n].obj
	p := w.parts[part]
	ok := true
	for _, m := range w.g.edges(n) {
		if ok = add(m, part); !ok {
			break
		}
	}
	if ok && p.object {
		props, _ := obj["properties"].(map[string]any)
		for j, name := range p.keys {
			if s, isSchema := props[name]; isSchema {
				for _, m := range w.g.nodeOf(s) {
					ok = ok && add(m, p.kids[j])
				}
			}
			for _, k := range []string{"additionalProperties", "unevaluatedProperties"} {
				for _, m := range w.g.nodeOf(obj[k]) {
					ok = ok && add(m, p.kids[j])
				}
			}
			for _, m := range w.g.nodeOf(obj["propertyNames"]) {
				ok = ok && add(m, w.name)
			}
			pattern, _ := obj["patternProperties"].(map[string]any)
			for _, s := range pattern {
				for _, m := range w.g.nodeOf(s) {
					ok = ok && add(m, p.kids[j])
				}
			}
		}
	}
	if ok && p.array {
		prefix, _ := obj["prefixItems"].([]any)
		if items, isArray := obj["items"].([]any); isArray { // draft-07's positional items
			prefix = items
		}
		for j, kid := range p.kids {
			if j < len(prefix) {
				for _, m := range w.g.nodeOf(prefix[j]) {
					ok = ok && add(m, kid)
				}
			}
			for _, k := range []string{"items", "additionalItems", "unevaluatedItems", "contains"} {
				for _, m := range w.g.nodeOf(obj[k]) {
					ok = ok && add(m, kid)
				}
			}
		}
	}
	if !ok {
		total = w.limit + 1
	}
	w.memo[key] = total
	return total
}
