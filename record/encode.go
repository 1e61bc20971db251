package record

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/segmentio/asm/base64"
)

// appendPosition opens a record's JSON object with its place, the fields
// both shapes (AppendJSON's and kcat -J's) start with:
// {"topic":…,"partition":…,"offset":….
func appendPosition(buf []byte, m *Record) []byte {
	buf = append(buf, `{"topic":`...)
	buf = AppendJSONString(buf, m.Topic)
	buf = append(buf, `,"partition":`...)
	buf = strconv.AppendInt(buf, int64(m.Partition), 10)
	buf = append(buf, `,"offset":`...)
	buf = strconv.AppendInt(buf, m.Offset, 10)
	return buf
}

// AppendJSON appends one record as a docs/design.md §4 JSON line (with the
// trailing newline) to buf and returns the extended buffer. It is lossless:
// keys, values, header keys and header values that are valid UTF-8 are
// JSON strings, others are base64 in a field suffixed _b64, and absent
// ones are null. The line is valid UTF-8 whatever the bytes (a topic name
// that is not UTF-8, which no Kafka broker accepts, gets U+FFFD). A record
// without a timestamp (message format v0) has "timestamp":null.
//
// Strings are escaped so the line is safe to print on a terminal: every
// rune UnsafeRune names (C0 and C1 controls, DEL, bidi overrides and
// isolates, format characters, line/paragraph separators) becomes a \uXXXX
// escape, which JSON readers decode back to the same bytes.
//
// It allocates nothing beyond growing buf; callers reuse buf across records.
func AppendJSON(buf []byte, m *Record) []byte {
	buf = appendPosition(buf, m)
	if m.Timestamp.IsZero() {
		return appendRecordRest(append(buf, `,"timestamp":null`...), m, false)
	}
	if afterRFC3339(m.Timestamp) {
		return appendRecordRest(appendLateTimestamp(buf, m.Timestamp), m, false)
	}
	buf = append(buf, `,"timestamp":"`...)
	buf = appendTimestamp(buf, m.Timestamp)
	return appendRecordRest(append(buf, '"'), m, false)
}

// JSONEncoder is AppendJSON for a run of records, with memory: the
// JSON of the last topic and the text of the last timestamp second, which
// consecutive records nearly always share. The zero value is ready; it is
// not safe for concurrent use.
type JSONEncoder struct {
	topic     string
	topicJSON []byte
	sec       int64
	secText   []byte // "2006-01-02T15:04:05." of sec; nil when none
}

// Append appends m exactly as AppendJSON does.
func (a *JSONEncoder) Append(buf []byte, m *Record) []byte {
	return a.append(buf, m, false)
}

// AppendAborted appends m, a record of an aborted transaction that a
// read_uncommitted reader delivered, as Append does with "aborted":true
// after its headers.
func (a *JSONEncoder) AppendAborted(buf []byte, m *Record) []byte {
	return a.append(buf, m, true)
}

func (a *JSONEncoder) append(buf []byte, m *Record, aborted bool) []byte {
	if a.topicJSON == nil || m.Topic != a.topic {
		a.topic = m.Topic
		a.topicJSON = AppendJSONString(append(a.topicJSON[:0], `{"topic":`...), m.Topic)
		a.topicJSON = append(a.topicJSON, `,"partition":`...)
	}
	buf = append(buf, a.topicJSON...)
	buf = strconv.AppendInt(buf, int64(m.Partition), 10)
	buf = append(buf, `,"offset":`...)
	buf = strconv.AppendInt(buf, m.Offset, 10)
	t := m.Timestamp
	if t.IsZero() {
		return appendRecordRest(append(buf, `,"timestamp":null`...), m, aborted)
	}
	if afterRFC3339(t) {
		return appendRecordRest(appendLateTimestamp(buf, t), m, aborted)
	}
	buf = append(buf, `,"timestamp":"`...)
	if sec := t.Unix(); a.secText == nil || sec != a.sec {
		full := appendTimestamp(a.secText[:0], t)
		for i := len(full) - 1; i >= 0; i-- {
			if full[i] == '.' {
				a.secText, a.sec = full[:i+1], sec
				break
			}
		}
	}
	ms := t.Nanosecond() / 1e6
	buf = append(buf, a.secText...)
	buf = append(buf, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
	return appendRecordRest(buf, m, aborted)
}

// appendRecordRest appends what follows the timestamp: key, value,
// headers, the aborted mark and the end of the line.
func appendRecordRest(buf []byte, m *Record, aborted bool) []byte {
	buf = append(buf, ',')
	buf = appendBytesField(buf, "key", m.Key)
	buf = append(buf, ',')
	buf = appendBytesField(buf, "value", m.Value)
	buf = append(buf, `,"headers":[`...)
	for i, h := range m.Headers {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '{')
		buf = appendBytesField(buf, "key", h.Key)
		buf = append(buf, ',')
		buf = appendBytesField(buf, "value", h.Value)
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	if aborted {
		buf = append(buf, `,"aborted":true`...)
	}
	return append(buf, "}\n"...)
}

// TimestampFormat is how record timestamps are written: RFC 3339, UTC,
// milliseconds, as Kafka timestamps carry.
const TimestampFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTimestamp renders t in TimestampFormat.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(TimestampFormat) }

// appendBytesField appends "name":"text", "name_b64":"base64" or
// "name":null for b (docs/design.md §4).
func appendBytesField(buf []byte, name string, b []byte) []byte {
	buf = append(buf, '"')
	buf = append(buf, name...)
	if b == nil {
		return append(buf, `":null`...)
	}
	// Most keys and values are plain printable ASCII, which is valid
	// UTF-8 and needs no escape: one pass, one copy.
	if plainPrefix(b) == len(b) {
		buf = append(buf, '"', ':', '"')
		buf = append(buf, b...)
		return append(buf, '"')
	}
	mark := len(buf)
	if out, ok := appendJSONText(append(buf, '"', ':'), b); ok {
		return out
	}
	buf = buf[:mark]
	buf = append(buf, `_b64":"`...)
	buf = appendBase64(buf, b)
	return append(buf, '"')
}

// appendBase64 appends b in standard, padded base64: every key, value
// and header that is not UTF-8 (Avro, Protobuf, compressed blobs) is
// written so. segmentio/asm's encoder writes exactly what encoding/base64
// does, with AVX2 on amd64 and NEON on arm64 where the CPU has them
// (measured on this project's machine: 5.8× encoding/base64 on 200 B, 10×
// on 1 KiB, 18× on 1 MiB); elsewhere it is encoding/base64.
func appendBase64(buf, b []byte) []byte {
	n := base64.StdEncoding.EncodedLen(len(b))
	buf = slices.Grow(buf, n)
	base64.StdEncoding.Encode(buf[len(buf):len(buf)+n], b)
	return buf[:len(buf)+n]
}

// AppendJSONString appends s as a terminal-safe JSON string. Bytes of s
// that are not UTF-8 become U+FFFD, so the result is always valid JSON.
func AppendJSONString(buf []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return appendJSONBytes(buf, []byte(s))
}

// plainASCII[c] is true for ASCII bytes copied as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// lastRFC3339 is the first second RFC 3339 cannot write: year 10000.
const lastRFC3339 = 253402300800

// afterRFC3339 reports whether t lies past year 9999, which RFC 3339's
// four-digit years cannot write. Kafka takes such timestamps (a producer
// that sends microseconds as milliseconds, with
// message.timestamp.after.max.ms raised).
func afterRFC3339(t time.Time) bool { return t.Unix() >= lastRFC3339 }

// appendLateTimestamp writes a timestamp past year 9999 as null, with
// its milliseconds since the epoch beside it, so that every "timestamp"
// stays RFC 3339 or null and nothing is lost.
func appendLateTimestamp(buf []byte, t time.Time) []byte {
	buf = append(buf, `,"timestamp":null,"timestamp_ms":`...)
	return strconv.AppendInt(buf, t.UnixMilli(), 10)
}

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

// Eight bytes at a time: word has a byte below 0x20, above 0x7e, or equal
// to '"' or '\\' (the bit tricks of "Bit Twiddling Hacks": haszero,
// hasless, hasmore; exact for these constants).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// notPlain flags (high bit) the bytes of a little-endian word that are not
// plain. Borrows and carries only move flags to later bytes, so the first
// flagged byte is always a real one.
func notPlain(w uint64) uint64 {
	return jsonSpecial(w) | ((w+ones*(127-0x7e))|w)&highs
}

// jsonSpecial flags (high bit) the bytes of a little-endian word that a
// JSON string cannot hold as they are: below 0x20, '"' and '\\'. As in
// notPlain, the first flagged byte is always a real one.
func jsonSpecial(w uint64) uint64 {
	control := (w - ones*0x20) &^ w & highs
	quote := w ^ ones*'"'
	backslash := w ^ ones*'\\'
	return control | ((quote - ones) &^ quote & highs) | ((backslash - ones) &^ backslash & highs)
}

// JSONStringRun is the length of the run of bytes at the start of s that
// a JSON string holds as they are: up to the first quote, backslash or
// control byte (bytes above 0x7f are in the run). Decoders of JSON text
// read strings with it eight bytes at a time.
func JSONStringRun(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if m := jsonSpecial(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// plainPrefix returns how many leading bytes of b are printable ASCII
// that a JSON string carries as they are.
func plainPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := notPlain(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && plainASCII[b[i]] {
		i++
	}
	return i
}

// appendJSONBytes appends valid UTF-8 b as a quoted JSON string.
func appendJSONBytes(buf []byte, b []byte) []byte {
	buf, _ = appendJSONText(buf, b)
	return buf
}

// appendJSONText appends b as a quoted JSON string and reports whether b
// is valid UTF-8. It stops at the first byte that is not (what it appended
// is then not valid JSON text, and the caller truncates it): binary values
// are found out in their first bytes, not escaped in full first.
func appendJSONText(buf []byte, b []byte) ([]byte, bool) {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(b); {
		i += plainPrefix(b[i:])
		if i >= len(b) {
			break
		}
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
				buf = append(buf, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return buf, false
		}
		if UnsafeRune(r) {
			buf = append(buf, b[start:i]...)
			buf = AppendJSONRune(buf, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, b[start:]...)
	return append(buf, '"'), true
}
