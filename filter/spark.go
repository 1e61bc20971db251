package filter

import (
	"fmt"
	"strconv"
	"strings"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// sparkColumns are the variables that mean the same in a Spark Kafka
// source's columns. key and value are not among them: the expression
// sees them decoded (Avro, Protobuf, JSON), Spark sees their bytes.
var sparkColumns = map[string]string{"topic": "topic", "partition": "`partition`", "offset": "`offset`", "timestamp": "`timestamp`"}

var sparkOperators = map[string]string{
	operators.Equals: "=", operators.NotEquals: "<>", operators.Less: "<", operators.LessEquals: "<=",
	operators.Greater: ">", operators.GreaterEquals: ">=", operators.LogicalAnd: "AND", operators.LogicalOr: "OR",
	operators.Add: "+", operators.Subtract: "-",
}

// SparkSQL is the expression as a Spark SQL condition over the columns of
// Spark's Kafka source, when it has one that means the same: comparisons,
// && || !, in [...], + and - over topic, partition, offset and timestamp,
// with literals and timestamp("RFC 3339"). For anything else (key, value,
// headers, size, other functions) the error says what Spark cannot
// evaluate.
func (p *Program) SparkSQL() (string, error) {
	return sparkSQL(p.root)
}

func sparkSQL(e celast.Expr) (string, error) {
	switch e.Kind() {
	case celast.IdentKind:
		name := e.AsIdent()
		if col, ok := sparkColumns[name]; ok {
			return col, nil
		}
		if name == "key" || name == "value" {
			return "", fmt.Errorf("%s is decoded by kbatch (Avro, Protobuf, JSON); the job reads its raw bytes", name)
		}
		return "", fmt.Errorf("%s is not one of the columns of Spark's Kafka source", name)
	case celast.LiteralKind:
		return sparkLiteral(e)
	case celast.CallKind:
		return sparkCall(e.AsCall())
	case celast.SelectKind:
		if _, err := sparkSQL(e.AsSelect().Operand()); err != nil {
			return "", err
		}
		return "", fmt.Errorf("Spark SQL has no form of .%s", e.AsSelect().FieldName())
	}
	return "", fmt.Errorf("Spark SQL has no form of this expression")
}

func sparkCall(c celast.CallExpr) (string, error) {
	args := c.Args()
	fn := c.FunctionName()
	if fn == "timestamp" && len(args) == 1 && args[0].Kind() == celast.LiteralKind && !c.IsMemberFunction() {
		if s, ok := args[0].AsLiteral().(types.String); ok {
			return "CAST(" + sparkString(string(s)) + " AS TIMESTAMP)", nil
		}
	}
	if fn == operators.LogicalNot && len(args) == 1 {
		s, err := sparkSQL(args[0])
		return "(NOT " + s + ")", err
	}
	if fn == operators.In && len(args) == 2 && args[1].Kind() == celast.ListKind {
		l, err := sparkSQL(args[0])
		if err != nil {
			return "", err
		}
		var in []string
		for _, el := range args[1].AsList().Elements() {
			s, err := sparkSQL(el)
			if err != nil {
				return "", err
			}
			in = append(in, s)
		}
		return "(" + l + " IN (" + strings.Join(in, ", ") + "))", nil
	}
	op, ok := sparkOperators[fn]
	if !ok || len(args) != 2 || c.IsMemberFunction() {
		return "", fmt.Errorf("Spark SQL has no form of %s", strings.Trim(fn, "_@"))
	}
	l, err := sparkSQL(args[0])
	if err != nil {
		return "", err
	}
	r, err := sparkSQL(args[1])
	if err != nil {
		return "", err
	}
	return "(" + l + " " + op + " " + r + ")", nil
}

func sparkLiteral(e celast.Expr) (string, error) {
	switch v := e.AsLiteral().(type) {
	case types.Int:
		return strconv.FormatInt(int64(v), 10), nil
	case types.Uint:
		return strconv.FormatUint(uint64(v), 10), nil
	case types.Double:
		return strconv.FormatFloat(float64(v), 'g', -1, 64) + "D", nil
	case types.String:
		return sparkString(string(v)), nil
	case types.Bool:
		return strings.ToUpper(strconv.FormatBool(bool(v))), nil
	}
	return "", fmt.Errorf("Spark SQL has no form of the literal %v", e.AsLiteral())
}

// sparkString quotes s as a Spark SQL string literal (backslash escapes,
// Spark's default).
func sparkString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`).Replace(s) + "'"
}
