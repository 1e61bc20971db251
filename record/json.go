package record

import (
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// SafeJSON returns the JSON document b with every rune UnsafeRune names
// written as a \uXXXX escape (a surrogate pair beyond U+FFFF), so a
// document from encoding/json is safe to print on a terminal: that encoder
// escapes C0 controls but leaves DEL, C1 controls and bidi overrides raw.
// Such runes can only stand inside JSON strings, where the escape decodes
// back to the same rune, so the document means what it meant. Invalid UTF-8
// (which encoding/json never writes) becomes \ufffd. b is returned as it is
// when it needs no change.
func SafeJSON(b []byte) []byte {
	i := safeJSONPrefix(b)
	if i == len(b) {
		return b
	}
	return appendSafeJSON(append(make([]byte, 0, len(b)+16), b[:i]...), b[i:])
}

// AppendSafeJSON appends the JSON document s to buf as SafeJSON writes it.
func AppendSafeJSON(buf []byte, s string) []byte {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read, never written
	i := safeJSONPrefix(b)
	return appendSafeJSON(append(buf, b[:i]...), b[i:])
}

// safeJSONPrefix is the length of the start of b that SafeJSON keeps as
// it is.
func safeJSONPrefix(b []byte) int {
	i := 0
	for i < len(b) {
		c := b[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' || c == '\r' {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if UnsafeRune(r) || r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return i
}

// appendSafeJSON appends b to out with every rune UnsafeRune names, and
// every byte that is not UTF-8, written as a JSON escape.
func appendSafeJSON(out, b []byte) []byte {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = AppendJSONRune(out, utf8.RuneError)
		case r == '\n' || r == '\t' || r == '\r':
			out = append(out, byte(r)) // whitespace between JSON tokens
		case UnsafeRune(r):
			out = AppendJSONRune(out, r)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// AppendJSONRune appends r as a JSON \uXXXX escape, or as a UTF-16
// surrogate pair beyond the Basic Multilingual Plane.
func AppendJSONRune(buf []byte, r rune) []byte {
	if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
		return AppendJSONRune(AppendJSONRune(buf, r1), r2)
	}
	return append(buf, '\\', 'u', hexDigit[r>>12&0xf], hexDigit[r>>8&0xf], hexDigit[r>>4&0xf], hexDigit[r&0xf])
}
