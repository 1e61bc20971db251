package avro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Kind is the type of a schema.
type Kind uint8

// The kinds of schema.
const (
	Null Kind = iota
	Boolean
	Int
	Long
	Float
	Double
	Bytes
	String
	Record
	Enum
	Array
	Map
	Union
	Fixed
)

var kindNames = [...]string{"null", "boolean", "int", "long", "float", "double", "bytes", "string", "record", "enum", "array", "map", "union", "fixed"}

// String is the kind's name in a schema ("long", "record"...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// The logical types a schema may carry, by their names in a schema.
const (
	Decimal              = "decimal"
	UUID                 = "uuid"
	Date                 = "date"
	TimeMillis           = "time-millis"
	TimeMicros           = "time-micros"
	TimestampMillis      = "timestamp-millis"
	TimestampMicros      = "timestamp-micros"
	TimestampNanos       = "timestamp-nanos"
	LocalTimestampMillis = "local-timestamp-millis"
	LocalTimestampMicros = "local-timestamp-micros"
	LocalTimestampNanos  = "local-timestamp-nanos"
	Duration             = "duration"
)

// MaxDepth bounds how deep schemas nest in their JSON text.
const MaxDepth = 200

// Schema is one parsed schema. A named type appears once: every
// reference to it, recursive ones too, is the same *Schema. A Schema is
// read-only once parsed and safe for concurrent use.
type Schema struct {
	Kind Kind
	// Logical is the logical type, "" for none or one invalid for Kind.
	Logical string
	// Precision and Scale of a decimal.
	Precision, Scale int
	// Name and FullName (Namespace.Name) of a record, enum or fixed.
	Name, Namespace, FullName string
	Aliases                   []string
	// Fields of a record.
	Fields []*Field
	// Symbols of an enum, and its default symbol ("" for none).
	Symbols []string
	Default string
	// Items of an array, Values of a map.
	Items, Values *Schema
	// Types are a union's branches.
	Types []*Schema
	// Size of a fixed.
	Size int
}

// Field is one field of a record.
type Field struct {
	Name    string
	Aliases []string
	Type    *Schema
	// Default is the field's default as parsed JSON (encoding/json's
	// values) when HasDefault.
	Default    any
	HasDefault bool
}

// Named tells whether s is a record, enum or fixed.
func (s *Schema) Named() bool { return s.Kind == Record || s.Kind == Enum || s.Kind == Fixed }

// TypeName is the full name of a named type, else the kind's name.
func (s *Schema) TypeName() string {
	if s.Named() {
		return s.FullName
	}
	return s.Kind.String()
}

// Nullable tells whether s is a union of null and one other type.
func (s *Schema) Nullable() bool {
	return s.Kind == Union && len(s.Types) == 2 && (s.Types[0].Kind == Null || s.Types[1].Kind == Null)
}

// primitives are the schemas of the primitive names, without a logical
// type: shared, since a Schema is never changed once parsed.
var primitives = map[string]*Schema{}

func init() {
	for k := Null; k <= String; k++ {
		primitives[k.String()] = &Schema{Kind: k}
	}
}

// Names is a table of named types shared by parses: a schema parsed
// with it may refer to the names of those parsed before it. The zero
// Names is empty and ready. A Names is for one goroutine at a time.
type Names struct {
	m       map[string]*Schema // by full name
	aliases map[string]*Schema // by full alias
}

// Parse parses one schema (JSON text) with no earlier names.
func Parse(text string) (*Schema, error) {
	return new(Names).Parse([]byte(text))
}

// MustParse is Parse for a schema known to be valid; it panics otherwise.
func MustParse(text string) *Schema {
	s, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return s
}

// Parse parses one schema (JSON text). The schema may refer to the names
// n holds; its own named types join n when it parses, and n is unchanged
// when it does not. Text that is not JSON is read as a type name.
func (n *Names) Parse(text []byte) (*Schema, error) {
	var v any
	if json.Valid(text) {
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			v = string(text)
		}
	} else {
		v = string(text)
	}
	p := parser{names: n, local: map[string]*Schema{}, aliases: map[string]*Schema{}, digits: map[int]int{}}
	s, err := p.parse("", v, 0)
	if err != nil {
		return nil, err
	}
	if n.m == nil {
		n.m, n.aliases = map[string]*Schema{}, map[string]*Schema{}
	}
	for k, v := range p.local {
		n.m[k] = v
	}
	for k, v := range p.aliases {
		if n.aliases[k] == nil {
			n.aliases[k] = v
		}
	}
	return s, nil
}

type parser struct {
	names   *Names
	local   map[string]*Schema // named types of this parse, by full name
	aliases map[string]*Schema // their aliases, the first type of each
	digits  map[int]int        // maxDigits by fixed size, computed once
}

// lookup resolves a full name: to a named type of this parse or an
// earlier one, else to a type with that alias. An alias never hides a
// name, whichever comes first in the text.
func (p *parser) lookup(full string) *Schema {
	if s := p.local[full]; s != nil {
		return s
	}
	if s := p.names.m[full]; s != nil {
		return s
	}
	if s := p.aliases[full]; s != nil {
		return s
	}
	return p.names.aliases[full]
}

func (p *parser) parse(ns string, v any, depth int) (*Schema, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("avro: schema nested deeper than %d levels", MaxDepth)
	}
	switch v := v.(type) {
	case nil:
		return primitives["null"], nil
	case string:
		return p.byName(ns, v)
	case map[string]any:
		return p.complex(ns, v, depth)
	case []any:
		return p.union(ns, v, depth)
	}
	return nil, fmt.Errorf("avro: unknown type: %s", short(v))
}

// short is v as JSON text, cut to fit in one line of an error.
func short(v any) string {
	b, err := json.Marshal(v)
	s := string(b)
	if err != nil {
		s = fmt.Sprint(v)
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// fullName is name in namespace ns: a dotted name is full already.
func fullName(ns, name string) string {
	if ns == "" || strings.Contains(name, ".") {
		return name
	}
	return ns + "." + name
}

func (p *parser) byName(ns, name string) (*Schema, error) {
	if s := primitives[name]; s != nil {
		return s, nil
	}
	if s := p.lookup(fullName(ns, name)); s != nil {
		return s, nil
	}
	// Not in the enclosing namespace: the null namespace, as Java's Avro
	// resolves it, so a type of namespace "" is found from inside another.
	if s := p.lookup(name); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("avro: unknown type: %s", short(name))
}

func (p *parser) complex(ns string, m map[string]any, depth int) (*Schema, error) {
	if u, ok := m["type"].([]any); ok {
		// Not in the specification, but accepted by Java's Avro and others.
		return p.union(ns, u, depth)
	}
	t, ok := m["type"].(string)
	if !ok {
		return nil, fmt.Errorf("avro: unknown type: %s", short(m))
	}
	switch t {
	case "null", "boolean", "int", "long", "float", "double", "bytes", "string":
		return primitive(primitives[t].Kind, m), nil
	case "record", "error":
		return p.record(ns, m, depth)
	case "enum":
		return p.enum(ns, m)
	case "array", "map":
		key := "items"
		if t == "map" {
			key = "values"
		}
		iv, ok := m[key]
		if !ok {
			return nil, fmt.Errorf("avro: %s must have an %s key", t, key)
		}
		item, err := p.parse(ns, iv, depth+1)
		if err != nil {
			return nil, err
		}
		if t == "map" {
			return &Schema{Kind: Map, Values: item}, nil
		}
		return &Schema{Kind: Array, Items: item}, nil
	case "fixed":
		return p.fixed(ns, m)
	}
	return p.byName(ns, t)
}

// primitive is a primitive with the logical type m gives it, if valid.
func primitive(k Kind, m map[string]any) *Schema {
	lt, _ := m["logicalType"].(string)
	ok := false
	switch lt {
	case UUID:
		ok = k == String
	case Date, TimeMillis:
		ok = k == Int
	case TimeMicros, TimestampMillis, TimestampMicros, TimestampNanos,
		LocalTimestampMillis, LocalTimestampMicros, LocalTimestampNanos:
		ok = k == Long
	case Decimal:
		if k == Bytes {
			if prec, scale, valid := decimal(m, -1); valid {
				return &Schema{Kind: k, Logical: Decimal, Precision: prec, Scale: scale}
			}
		}
	}
	if !ok {
		return primitives[k.String()]
	}
	return &Schema{Kind: k, Logical: lt}
}

// decimal reads the precision and scale of a decimal, and whether they
// are valid: a precision above 0 and no more than digits (the digits a
// fixed holds; -1 for bytes, which hold any), a scale from 0 to precision.
func decimal(m map[string]any, digits int) (prec, scale int, ok bool) {
	prec, ok = wholeNumber(m["precision"])
	if !ok || prec <= 0 {
		return 0, 0, false
	}
	if v, has := m["scale"]; has {
		if scale, ok = wholeNumber(v); !ok {
			return 0, 0, false
		}
	}
	if scale < 0 || scale > prec {
		return 0, 0, false
	}
	if digits >= 0 && prec > digits {
		return 0, 0, false
	}
	return prec, scale, true
}

// maxDigits is floor(log10(2^(8·size-1) - 1)): the decimal digits a
// signed integer of size bytes always holds.
func maxDigits(size int) int {
	if size > 1<<12 {
		return 1 << 30
	}
	n := new(big.Int).Lsh(big.NewInt(1), uint(8*size-1))
	n.Sub(n, big.NewInt(1))
	return len(n.String()) - 1
}

// wholeNumber is v as an int when it is a JSON number with no fraction.
func wholeNumber(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		if int64(int(i)) != i {
			return 0, false
		}
		return int(i), true
	}
	f, err := n.Float64()
	if err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, false
	}
	return int(f), true
}

// stringProp is m[key] as a string: "" when absent or null, an error
// when another JSON type.
func stringProp(what string, m map[string]any, key string) (string, error) {
	switch v := m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", fmt.Errorf("avro: %s %s must be a string", what, key)
}

// stringsProp is m[key] as a list of strings.
func stringsProp(what string, m map[string]any, key string) ([]string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("avro: %s %s must be an array of strings", what, key)
	}
	out := make([]string, len(l))
	for i, e := range l {
		if out[i], ok = e.(string); !ok {
			return nil, fmt.Errorf("avro: %s %s must be an array of strings", what, key)
		}
	}
	return out, nil
}

// validName tells whether name is an Avro name: [A-Za-z_][A-Za-z0-9_]*.
func validName(name string) error {
	if name == "" {
		return errors.New("name must be non-empty")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return fmt.Errorf("invalid name %s", short(name))
	}
	return nil
}

// name fills the name, namespace, full name and aliases of a named type
// from m, in namespace ns, and registers them.
func (p *parser) name(s *Schema, what, ns string, m map[string]any) error {
	name, err := stringProp(what, m, "name")
	if err != nil {
		return err
	}
	if name == "" {
		return errors.New("avro: non-empty name key required")
	}
	space, err := stringProp(what, m, "namespace")
	if err != nil {
		return err
	}
	if v, has := m["namespace"]; !has || v == nil {
		// An absent namespace is the enclosing one; "" is the null
		// namespace, as the specification says.
		space = ns
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		space, name = name[:i], name[i+1:]
	}
	full := name
	if space != "" {
		full = space + "." + name
	}
	for part := range strings.SplitSeq(full, ".") {
		if err := validName(part); err != nil {
			return fmt.Errorf("avro: invalid name part %s in name %s: %w", short(part), short(full), err)
		}
	}
	aliases, err := stringsProp(what, m, "aliases")
	if err != nil {
		return err
	}
	for i, a := range aliases {
		for part := range strings.SplitSeq(a, ".") {
			if err := validName(part); err != nil {
				return fmt.Errorf("avro: invalid alias %s of %s: %w", short(a), short(full), err)
			}
		}
		aliases[i] = fullName(space, a)
	}
	if primitives[full] != nil {
		return fmt.Errorf("avro: a named type cannot be called %s, a primitive type", short(full))
	}
	if p.local[full] != nil {
		return fmt.Errorf("avro: duplicate name %s", short(full))
	}
	if p.names.m[full] != nil {
		return fmt.Errorf("avro: name %s is already defined by a reference", short(full))
	}
	s.Name, s.Namespace, s.FullName, s.Aliases = name, space, full, aliases
	p.local[full] = s
	for _, a := range aliases {
		if p.aliases[a] == nil {
			p.aliases[a] = s
		}
	}
	return nil
}

func (p *parser) record(ns string, m map[string]any, depth int) (*Schema, error) {
	s := &Schema{Kind: Record}
	if _, err := stringProp("record", m, "doc"); err != nil {
		return nil, err
	}
	if err := p.name(s, "record", ns, m); err != nil {
		return nil, err
	}
	fv, ok := m["fields"]
	if !ok {
		return nil, errors.New("avro: record must have an array of fields")
	}
	list, ok := fv.([]any)
	if !ok && fv != nil {
		return nil, errors.New("avro: record must have an array of fields")
	}
	s.Fields = make([]*Field, 0, len(list))
	names := make(map[string]bool, len(list))
	for _, e := range list {
		fm, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("avro: record %s: a field must be an object", short(s.FullName))
		}
		f, err := p.field(s.Namespace, fm, depth)
		if err != nil {
			return nil, err
		}
		if names[f.Name] {
			return nil, fmt.Errorf("avro: duplicate field name %s", short(f.Name))
		}
		names[f.Name] = true
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

func (p *parser) field(ns string, m map[string]any, depth int) (*Field, error) {
	name, err := stringProp("field", m, "name")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, errors.New("avro: non-empty name key required")
	}
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("avro: field: %w", err)
	}
	aliases, err := stringsProp("field", m, "aliases")
	if err != nil {
		return nil, err
	}
	for _, a := range aliases {
		if err := validName(a); err != nil {
			return nil, fmt.Errorf("avro: field %s alias: %w", short(name), err)
		}
	}
	if _, err := stringProp("field", m, "doc"); err != nil {
		return nil, err
	}
	order, err := stringProp("field", m, "order")
	if err != nil {
		return nil, err
	}
	switch order {
	case "", "ascending", "descending", "ignore":
	default:
		return nil, fmt.Errorf("avro: field %s order %s is invalid", short(name), short(order))
	}
	tv, ok := m["type"]
	if !ok {
		return nil, errors.New("avro: field requires a type")
	}
	t, err := p.parse(ns, tv, depth+1)
	if err != nil {
		return nil, err
	}
	def, hasDef := m["default"]
	return &Field{Name: name, Aliases: aliases, Type: t, Default: def, HasDefault: hasDef}, nil
}

func (p *parser) enum(ns string, m map[string]any) (*Schema, error) {
	s := &Schema{Kind: Enum}
	syms, err := stringsProp("enum", m, "symbols")
	if err != nil {
		return nil, err
	}
	def, err := stringProp("enum", m, "default")
	if err != nil {
		return nil, err
	}
	if _, err := stringProp("enum", m, "doc"); err != nil {
		return nil, err
	}
	if err := p.name(s, "enum", ns, m); err != nil {
		return nil, err
	}
	if len(syms) == 0 {
		return nil, errors.New("avro: enum must have a non-empty array of symbols")
	}
	seen := make(map[string]bool, len(syms))
	for _, sym := range syms {
		if validName(sym) != nil {
			return nil, fmt.Errorf("avro: invalid symbol %s", short(sym))
		}
		if seen[sym] {
			return nil, fmt.Errorf("avro: duplicate symbol %s", short(sym))
		}
		seen[sym] = true
	}
	if def != "" && !seen[def] {
		return nil, fmt.Errorf("avro: symbol default %s must be a symbol", short(def))
	}
	s.Symbols, s.Default = syms, def
	return s, nil
}

func (p *parser) fixed(ns string, m map[string]any) (*Schema, error) {
	s := &Schema{Kind: Fixed}
	if err := p.name(s, "fixed", ns, m); err != nil {
		return nil, err
	}
	sv, ok := m["size"]
	if !ok {
		return nil, errors.New("avro: fixed must have a size")
	}
	size, ok := wholeNumber(sv)
	if !ok {
		return nil, errors.New("avro: fixed size must be a whole number")
	}
	if size < 0 {
		return nil, errors.New("avro: fixed size cannot be negative")
	}
	s.Size = size
	switch lt, _ := m["logicalType"].(string); lt {
	case Duration:
		if size == 12 {
			s.Logical = Duration
		}
	case UUID:
		if size == 16 {
			s.Logical = UUID
		}
	case Decimal:
		digits := -1 // a fixed of no bytes holds 0 whatever the precision
		if size > 0 {
			if _, ok := p.digits[size]; !ok {
				p.digits[size] = maxDigits(size)
			}
			digits = p.digits[size]
		}
		if prec, scale, ok := decimal(m, digits); ok {
			s.Logical, s.Precision, s.Scale = Decimal, prec, scale
		}
	}
	return s, nil
}

func (p *parser) union(ns string, l []any, depth int) (*Schema, error) {
	s := &Schema{Kind: Union, Types: make([]*Schema, len(l))}
	seen := make(map[string]bool, len(l))
	for i, v := range l {
		t, err := p.parse(ns, v, depth+1)
		if err != nil {
			return nil, err
		}
		if t.Kind == Union {
			return nil, errors.New("avro: union type cannot be a union")
		}
		key := t.TypeName()
		if !t.Named() && t.Logical != "" {
			key += "." + t.Logical
		}
		if seen[key] {
			return nil, fmt.Errorf("avro: union type %s must be unique", short(key))
		}
		seen[key] = true
		s.Types[i] = t
	}
	return s, nil
}
