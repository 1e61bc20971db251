package filter

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"cel.dev/cel-go/common/types"

	"github.com/kbatch-dev/kbatch/record"
)

// maxDepth bounds the nesting of a JSON value: record bytes come from
// strangers, and the parser recurses.
const maxDepth = 512

var errNotJSON = errors.New("not JSON")

// parseJSON parses one JSON value (surrounding white space allowed) into
// the values CEL's type adapter knows: map[string]any, []any, string,
// int64 (a number written without fraction or exponent that fits),
// float64 (any other number), bool and nil. A repeated object key keeps
// its last value, as encoding/json does. It is written for speed: no
// reflection, strings without escapes are slices of s.
func parseJSON(s string) (any, error) {
	p := jsonParser{s: s}
	return p.document()
}

// parseProjected is parseJSON that builds, of a top-level object, only
// the fields pr names; the others are checked and skipped. Anything else
// is parsed whole. A projected object is room, its fields appended to
// (*room)[:0]: the caller reuses the room from one value to the next, and
// the value is valid until then. room may be nil.
func parseProjected(s string, pr *projection, room *fields) (any, error) {
	if pr == nil || pr.whole {
		return parseJSON(s)
	}
	if room == nil {
		room = new(fields)
	}
	p := jsonParser{s: s, only: pr, room: room}
	return p.document()
}

// document parses p.s as one JSON value with only white space around it.
func (p *jsonParser) document() (any, error) {
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, errNotJSON
	}
	return v, nil
}

type jsonParser struct {
	s string
	i int
	// only, when set, names the fields of the top-level object to build,
	// into room.
	only *projection
	room *fields
}

func (p *jsonParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if p.i >= len(p.s) || depth > maxDepth {
		return nil, errNotJSON
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == 't':
		return p.word("true", true)
	case c == 'f':
		return p.word("false", false)
	case c == 'n':
		return p.word("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, errNotJSON
}

// skip checks the JSON value at p.i as value would and builds nothing.
func (p *jsonParser) skip(depth int) error {
	if p.i >= len(p.s) || depth > maxDepth {
		return errNotJSON
	}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return nil
		}
		for {
			if end == '}' {
				if p.i >= len(p.s) || p.s[p.i] != '"' {
					return errNotJSON
				}
				if err := p.skipString(); err != nil {
					return err
				}
				p.space()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return errNotJSON
				}
				p.i++
				p.space()
			}
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			p.space()
			if p.i >= len(p.s) {
				return errNotJSON
			}
			switch p.s[p.i] {
			case ',':
				p.i++
				p.space()
			case end:
				p.i++
				return nil
			default:
				return errNotJSON
			}
		}
	case c == '"':
		return p.skipString()
	case c == '-' || c >= '0' && c <= '9':
		_, _, err := p.scanNumber()
		return err
	}
	_, err := p.value(depth) // true, false, null: nothing to build
	return err
}

// skipString checks the string at p.i as string would and builds nothing.
func (p *jsonParser) skipString() error {
	p.i++ // "
	for p.i < len(p.s) {
		p.i += plainLen(p.s[p.i:])
		if p.i >= len(p.s) {
			break
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return nil
		case c < 0x20:
			return errNotJSON
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return errNotJSON
			}
			switch p.s[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				p.i += 2
				if _, ok := p.hex4(); !ok {
					return errNotJSON
				}
			default:
				return errNotJSON
			}
			continue
		}
		p.i++
	}
	return errNotJSON
}

func (p *jsonParser) word(w string, v any) (any, error) {
	if len(p.s)-p.i < len(w) || p.s[p.i:p.i+len(w)] != w {
		return nil, errNotJSON
	}
	p.i += len(w)
	return v, nil
}

func (p *jsonParser) object(depth int) (any, error) {
	p.i++ // {
	only := p.only
	p.only = nil // nested objects are built whole
	var m map[string]any
	var proj fields
	if only != nil {
		proj = (*p.room)[:0]
		if proj == nil {
			proj = make(fields, 0, len(only.fields))
		}
	} else {
		m = make(map[string]any, 8)
	}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		if only != nil {
			*p.room = proj
			return p.room, nil
		}
		return m, nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, errNotJSON
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errNotJSON
		}
		p.i++
		p.space()
		switch {
		case only == nil:
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m[k] = v
		case only.wants(k):
			v, err := p.field(depth + 1)
			if err != nil {
				return nil, err
			}
			proj = append(proj, field{Name: k, Value: v})
		default:
			if err := p.skip(depth + 1); err != nil {
				return nil, err
			}
		}
		done, err := p.after('}')
		if err != nil {
			return nil, err
		}
		if done {
			if only != nil {
				*p.room = proj
				return p.room, nil
			}
			return m, nil
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	p.i++ // [
	l := make([]any, 0, 4)
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return l, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		done, err := p.after(']')
		if err != nil {
			return nil, err
		}
		if done {
			return l, nil
		}
	}
}

// after reads what follows a member of an object or an element of an
// array, white space around it: a comma (false: another follows) or end,
// the closing bracket (true). Anything else is not JSON.
func (p *jsonParser) after(end byte) (bool, error) {
	p.space()
	if p.i >= len(p.s) {
		return false, errNotJSON
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		p.space()
		return false, nil
	case end:
		p.i++
		return true, nil
	}
	return false, errNotJSON
}

// string reads a JSON string at p.i (its opening quote). Text that is not
// UTF-8 is kept as it is, as encoding/json would replace it: the bytes
// are the record's, and a filter compares what is there.
func (p *jsonParser) string() (string, error) {
	p.i++ // "
	start := p.i
	p.i += plainLen(p.s[p.i:])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], nil
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", errNotJSON
		}
		p.i++
	}
	return "", errNotJSON
}

// escaped finishes a string that has escapes; start is its first byte.
func (p *jsonParser) escaped(start int) (string, error) {
	b := make([]byte, 0, p.i-start+16)
	b = append(b, p.s[start:p.i]...)
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), nil
		case c < 0x20:
			return "", errNotJSON
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", errNotJSON
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", errNotJSON
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					lo, ok := p.hex4()
					if !ok {
						return "", errNotJSON
					}
					if r2 = utf16.DecodeRune(r, lo); r2 == utf8.RuneError {
						p.i = save // a lone high surrogate; the next escape stands alone
					}
				}
				r = r2
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", errNotJSON
		}
	}
	return "", errNotJSON
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// field is value for a projected top-level field: a string, number or
// bool comes as CEL's own value, which CEL takes as it is where it would
// wrap a Go value on every read (an allocation per field and record).
func (p *jsonParser) field(depth int) (any, error) {
	if p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			s, err := p.string()
			return types.String(s), err
		case c == '-' || c >= '0' && c <= '9':
			n, f, isInt, err := p.numberOf()
			switch {
			case err != nil:
				return nil, err
			case isInt:
				return types.Int(n), nil
			}
			return types.Double(f), nil
		case c == 't' || c == 'f':
			v, err := p.value(depth)
			if b, ok := v.(bool); ok {
				return types.Bool(b), err
			}
			return v, err
		}
	}
	return p.value(depth)
}

// number reads a JSON number: an int64 when it has no fraction or
// exponent and fits, else a float64.
func (p *jsonParser) number() (any, error) {
	n, f, isInt, err := p.numberOf()
	switch {
	case err != nil:
		return nil, err
	case isInt:
		return n, nil
	}
	return f, nil
}

// numberOf is number unboxed: n when isInt, else f.
func (p *jsonParser) numberOf() (n int64, f float64, isInt bool, err error) {
	text, integer, err := p.scanNumber()
	if err != nil {
		return 0, 0, false, err
	}
	if integer {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, 0, true, nil
		}
	}
	f, err = strconv.ParseFloat(text, 64)
	if err != nil && !isRange(err) {
		return 0, 0, false, errNotJSON
	}
	return 0, f, false, nil
}

// scanNumber reads the text of a JSON number; integer is whether it has
// neither fraction nor exponent.
func (p *jsonParser) scanNumber() (text string, integer bool, err error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || n > 1 && p.s[intStart] == '0' {
		return "", false, errNotJSON
	}
	integer = true
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return "", false, errNotJSON
		}
		integer = false
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return "", false, errNotJSON
		}
		integer = false
	}
	return p.s[start:p.i], integer, nil
}

func isRange(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange
}

// plainLen is record.JSONStringRun: the run of s a JSON string holds as
// it is.
func plainLen(s string) int { return record.JSONStringRun(s) }
