package filter

import (
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// projection is the top-level fields of a key or value that an expression
// reads, when it reads it only through them (value.amount, has(value.x),
// value["type"]): the parser then builds those fields and skips the rest,
// which is most of the work of a filter on a large value. whole means the
// expression uses the message itself (value == "x", value.size(), a
// comprehension over it), so all of it is built.
type projection struct {
	whole  bool
	fields []string
}

func (pr *projection) wants(k string) bool {
	for _, f := range pr.fields {
		if f == k {
			return true
		}
	}
	return false
}

// project finds how expr reads the variable name. A comprehension variable
// that shadows name only adds fields, which is harmless.
func project(expr celast.Expr, name string) projection {
	var uses, through int
	var pr projection
	add := func(f string) {
		through++
		if !pr.wants(f) {
			pr.fields = append(pr.fields, f)
		}
	}
	isName := func(e celast.Expr) bool { return e.Kind() == celast.IdentKind && e.AsIdent() == name }
	celast.PreOrderVisit(expr, celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.IdentKind:
			if e.AsIdent() == name {
				uses++
			}
		case celast.SelectKind:
			if s := e.AsSelect(); isName(s.Operand()) {
				add(s.FieldName())
			}
		case celast.CallKind:
			c := e.AsCall()
			if c.FunctionName() != operators.Index || len(c.Args()) != 2 || !isName(c.Args()[0]) {
				return
			}
			if k := c.Args()[1]; k.Kind() == celast.LiteralKind {
				if s, ok := k.AsLiteral().(types.String); ok {
					add(string(s))
				}
			}
		}
	}))
	pr.whole = uses != through
	return pr
}
