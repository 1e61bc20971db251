package schema

// The validator applies subschemas to parts of a value recursively and
// tries every branch of anyOf and oneOf, with no memory of what it has
// tried: a schema such as {"anyOf": [{"items": {"$ref": "#"}}, {"items":
// {"$ref": "#"}}]} doubles its work at each level of a nested array. Each
// step that fails also wraps the errors of the steps below it (anyOf
// joins all of its branches'), so the text of the errors grows as the sum,
// over the last steps of each path, of the square of their depth: at 14
// levels of that schema, 0.9 s and 435 MiB for a 30-byte value. A record's value is untrusted; it is
// checked only when that cost is bounded, and shown unchecked otherwise.

const (
	// maxCheckedDepth is the deepest nesting of arrays and objects a
	// value may have to be checked against its schema.
	maxCheckedDepth = 64
	// maxCheckCost bounds the sum, over the validator's last steps (the
	// applications of a subschema to a part of the value that apply no
	// other, counted from above), of the square of each one's depth: about
	// 2 MiB of error text and 15 ms at most. An array of 1000 objects of 10 fields
	// costs about 40,000; 64 levels of arrays, 16,000.
	maxCheckCost = 300_000
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

// checkBounded says whether checking inst against c stays within
// maxCheckedDepth and maxCheckCost.
func (c *jsonChecker) checkBounded(inst any) bool {
	var parts []valuePart
	root, depth := flatten(inst, &parts)
	if depth > maxCheckedDepth {
		return false
	}
	if c.root < 0 {
		return true // the schema applies no subschema
	}
	parts = append(parts, valuePart{}) // a member's name, for propertyNames
	w := workCount{g: c.graph, parts: parts, name: len(parts) - 1, memo: map[[2]int]work{}, limit: maxCheckCost}
	return w.work(c.root, root).depthSq <= maxCheckCost
}

// work sums the last steps below one application of a node to a part
// (itself when it applies no other), by their depth below it.
type work struct {
	steps, depth, depthSq int
}

// under is w one level deeper: each step's depth d becomes d+1, and
// (d+1)² = d² + 2d + 1.
func (w work) under() work {
	return work{steps: w.steps, depth: w.depth + w.steps, depthSq: w.depthSq + 2*w.depth + w.steps}
}

func (w work) plus(o work) work {
	return work{steps: w.steps + o.steps, depth: w.depth + o.depth, depthSq: w.depthSq + o.depthSq}
}

// workCount sums, from above, the last steps of validating parts of a
// value against nodes of a schema graph: an application of a node to a
// part is one, or it is those of the nodes it applies to the part and to
// its kids. A sum whose depthSq passes limit stops counting.
type workCount struct {
	g     *schemaGraph
	parts []valuePart
	name  int // the part propertyNames applies to: a string
	memo  map[[2]int]work
	limit int
}

func (w *workCount) work(n, part int) work {
	key := [2]int{n, part}
	if s, ok := w.memo[key]; ok {
		return s
	}
	tooMuch := work{steps: w.limit + 1, depth: w.limit + 1, depthSq: w.limit + 1}
	w.memo[key] = tooMuch // a cycle counts as too much (compile refuses them)
	var total work
	add := func(m int, kid int) bool {
		total = total.plus(w.work(m, kid).under())
		return total.depthSq <= w.limit
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
	if total.steps == 0 {
		total = work{steps: 1} // a last step, at depth 0
	}
	if !ok {
		total = tooMuch
	}
	w.memo[key] = total
	return total
}
