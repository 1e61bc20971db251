package tui

import (
	"strings"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// EscapeLine renders untrusted bytes (a record key, value or header) as one
// line that is safe to print on a terminal: record.EscapeLine, the one rule
// of DESIGN §2.7. It stops after about maxWidth columns (maxWidth <= 0: no
// limit); the caller truncates to the exact width with ansi functions.
func EscapeLine(b []byte, maxWidth int) string { return krecord.EscapeLine(b, maxWidth) }

// EscapeText is EscapeLine for a multi-line view (record.EscapeText).
func EscapeText(b []byte, maxWidth int) string { return krecord.EscapeText(b, maxWidth) }

// EscapeString is EscapeLine for a string, with no limit (record.String).
func EscapeString(s string) string { return krecord.String(s) }

// EscapeBinary renders bytes that are not text: printable ASCII stays,
// every other byte becomes \xNN. Like EscapeLine it stops after about
// maxWidth columns (maxWidth <= 0: no limit).
func EscapeBinary(b []byte, maxWidth int) string {
	var sb strings.Builder
	for _, c := range b {
		if maxWidth > 0 && sb.Len() >= maxWidth {
			break
		}
		if c >= 0x20 && c < 0x7f {
			sb.WriteByte(c)
			continue
		}
		sb.WriteString(`\x`)
		sb.WriteByte(hexDigit[c>>4])
		sb.WriteByte(hexDigit[c&0xf])
	}
	return sb.String()
}

const hexDigit = "0123456789abcdef"
