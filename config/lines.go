package config

import (
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines maps every key and table path of a TOML document to the line
// (counting from 1) where it first appears, so errors about keys and
// values can name their line: the decoded tree has no positions, go-toml's
// parser does (its AST keeps each key's bytes, Parser.Shape turns them into
// a line). Paths are joined with pathSep. It is meant for documents that
// already parsed; on anything else it returns what it found before the
// parser stopped, and never panics.
func keyLines(data []byte) map[string]int {
	k := keyLiner{lines: map[string]int{}}
	k.p.Reset(data)
	var table []string
	for k.p.NextExpression() {
		switch e := k.p.Expression(); e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = k.key(nil, e)
		case unstable.KeyValue:
			k.keyValue(table, e)
		}
	}
	return k.lines
}

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
	p     unstable.Parser
	lines map[string]int
}

// key records the (dotted) key of a table header or key-value n under
// prefix, each part at the line it is written on, and returns the path.
func (k *keyLiner) key(prefix []string, n *unstable.Node) []string {
	path := append([]string(nil), prefix...)
	it := n.Key()
	for it.Next() {
		part := it.Node()
		path = append(path, string(part.Data))
		if j := joinPath(path); k.lines[j] == 0 {
			k.lines[j] = k.p.Shape(part.Raw).Start.Line
		}
	}
	return path
}

// keyValue records a key-value's key, and the keys of inline tables in its
// value (also inline tables inside arrays).
func (k *keyLiner) keyValue(prefix []string, n *unstable.Node) {
	k.value(k.key(prefix, n), n.Value())
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
