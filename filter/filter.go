package filter

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

// Program is one compiled expression. It is safe for concurrent use.
type Program struct {
	expr string
	prg  cel.Program
	// keyProj and valueProj say which fields of the key and value the
	// expression reads (project).
	keyProj, valueProj projection
	// root is the checked expression, for SparkSQL.
	root celast.Expr
}

// CompileError is an expression that does not compile or can never be a
// bool. Its Error is one line that names the column (1-based) and what
// was expected.
type CompileError struct {
	Line, Column int // 1-based; 0 when the problem has no place
	Message      string
}

func (e *CompileError) Error() string {
	switch {
	case e.Column > 0 && e.Line > 1:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	case e.Column > 0:
		return fmt.Sprintf("column %d: %s", e.Column, e.Message)
	}
	return e.Message
}

// env declares the variables of a record; built once per Compile.
func env() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("key", cel.DynType),
		cel.Variable("value", cel.DynType),
		cel.Variable("headers", cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable("headers_list", cel.ListType(cel.MapType(cel.StringType, cel.StringType))),
		cel.Variable("topic", cel.StringType),
		cel.Variable("partition", cel.IntType),
		cel.Variable("offset", cel.IntType),
		cel.Variable("timestamp", cel.TimestampType),
		cel.Variable("size", cel.IntType),
		// 95 > 90.0 is true: JSON numbers come as int or double.
		cel.CrossTypeNumericComparisons(true),
	)
}

// Compile parses and checks expr. It refuses an expression that does not
// parse, names an unknown variable or function, or whose result can never
// be a bool (a string, a number...): a *CompileError. An expression whose
// type is only known per record (value.flag) is accepted, and a record
// for which it is not a bool does not match.
func Compile(expr string) (*Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, &CompileError{Message: "the expression is empty: want a condition such as value.amount > 90.0"}
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, compileError(iss.Errors())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, &CompileError{Message: fmt.Sprintf("the expression is %s %s, never a bool: want a condition, e.g. a comparison such as value.amount > 90.0", article(t.String()), t)}
	}
	prg, err := e.Program(ast, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, &CompileError{Message: oneLine(err.Error())}
	}
	root := ast.NativeRep().Expr()
	return &Program{expr: expr, prg: prg, root: root, keyProj: project(root, "key"), valueProj: project(root, "value")}, nil
}

func compileError(errs []*cel.Error) *CompileError {
	if len(errs) == 0 {
		return &CompileError{Message: "the expression does not compile"}
	}
	first := errs[0]
	ce := &CompileError{Message: plainSyntax(oneLine(first.Message))}
	if loc := first.Location; loc != nil && loc.Line() > 0 {
		ce.Line, ce.Column = loc.Line(), loc.Column()+1
	}
	return ce
}

// plainSyntax says the parser's "expecting {'[', '{', ... IDENTIFIER}"
// as words: what may come at that column.
func plainSyntax(msg string) string {
	msg = strings.Replace(msg, "mismatched input '<EOF>'", "the expression ends too early", 1)
	if i := strings.Index(msg, "expecting {"); i >= 0 && strings.Contains(msg[i:], "IDENTIFIER") {
		msg = msg[:i] + "expecting a value: a name (value, key, topic...), a number, a string, true, false, null, or ( [ { ! -"
	}
	return msg
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// oneLine is the first line of a CEL message. It stays raw (it can quote
// the expression, which a user typed or pasted): whoever prints it
// escapes it, once.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// String is the expression as given.
func (p *Program) String() string { return p.expr }

// Decoder gives the decoded JSON of a record's key (isKey) or value when
// a schema applies to it; ok is false when none does (or it failed), and
// the bytes are then read as JSON, text or bytes.
type Decoder interface {
	Decoded(r *record.Record, isKey bool) (json string, ok bool)
}

// valueDecoder is a Decoder that can also give a decoded key or value as
// values (schema.Decoder.DecodeValue): no text to write and parse again.
// With only set (nil: all), a record comes as fields, only those named, in
// room.Fields; json is set instead when the format has no such path.
type valueDecoder interface {
	DecodedValue(r *record.Record, isKey bool, only []string, room *schema.Room) (v any, fields []schema.Field, json string, ok bool)
}

// Match evaluates the expression on r, decoding its key and value with
// dec (nil: no schemas) only when the expression reads them. An error
// means the record does not match: a field it names is missing, a value
// has another type, or the result is not a bool.
func (p *Program) Match(r *record.Record, dec Decoder) (bool, error) {
	a := activations.Get().(*activation)
	ok, err := a.match(p, r, dec)
	activations.Put(a)
	return ok, err
}

// match is Match with a, which a goroutine may keep for many records.
func (a *activation) match(p *Program, r *record.Record, dec Decoder) (bool, error) {
	a.p, a.r, a.dec = p, r, dec
	var in any = a
	if a.frame != nil {
		in = a.frame
	}
	out, _, err := p.prg.Eval(in)
	a.reset()
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the expression gave a %s, not a bool", out.Type().(ref.Type).TypeName())
	}
	return bool(b), nil
}

// activations saves an allocation per record, and keeps each activation's
// rooms for projected fields from one record to the next.
var activations = sync.Pool{New: newActivation}

// activation resolves a record's variables as the program asks for them,
// so a record's key and value are decoded and parsed only when the
// expression reads them, and once.
type activation struct {
	p          *Program
	r          *record.Record
	dec        Decoder
	key, value any
	done       uint8 // bits: keyDone, valueDone
	// keyRoom and valueRoom hold a projected key and value (project) and
	// what decodes them. A record's projection is a pointer to its
	// room's fields, which costs no allocation; they are emptied after
	// each record (reset), so no field of one record is seen by the next.
	keyRoom, valueRoom schema.Room
	// frame is CEL's frame over this activation, made once: the program
	// has no default variables or context for Eval to add to a frame of
	// its own.
	frame *interpreter.ExecutionFrame
}

// reset forgets the record: nothing of it is kept (its values could hold
// its bytes) and nothing is seen by the next, but the rooms keep their
// capacity.
func (a *activation) reset() {
	// To their capacity: a decode that failed half-way left fields past
	// the length.
	clear(a.keyRoom.Fields[:cap(a.keyRoom.Fields)])
	clear(a.valueRoom.Fields[:cap(a.valueRoom.Fields)])
	a.keyRoom.Fields, a.valueRoom.Fields = a.keyRoom.Fields[:0], a.valueRoom.Fields[:0]
	a.p, a.r, a.dec, a.key, a.value, a.done = nil, nil, nil, nil, nil, 0
}

// newActivation is an activation whose rooms make CEL's values.
func newActivation() any {
	a := new(activation)
	a.keyRoom.Scalars, a.valueRoom.Scalars = celScalars{}, celScalars{}
	if f, err := interpreter.NewExecutionFrame(a); err == nil {
		a.frame = f
	}
	return a
}

// celScalars makes decoded strings, numbers and booleans CEL's values:
// CEL takes them as they are, where it would convert a Go value on every
// read (an allocation per field and record).
type celScalars struct{}

func (celScalars) String(s string) any  { return types.String(s) }
func (celScalars) Long(n int64) any     { return types.Int(n) }
func (celScalars) Double(f float64) any { return types.Double(f) }
func (celScalars) Bool(b bool) any      { return types.Bool(b) }

const (
	keyDone = 1 << iota
	valueDone
)

func (a *activation) Parent() interpreter.Activation { return nil }

func (a *activation) ResolveName(name string) (any, bool) {
	r := a.r
	switch name {
	case "value":
		if a.done&valueDone == 0 {
			a.value, a.done = a.message(false, r.Value, &a.p.valueProj, &a.valueRoom), a.done|valueDone
		}
		return a.value, true
	case "key":
		if a.done&keyDone == 0 {
			a.key, a.done = a.message(true, r.Key, &a.p.keyProj, &a.keyRoom), a.done|keyDone
		}
		return a.key, true
	case "topic":
		return r.Topic, true
	case "partition":
		return int64(r.Partition), true
	case "offset":
		return r.Offset, true
	case "timestamp":
		return types.Timestamp{Time: r.Timestamp}, true
	case "size":
		return r.Bytes(), true
	case "headers":
		m := make(map[string]string, len(r.Headers))
		for _, h := range r.Headers {
			m[string(h.Key)] = string(h.Value)
		}
		return m, true
	case "headers_list":
		l := make([]any, len(r.Headers))
		for i, h := range r.Headers {
			l[i] = map[string]any{"key": string(h.Key), "value": string(h.Value)}
		}
		return l, true
	}
	return nil, false
}

// message is a key or value as the expression sees it: the decoded JSON
// where a schema applies, else the bytes parsed as JSON, else a string
// where they are UTF-8, else bytes; nil (null) when absent. A projected
// object is room.
func (a *activation) message(isKey bool, b []byte, pr *projection, room *schema.Room) any {
	if b == nil {
		return nil
	}
	if vd, ok := a.dec.(valueDecoder); ok {
		var only []string // nil: the whole message
		if !pr.whole {
			only = pr.fields
			if only == nil {
				only = []string{}
			}
		}
		v, f, text, ok := vd.DecodedValue(a.r, isKey, only, room)
		switch {
		case ok && f != nil:
			room.Fields = f
			return (*fields)(&room.Fields)
		case ok && text == "":
			return v
		case ok:
			if v, err := parseProjected(text, pr, (*fields)(&room.Fields)); err == nil {
				return v
			}
		}
	} else if a.dec != nil {
		if text, ok := a.dec.Decoded(a.r, isKey); ok {
			if v, err := parseProjected(text, pr, (*fields)(&room.Fields)); err == nil {
				return v
			}
		}
	}
	// The parsed strings may point into b: they live only while this
	// record is evaluated, and a record's bytes never change.
	if v, err := parseProjected(unsafe.String(unsafe.SliceData(b), len(b)), pr, (*fields)(&room.Fields)); err == nil {
		return v
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return b
}
