package tui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// The produce form's key, value and header fields are text with escapes,
// so any bytes can be typed and a record's bytes can be shown for editing
// without reaching the terminal raw: \\ is a backslash, \n \r \t the
// control characters, \xNN any byte, \uNNNN and \UNNNNNNNN any character.

// quoteField renders b as field text: printable characters as they are,
// a backslash doubled, everything else (control and format characters,
// invalid UTF-8) escaped; the characters of also are escaped too (the
// headers field's separators).
func quoteField(b []byte, also string) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&sb, `\x%02x`, b[0])
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x80 && (r < 0x20 || r == 0x7f || strings.ContainsRune(also, r)):
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r >= 0x80 && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r) && r != ' '):
			sb.WriteString(krecord.RuneEscape(r))
		default:
			sb.WriteRune(r)
		}
		b = b[n:]
	}
	return sb.String()
}

// unquoteField turns field text back into bytes; it reads the escapes
// krecord.Unescape reads, and a backslash that starts none of them is an
// error that says where.
func unquoteField(s string) ([]byte, error) { return krecord.Unescape(s) }

// headerPair is one header as the form holds it.
type headerPair struct{ key, value []byte }

// parseHeaders reads "name=value, name=value": a comma separates headers
// (spaces after it are dropped), the first = splits name from value; a
// literal comma or = is \x2c or \x3d. A header without = has an empty
// value.
func parseHeaders(s string) ([]headerPair, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []headerPair
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimLeft(part, " ")
		if part == "" {
			return nil, fmt.Errorf("header %d is empty: headers are name=value, separated by commas", i+1)
		}
		name, value, _ := strings.Cut(part, "=")
		k, err := unquoteField(name)
		if err != nil {
			return nil, fmt.Errorf("header %d: %v", i+1, err)
		}
		v, err := unquoteField(value)
		if err != nil {
			return nil, fmt.Errorf("header %d: %v", i+1, err)
		}
		if len(k) == 0 {
			return nil, fmt.Errorf("header %d has no name", i+1)
		}
		out = append(out, headerPair{key: k, value: v})
	}
	return out, nil
}

// formatHeaders is parseHeaders' inverse.
func formatHeaders(hs []headerPair) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		k := quoteField(h.key, ",=")
		if strings.HasPrefix(k, " ") {
			k = `\x20` + k[1:] // parseHeaders drops spaces after a comma
		}
		parts[i] = k + "=" + quoteField(h.value, ",")
	}
	return strings.Join(parts, ", ")
}
