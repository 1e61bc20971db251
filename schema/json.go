package schema

import (
	"bytes"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// writeJSONString writes s as a JSON string. Control characters are
// escaped and bytes that are not UTF-8 become U+FFFD, so the output is
// always valid JSON and never carries a raw terminal escape.
func writeJSONString(out *bytes.Buffer, s string) {
	out.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				out.WriteByte('\\')
				out.WriteByte(c)
			case c == '\n':
				out.WriteString(`\n`)
			case c == '\r':
				out.WriteString(`\r`)
			case c == '\t':
				out.WriteString(`\t`)
			case c < 0x20 || c == 0x7f:
				out.WriteString(`\u00`)
				out.WriteByte(hexDigits[c>>4])
				out.WriteByte(hexDigits[c&0xf])
			default:
				out.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out.WriteString(`\ufffd`)
		case r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029:
			// C1 controls (a terminal reads U+009B as CSI) and JS line separators.
			out.WriteString(`\u`)
			for sh := 12; sh >= 0; sh -= 4 {
				out.WriteByte(hexDigits[(r>>sh)&0xf])
			}
		default:
			out.WriteString(s[i : i+n])
		}
		i += n
	}
	out.WriteByte('"')
}
