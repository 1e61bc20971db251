package config

import (
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// docKeys is every key and table path of a TOML document, with the line
// (counting from 1) where it first appears and the kind of its value,
// from go-toml's parser: the decoded structs have no positions, and
// go-toml matches struct fields without regard to case, so the keys are
// checked here (checkKeys). Paths are joined with pathSep.
type docKeys struct {
	lines map[string]int
	// kinds holds each path's TOML type in the words of the messages
	// ("a string", "a table", ...).
	kinds map[string]string
}

// scanKeys reads the keys of data. On a document that does not parse it
// returns what it found before the parser stopped, and never panics.
func scanKeys(data []byte) docKeys {
	k := keyLiner{docKeys: docKeys{lines: map[string]int{}, kinds: map[string]string{}}}
	k.p.Reset(data)
	var table []string
	for k.p.NextExpression() {
		switch e := k.p.Expression(); e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = k.key(nil, e)
			if e.Kind == unstable.ArrayTable {
				k.kinds[joinPath(table)] = "an array of tables"
			}
		case unstable.KeyValue:
			k.keyValue(table, e)
		}
	}
	return k.docKeys
}

// keyLines maps every key and table path of data to its line.
func keyLines(data []byte) map[string]int { return scanKeys(data).lines }

const pathSep = "\x1f"

func joinPath(path []string) string { return strings.Join(path, pathSep) }

// lineAt returns the line of path, or of its longest prefix that has one,
// or 0.
func lineAt(lines map[string]int, path []string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := lines[joinPath(path[:n])]; ok {
			return l
		}
	}
	return 0
}

type keyLiner struct {
	docKeys
	p unstable.Parser
}

// key records the (dotted) key of a table header or key-value n under
// prefix, each part at the line it is written on and as a table, and
// returns the path.
func (k *keyLiner) key(prefix []string, n *unstable.Node) []string {
	path := append([]string(nil), prefix...)
	it := n.Key()
	for it.Next() {
		part := it.Node()
		path = append(path, string(part.Data))
		if j := joinPath(path); k.lines[j] == 0 {
			k.lines[j] = k.p.Shape(part.Raw).Start.Line
			k.kinds[j] = "a table"
		}
	}
	return path
}

// keyValue records a key-value's key and the kind of its value, and the
// keys of inline tables in its value (also inline tables inside arrays).
func (k *keyLiner) keyValue(prefix []string, n *unstable.Node) {
	path := k.key(prefix, n)
	k.kinds[joinPath(path)] = kindOf(n.Value())
	k.value(path, n.Value())
}

func (k *keyLiner) value(path []string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				k.keyValue(path, kv)
			}
		}
	case unstable.Array:
		it := v.Children()
		for it.Next() {
			k.value(path, it.Node())
		}
	}
}

// kindOf names a value's TOML type.
func kindOf(v *unstable.Node) string {
	switch v.Kind {
	case unstable.String:
		return "a string"
	case unstable.Integer:
		return "an integer"
	case unstable.Float:
		return "a float"
	case unstable.Bool:
		return "a boolean"
	case unstable.DateTime, unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime:
		return "a date"
	case unstable.Array:
		it, n := v.Children(), 0
		for it.Next() {
			if it.Node().Kind != unstable.InlineTable {
				return "an array"
			}
			n++
		}
		if n > 0 {
			return "an array of tables"
		}
		return "an array"
	case unstable.InlineTable:
		return "a table"
	}
	return "a value"
}

// durationText is a duration written as a string ("500ms").
type durationText string

// checkKeys checks every path of the document, in the order of the file,
// against rawFile's toml tags with exact case, and the kind of each value
// against its field's type. It is the part go-toml's decoder does not do:
// go-toml v2.4.3 matches a key to a field without regard to case, and its
// type errors name Go types (TestGoTOMLAloneIgnoresCaseAndNamesGoTypes).
func (d *decoder) checkKeys(keys docKeys) *Error {
	paths := make([][]string, 0, len(keys.kinds))
	for j := range keys.kinds {
		paths = append(paths, strings.Split(j, pathSep))
	}
	sort.Slice(paths, func(a, b int) bool {
		la, lb := lineAt(keys.lines, paths[a]), lineAt(keys.lines, paths[b])
		if la != lb {
			return la < lb
		}
		if len(paths[a]) != len(paths[b]) {
			return len(paths[a]) < len(paths[b])
		}
		return joinPath(paths[a]) < joinPath(paths[b])
	})
	for _, p := range paths {
		if err := d.checkKey(p, keys.kinds[joinPath(p)]); err != nil {
			return err
		}
	}
	return nil
}

var rawFileType = reflect.TypeFor[rawFile]()

// checkKey checks one path whose value is of kind.
func (d *decoder) checkKey(path []string, kind string) *Error {
	t := rawFileType
	for i, part := range path {
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return d.unknown(path[:i+1], tagsOf(t))
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		default:
			// Below a value kbatch reads as it comes (brokers,
			// proto_path), or below a scalar, whose own path is checked
			// first and fails.
			return nil
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	var want, wantKind string
	switch {
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		if kind != "a table" {
			return d.errAt(path, "%s must be a table ([%s]), not %s", dotted(path), dotted(path), kind)
		}
		return nil
	case t == reflect.TypeFor[durationText]():
		want, wantKind = `a duration string like "500ms" or "2s"`, "a string"
	case t.Kind() == reflect.String:
		want, wantKind = "a string", "a string"
	case t.Kind() == reflect.Bool:
		want, wantKind = "true or false", "a boolean"
	case t.Kind() == reflect.Int64:
		want, wantKind = "an integer", "an integer"
	default:
		return nil // any: read and checked by the code that uses it
	}
	if kind != wantKind {
		return d.errAt(path, "%s must be %s, not %s", dotted(path), want, kind)
	}
	return nil
}

// fieldByTag finds the field of struct t whose toml tag is name, exactly.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); tagName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// tagsOf lists the toml keys of struct t, in the order of its fields.
func tagsOf(t reflect.Type) []string {
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		out = append(out, tagName(t.Field(i)))
	}
	return out
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}
