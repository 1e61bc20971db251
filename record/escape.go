package record

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tabWidth is the tab stop distance used when tabs are expanded.
const tabWidth = 8

// EscapeLine renders untrusted bytes (a record key, value or header) as one
// line that is safe to print on a terminal (docs/design.md §2.7):
//
//   - ESC, the other C0 controls and DEL become \x1b, \x00 … \x7f, so no
//     CSI, OSC, DCS or other sequence can start;
//   - newlines and carriage returns become \n and \r;
//   - tabs are expanded with spaces to the next multiple of 8 columns;
//   - C1 controls, bidi embeddings, overrides and isolates, zero-width and
//     other format characters, variation selectors, and line and paragraph
//     separators become \uXXXX (or \UXXXXXXXX), so text cannot reorder
//     itself or hide, and every rune has the width lipgloss measures;
//   - each byte of invalid UTF-8 becomes \xNN;
//   - a backslash becomes \\, so that the four characters \x1b of the
//     input and an escaped ESC never look the same: every escape of the
//     output reads back to one input (tabs aside, which become spaces).
//
// This is the one rule for every path to the terminal (screen, stderr,
// event and log lines); JSON output keeps JSON's own escaping (SafeJSON).
// Work is proportional to the output:
// escaping stops once the result is at least maxWidth columns wide
// (maxWidth <= 0: no limit), so a value of several MiB costs what one line
// on screen costs. The caller truncates to the exact width with ansi
// functions; the result is plain text without escape sequences.
func EscapeLine(b []byte, maxWidth int) string {
	var e escaper
	e.line = true
	e.maxWidth = maxWidth
	e.write(b)
	return e.sb.String()
}

// EscapeText is EscapeLine for a multi-line view: "\n" and "\r\n" end a
// line (the result holds "\n" there), a lone "\r" shows as \r, and tab
// stops restart on every line. maxWidth <= 0 means no limit; otherwise
// escaping stops after about maxWidth columns in total, which bounds the
// work for huge values.
func EscapeText(b []byte, maxWidth int) string {
	var e escaper
	e.maxWidth = maxWidth
	e.write(b)
	return e.sb.String()
}

// String is EscapeLine for a string, with no limit: the form for names
// and messages from outside (a topic or host name, a broker's error text, a
// file name) on stderr and in kbatch's own text. Apply it once, where the
// text goes to the terminal: it doubles backslashes, so text escaped twice
// shows its escapes doubled. Messages built inside kbatch carry raw text
// (offsets.QuoteName marks a name that will show escaped).
func String(s string) string {
	if isPlain(s) {
		return s
	}
	return EscapeLine([]byte(s), 0)
}

// CutMiddle returns s if it is at most max bytes long, and otherwise at
// most max bytes of it: its start and end, three quarters and a quarter,
// with the middle replaced by a note of how many bytes were cut. Text from
// outside (a broker's error naming a 32 KiB host or topic) stays readable,
// and both what failed (the start) and why (the end) stay. Runes are not
// split, and a text cut once is not cut again.
func CutMiddle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	keep := max - cutNoteMax
	if keep < 0 {
		keep = 0
	}
	head, tail := keep*3/4, len(s)-keep/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + " …[" + strconv.Itoa(tail-head) + " bytes cut]… " + s[tail:]
}

// cutNoteMax is the longest note CutMiddle puts in a text's middle: " …[",
// 20 digits and " bytes cut]… ".
const cutNoteMax = 40

// isPlain reports whether s is printable ASCII without a backslash, the
// common case that needs no work.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f || s[i] == '\\' {
			return false
		}
	}
	return true
}

type escaper struct {
	sb       strings.Builder
	line     bool // one line: \n and \r are escaped
	maxWidth int
	col      int // column within the current line, for tab stops
	width    int // columns written in total (an upper bound for wide runes)
}

// hexDigit spells a nibble in lower-case hexadecimal.
const hexDigit = "0123456789abcdef"

func (e *escaper) full() bool { return e.maxWidth > 0 && e.width >= e.maxWidth }

func (e *escaper) write(b []byte) {
	for i := 0; i < len(b) && !e.full(); {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '\t':
				n := tabWidth - e.col%tabWidth
				e.sb.WriteString("        "[:n])
				e.advance(n)
			case c == '\n' && !e.line:
				e.sb.WriteByte('\n')
				e.col = 0
				e.width++
			case c == '\r' && !e.line && i < len(b) && b[i] == '\n':
				// CRLF ends a line like LF.
			case c == '\n':
				e.literal(`\n`)
			case c == '\r':
				e.literal(`\r`)
			case c < 0x20 || c == 0x7f:
				e.literal(`\x` + string(hexDigit[c>>4]) + string(hexDigit[c&0xf]))
			case c == '\\':
				e.literal(`\\`)
			default:
				e.sb.WriteByte(c)
				e.advance(1)
			}
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			e.literal(`\x` + string(hexDigit[c>>4]) + string(hexDigit[c&0xf]))
			i++
			continue
		}
		i += size
		if UnsafeRune(r) {
			e.literal(RuneEscape(r))
			continue
		}
		e.sb.WriteRune(r)
		// East Asian wide runes take two columns; counting two for every
		// rune past U+1100 only makes the limit err on the short side.
		if r >= 0x1100 {
			e.advance(2)
		} else {
			e.advance(1)
		}
	}
}

// EscapeBinary renders bytes that are not text: printable ASCII stays,
// a backslash becomes \\, and every other byte becomes \xNN. Like
// EscapeLine it stops after about maxWidth columns (maxWidth <= 0: no
// limit).
func EscapeBinary(b []byte, maxWidth int) string {
	var sb strings.Builder
	for _, c := range b {
		if maxWidth > 0 && sb.Len() >= maxWidth {
			break
		}
		switch {
		case c == '\\':
			sb.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f:
			sb.WriteByte(c)
		default:
			sb.WriteString(`\x`)
			sb.WriteByte(hexDigit[c>>4])
			sb.WriteByte(hexDigit[c&0xf])
		}
	}
	return sb.String()
}

func (e *escaper) literal(s string) {
	e.sb.WriteString(s)
	e.advance(len(s))
}

func (e *escaper) advance(n int) {
	e.col += n
	e.width += n
}

// RuneEscape renders r as \uXXXX or \UXXXXXXXX.
func RuneEscape(r rune) string {
	if r <= 0xffff {
		return `\u` + hex(uint32(r), 4)
	}
	return `\U` + hex(uint32(r), 8)
}

func hex(v uint32, digits int) string {
	buf := make([]byte, digits)
	for i := digits - 1; i >= 0; i-- {
		buf[i] = hexDigit[v&0xf]
		v >>= 4
	}
	return string(buf)
}

// UnsafeRune reports whether r must not reach a terminal raw. For ASCII
// that is ESC, the other C0 controls and DEL (tab and newline included: the
// callers decide how to show them); beyond ASCII it is C1 controls (which some terminals take as CSI, OSC, DCS …), format
// characters (bidi embeddings, overrides, isolates and marks, zero-width
// joiners and spaces, the BOM, tag characters), line and paragraph
// separators, variation selectors (terminals disagree on the width they
// give), and the Hangul fillers that render with no width.
func UnsafeRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0:
		return true
	case r == utf8.RuneError:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// oneCharEscapes are the escapes of one character after the backslash and
// the byte each stands for.
var oneCharEscapes = map[byte]byte{'\\': '\\', 'n': '\n', 'r': '\r', 't': '\t'}

// Unescape reads text with escapes back into bytes: \\ is a backslash,
// \n \r \t the control characters, \xNN a byte, \uNNNN and \UNNNNNNNN a
// character. Every escape EscapeLine, EscapeText and EscapeBinary write
// reads back to the bytes it stands for, and the produce form reads what
// is typed with it. A backslash that starts none of these is an error that
// names its column.
func Unescape(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 >= len(s) {
			return nil, fmt.Errorf(`a lone \ at the end: type \\ for a backslash`)
		}
		i++
		if b, ok := oneCharEscapes[s[i]]; ok {
			out = append(out, b)
			continue
		}
		switch s[i] {
		case 'x':
			if i+3 > len(s) {
				return nil, fmt.Errorf(`\x at column %d needs two hex digits`, i)
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf(`\x at column %d needs two hex digits`, i)
			}
			out = append(out, byte(v))
			i += 2
		case 'u', 'U':
			n := 4
			if s[i] == 'U' {
				n = 8
			}
			if i+1+n > len(s) {
				return nil, fmt.Errorf(`\%c at column %d needs %d hex digits`, s[i], i, n)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return nil, fmt.Errorf(`\%c at column %d needs %d hex digits of a character`, s[i], i, n)
			}
			out = utf8.AppendRune(out, rune(v))
			i += n
		default:
			return nil, fmt.Errorf(`unknown escape \%c at column %d: type \\ for a backslash`, s[i], i)
		}
	}
	return out, nil
}
