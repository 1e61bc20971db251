package consumer

import (
	"encoding/base64"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/IBM/sarama"
)

// AppendRecordJSON appends one record as a DESIGN §4 JSON line (with the
// trailing newline) to buf and returns the extended buffer. It is lossless:
// keys, values and header values that are valid UTF-8 are JSON strings,
// others are base64 in a field suffixed _b64, and absent ones are null.
//
// Strings are escaped so the line is safe to print on a terminal: C0 and C1
// controls, DEL, bidi overrides and line/paragraph separators become \uXXXX
// escapes, which JSON readers decode back to the same bytes.
//
// It allocates nothing beyond growing buf; callers reuse buf across records.
func AppendRecordJSON(buf []byte, m *sarama.ConsumerMessage) []byte {
	buf = append(buf, `{"topic":`...)
	buf = AppendJSONString(buf, m.Topic)
	buf = append(buf, `,"partition":`...)
	buf = strconv.AppendInt(buf, int64(m.Partition), 10)
	buf = append(buf, `,"offset":`...)
	buf = strconv.AppendInt(buf, m.Offset, 10)
	buf = append(buf, `,"timestamp":"`...)
	buf = appendTimestamp(buf, m.Timestamp)
	buf = append(buf, '"')
	buf = appendBytesField(buf, "key", m.Key)
	buf = appendBytesField(buf, "value", m.Value)
	buf = append(buf, `,"headers":[`...)
	for i, h := range m.Headers {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"key":`...)
		buf = AppendJSONString(buf, string(h.Key))
		buf = appendBytesField(buf, "value", h.Value)
		buf = append(buf, '}')
	}
	buf = append(buf, "]}\n"...)
	return buf
}

// TimestampFormat is how record timestamps are written: RFC 3339, UTC,
// milliseconds, as Kafka timestamps carry.
const TimestampFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTimestamp renders t in TimestampFormat.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(TimestampFormat) }

func appendBytesField(buf []byte, name string, b []byte) []byte {
	buf = append(buf, ',', '"')
	buf = append(buf, name...)
	switch {
	case b == nil:
		buf = append(buf, `":null`...)
	case utf8.Valid(b):
		buf = append(buf, '"', ':')
		buf = appendJSONBytes(buf, b)
	default:
		buf = append(buf, `_b64":"`...)
		buf = base64.StdEncoding.AppendEncode(buf, b)
		buf = append(buf, '"')
	}
	return buf
}

// AppendJSONString appends s as a terminal-safe JSON string.
func AppendJSONString(buf []byte, s string) []byte {
	return appendJSONBytes(buf, []byte(s))
}

const hexDigits = "0123456789abcdef"

// plainASCII[c] is true for ASCII bytes copied as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendTimestamp appends t in TimestampFormat without time.Format's
// general machinery: it runs once per record on the sink's hot path.
func appendTimestamp(buf []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	ms := t.Nanosecond() / 1e6
	if y < 0 || y > 9999 {
		return t.AppendFormat(buf, TimestampFormat)
	}
	return append(buf,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// appendJSONBytes appends valid UTF-8 b as a quoted JSON string.
func appendJSONBytes(buf []byte, b []byte) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(b); {
		c := b[i]
		if plainASCII[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, b[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if unsafeForTerminal(r) {
			buf = append(buf, b[start:i]...)
			buf = append(buf, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, b[start:]...)
	return append(buf, '"')
}

// unsafeForTerminal reports non-ASCII runes that must not reach a terminal
// raw: C1 controls, bidi embeddings/overrides/isolates, marks that reorder
// text, line and paragraph separators, and the BOM.
func unsafeForTerminal(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	case r == 0x2028 || r == 0x2029 || r == 0xfeff:
		return true
	}
	return false
}
