package config

import "strings"

// keyLines maps every key and table path of a TOML document to the line
// (counting from 1) where it first appears, so errors about keys can name
// their line; the toml package keeps key positions to itself. Paths are
// joined with pathSep. It is meant for documents that already parsed; on
// anything else it returns what it found so far and never panics.
func keyLines(data []byte) map[string]int {
	s := &lineScanner{src: string(data), line: 1, lines: map[string]int{}}
	s.document()
	return s.lines
}

const pathSep = "\x1f"

func joinPath(path []string) string { return strings.Join(path, pathSep) }

// lineAt returns the line of path, or of its longest prefix that has one
// (a key inside an inline table or array), or 0.
func lineAt(lines map[string]int, path []string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := lines[joinPath(path[:n])]; ok {
			return l
		}
	}
	return 0
}

type lineScanner struct {
	src   string
	pos   int
	line  int
	lines map[string]int
}

func (s *lineScanner) eof() bool { return s.pos >= len(s.src) }

func (s *lineScanner) peek() byte {
	if s.eof() {
		return 0
	}
	return s.src[s.pos]
}

func (s *lineScanner) advance() {
	if !s.eof() {
		if s.src[s.pos] == '\n' {
			s.line++
		}
		s.pos++
	}
}

// record notes the line of path and of its prefixes longer than from
// elements (shorter ones were recorded by the enclosing table or key, so
// deep nesting stays quadratic at worst, like the toml parser itself).
func (s *lineScanner) record(path []string, from int) {
	if from >= len(path) {
		return
	}
	var b strings.Builder
	b.WriteString(joinPath(path[:from]))
	for n := from; n < len(path); n++ {
		if n > 0 {
			b.WriteString(pathSep)
		}
		b.WriteString(path[n])
		k := b.String()
		if _, ok := s.lines[k]; !ok {
			s.lines[k] = s.line
		}
	}
}

// skipSpace skips blanks, and with newlines also line ends and comments.
func (s *lineScanner) skipSpace(newlines bool) {
	for !s.eof() {
		switch c := s.peek(); {
		case c == ' ' || c == '\t' || c == '\r':
			s.advance()
		case newlines && c == '\n':
			s.advance()
		case newlines && c == '#':
			s.skipLine()
		default:
			return
		}
	}
}

func (s *lineScanner) skipLine() {
	for !s.eof() && s.peek() != '\n' {
		s.advance()
	}
}

func (s *lineScanner) document() {
	var table []string
	for !s.eof() {
		start := s.pos
		s.skipSpace(true)
		if s.eof() {
			return
		}
		if s.peek() == '[' {
			s.advance()
			if s.peek() == '[' {
				s.advance()
			}
			table = s.dottedKey()
			s.record(table, 0)
			s.skipLine()
		} else {
			s.keyValue(table)
			s.skipLine()
		}
		if s.pos == start {
			s.advance() // never loop in place on garbage
		}
	}
}

// keyValue reads "key = value" and records the key (and the keys of an
// inline-table value) under prefix.
func (s *lineScanner) keyValue(prefix []string) {
	key := s.dottedKey()
	if len(key) == 0 {
		return
	}
	full := append(append([]string(nil), prefix...), key...)
	s.record(full, len(prefix))
	s.skipSpace(false)
	if s.peek() != '=' {
		return
	}
	s.advance()
	s.skipSpace(false)
	s.value(full)
}

// dottedKey reads a key like a."b.c".'d' and stops at '=' or ']'.
func (s *lineScanner) dottedKey() []string {
	var parts []string
	for !s.eof() {
		s.skipSpace(false)
		switch c := s.peek(); {
		case c == '"':
			parts = append(parts, s.basicString())
		case c == '\'':
			parts = append(parts, s.literalString())
		case isBare(c):
			start := s.pos
			for !s.eof() && isBare(s.peek()) {
				s.advance()
			}
			parts = append(parts, s.src[start:s.pos])
		default:
			return parts
		}
		s.skipSpace(false)
		if s.peek() != '.' {
			return parts
		}
		s.advance()
	}
	return parts
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// basicString reads "..." and returns its content with simple escapes
// undone (enough to name keys).
func (s *lineScanner) basicString() string {
	s.advance()
	var b strings.Builder
	for !s.eof() {
		c := s.peek()
		switch c {
		case '"':
			s.advance()
			return b.String()
		case '\n':
			return b.String()
		case '\\':
			s.advance()
			if s.eof() {
				return b.String()
			}
			switch e := s.peek(); e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(e)
			}
			s.advance()
			continue
		}
		b.WriteByte(c)
		s.advance()
	}
	return b.String()
}

func (s *lineScanner) literalString() string {
	s.advance()
	start := s.pos
	for !s.eof() && s.peek() != '\'' && s.peek() != '\n' {
		s.advance()
	}
	out := s.src[start:s.pos]
	if s.peek() == '\'' {
		s.advance()
	}
	return out
}

// value skips one value, following multi-line strings and arrays, and
// records the keys of inline tables under path.
func (s *lineScanner) value(path []string) {
	rest := s.src[s.pos:]
	switch {
	case strings.HasPrefix(rest, `"""`), strings.HasPrefix(rest, `'''`):
		s.multiline(rest[:3])
	case strings.HasPrefix(rest, `"`):
		s.basicString()
	case strings.HasPrefix(rest, `'`):
		s.literalString()
	case strings.HasPrefix(rest, "["):
		s.advance()
		for !s.eof() {
			s.skipSpace(true)
			switch s.peek() {
			case ']':
				s.advance()
				return
			case ',':
				s.advance()
				continue
			}
			start := s.pos
			s.value(path)
			if s.pos == start {
				s.advance()
			}
		}
	case strings.HasPrefix(rest, "{"):
		s.advance()
		for !s.eof() {
			s.skipSpace(false)
			switch s.peek() {
			case '}':
				s.advance()
				return
			case ',':
				s.advance()
				continue
			case '\n', 0:
				return
			}
			start := s.pos
			s.keyValue(path)
			if s.pos == start {
				s.advance()
			}
		}
	default:
		for !s.eof() {
			switch s.peek() {
			case ' ', '\t', '\r', '\n', ',', ']', '}', '#':
				return
			}
			s.advance()
		}
	}
}

func (s *lineScanner) multiline(delim string) {
	for range 3 {
		s.advance()
	}
	for !s.eof() {
		if strings.HasPrefix(s.src[s.pos:], delim) {
			for range 3 {
				s.advance()
			}
			// Up to two more quotes may belong to the content.
			for n := 0; n < 2 && !s.eof() && s.peek() == delim[0]; n++ {
				s.advance()
			}
			return
		}
		if delim[0] == '"' && s.peek() == '\\' {
			s.advance()
		}
		s.advance()
	}
}
