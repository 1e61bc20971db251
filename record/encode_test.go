package record

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestAppendJSON(t *testing.T) {
	ts := time.Date(2026, 11, 29, 10, 0, 0, 123e6, time.UTC)
	cases := []struct {
		name string
		msg  Record
		want string
	}{
		{"text", Record{Topic: "events", Partition: 0, Offset: 51, Timestamp: ts, Key: []byte("user-7"), Value: []byte(`{"seq":51}`),
			Headers: []*Header{{Key: []byte("source"), Value: []byte("web")}}},
			`{"topic":"events","partition":0,"offset":51,"timestamp":"2026-11-29T10:00:00.123Z","key":"user-7","value":"{\"seq\":51}","headers":[{"key":"source","value":"web"}]}` + "\n"},
		{"null key, binary value, null header", Record{Topic: "t", Partition: 2, Offset: 0, Timestamp: ts, Value: []byte{0xff, 0x00, 0x01},
			Headers: []*Header{{Key: []byte("h"), Value: nil}}},
			`{"topic":"t","partition":2,"offset":0,"timestamp":"2026-11-29T10:00:00.123Z","key":null,"value_b64":"/wAB","headers":[{"key":"h","value":null}]}` + "\n"},
		{"empty is not null", Record{Topic: "t", Timestamp: ts, Key: []byte{}, Value: []byte{}},
			`{"topic":"t","partition":0,"offset":0,"timestamp":"2026-11-29T10:00:00.123Z","key":"","value":"","headers":[]}` + "\n"},
		{"hostile text escaped", Record{Topic: "t", Timestamp: ts, Value: []byte("a\x1b[2J\x07\u202e\u0085\x7fb")},
			`{"topic":"t","partition":0,"offset":0,"timestamp":"2026-11-29T10:00:00.123Z","key":null,"value":"a\u001b[2J\u0007\u202e\u0085\u007fb","headers":[]}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(AppendJSON(nil, &c.msg))
			if got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestBinaryHeaderKeyIsBase64: a header key that is not UTF-8 is written
// as base64, never raw, which would make the line invalid UTF-8 and let a
// raw C1 byte through. It follows the key/value rule of docs/design.md §4.
func TestBinaryHeaderKeyIsBase64(t *testing.T) {
	m := &Record{Topic: "t", Timestamp: time.UnixMilli(0), Value: []byte("v"),
		Headers: []*Header{{Key: []byte{0xff, 0xfe, 'a'}, Value: []byte("x")}, {Key: []byte("\x1b]0;\u0085"), Value: nil}, {Key: []byte{0x9b}, Value: []byte{0x9b}}}}
	want := `{"topic":"t","partition":0,"offset":0,"timestamp":"1970-01-01T00:00:00.000Z","key":null,"value":"v","headers":[` +
		`{"key_b64":"//5h","value":"x"},{"key":"\u001b]0;\u0085","value":null},{"key_b64":"mw==","value_b64":"mw=="}]}` + "\n"
	var enc JSONEncoder
	for name, got := range map[string][]byte{"AppendJSON": AppendJSON(nil, m), "JSONEncoder": enc.Append(nil, m)} {
		if string(got) != want {
			t.Errorf("%s:\ngot  %s\nwant %s", name, got, want)
		}
		if !utf8.Valid(got) || !json.Valid(got) {
			t.Errorf("%s: not valid UTF-8 JSON: %q", name, got)
		}
	}
}

// A topic name that is not UTF-8 (no broker accepts one, but a hostile
// one could send it) still makes a valid line.
func TestTopicNotUTF8StillValidJSON(t *testing.T) {
	m := &Record{Topic: "t\xff\xc2", Timestamp: time.UnixMilli(0)}
	got := AppendJSON(nil, m)
	var dec struct{ Topic string }
	if !utf8.Valid(got) || json.Unmarshal(got, &dec) != nil || dec.Topic != "t\ufffd" {
		t.Fatalf("got %q", got)
	}
}

// FuzzAppendJSON checks the line is valid JSON that decodes back to
// the same bytes and never carries a raw control or bidi character.
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte("user-7"), []byte(`{"seq":1}`), false, []byte("source"), []byte("web"))
	f.Add([]byte{0xff}, []byte("\x1b]52;c;aGk=\x07\u202e"), true, []byte{0xff, 0xfe, 'a'}, []byte{0xc2, 0x9b})
	f.Add([]byte{}, []byte{}, false, []byte{}, []byte(nil))
	f.Add([]byte("tag\U000e0041"), []byte("zwj \u200d \ufe0f"), false, []byte("h"), []byte("v"))
	f.Fuzz(func(t *testing.T, key, value []byte, nullKey bool, hkey, hvalue []byte) {
		if nullKey {
			key = nil
		}
		m := &Record{Topic: "t", Key: key, Value: value, Timestamp: time.UnixMilli(0),
			Headers: []*Header{{Key: hkey, Value: hvalue}, {Key: value, Value: key}}}
		line := AppendJSON(nil, m)
		if !utf8.Valid(line) {
			t.Fatalf("invalid UTF-8 %q", line)
		}
		for _, r := range string(line[:len(line)-1]) {
			if UnsafeRune(r) {
				t.Fatalf("raw %U in %q", r, line)
			}
		}
		type field struct {
			Key      *string `json:"key"`
			KeyB64   *string `json:"key_b64"`
			Value    *string `json:"value"`
			ValueB64 *string `json:"value_b64"`
		}
		var got struct {
			field
			Headers []field `json:"headers"`
		}
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("invalid JSON %q: %v", line, err)
		}
		check := func(name string, s, b64 *string, want []byte) {
			switch {
			case want == nil:
				if s != nil || b64 != nil {
					t.Fatalf("%s: want null", name)
				}
			case b64 != nil:
				dec, err := base64.StdEncoding.DecodeString(*b64)
				if err != nil || string(dec) != string(want) {
					t.Fatalf("%s_b64 round trip: %q vs %q", name, dec, want)
				}
			case s != nil:
				if *s != string(want) || strings.ContainsRune(*s, 0xfffd) && !strings.ContainsRune(string(want), 0xfffd) {
					t.Fatalf("%s round trip: %q vs %q", name, *s, want)
				}
			default:
				t.Fatalf("%s missing", name)
			}
		}
		check("key", got.Key, got.KeyB64, key)
		check("value", got.Value, got.ValueB64, value)
		if len(got.Headers) != 2 {
			t.Fatalf("%d headers in %q", len(got.Headers), line)
		}
		check("header key", got.Headers[0].Key, got.Headers[0].KeyB64, hkey)
		check("header value", got.Headers[0].Value, got.Headers[0].ValueB64, hvalue)
		check("header key", got.Headers[1].Key, got.Headers[1].KeyB64, value)
		check("header value", got.Headers[1].Value, got.Headers[1].ValueB64, key)
		var enc JSONEncoder
		if again := enc.Append(nil, m); string(again) != string(line) {
			t.Fatalf("JSONEncoder %q, AppendJSON %q", again, line)
		}
	})
}

func TestAppendTimestampMatchesFormat(t *testing.T) {
	for _, ts := range []time.Time{time.UnixMilli(0), time.UnixMilli(1764410400123), time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.FixedZone("x", 3600)), time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if got, want := string(appendTimestamp(nil, ts)), ts.UTC().Format(TimestampFormat); got != want {
			t.Errorf("%v: got %s want %s", ts, got, want)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v := make([]byte, 200)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	m := &Record{Topic: "events", Partition: 1, Offset: 123456, Timestamp: time.Now(), Key: []byte("user-42"), Value: v,
		Headers: []*Header{{Key: []byte("source"), Value: []byte("web")}}}
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = AppendJSON(buf[:0], m)
	}
}

// jsonValuedRecord is a record whose 200-byte value is JSON text, and
// that value.
func jsonValuedRecord() (*Record, []byte) {
	v := []byte(`{"seq":123456,"user":"u-42","payload":"`)
	for len(v) < 198 {
		v = append(v, "0123456789abcdef"[len(v)%16])
	}
	v = append(v, `"}`...)
	m := &Record{Topic: "events", Partition: 1, Offset: 123456, Timestamp: time.Now(), Key: []byte("user-42"), Value: v}
	return m, v
}

// BenchmarkAppendJSONJSONValue is a record whose value is JSON text,
// as most are: quotes to escape between long plain runs.
func BenchmarkAppendJSONJSONValue(b *testing.B) {
	m, v := jsonValuedRecord()
	b.SetBytes(int64(len(v)))
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = AppendJSON(buf[:0], m)
	}
}

// TestPlainPrefixMatchesTable checks the eight-bytes-at-a-time scan
// against the byte table for every byte value at every position of a word.
func TestPlainPrefixMatchesTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 19; pos++ {
			b := []byte(strings.Repeat("a", 19))
			b[pos] = byte(c)
			want := 19
			if !plainASCII[c] {
				want = pos
			}
			if got := plainPrefix(b); got != want {
				t.Fatalf("byte %#x at %d: plainPrefix %d, want %d", c, pos, got, want)
			}
		}
	}
}

// TestJSONEncoderMatchesAppendJSON checks the sink's encoder,
// which remembers the last topic and timestamp second, against the
// stateless one over topic and second changes.
func TestJSONEncoderMatchesAppendJSON(t *testing.T) {
	var a JSONEncoder
	base := time.Date(2026, 11, 29, 10, 0, 59, 998e6, time.UTC)
	var got, want []byte
	for i, topic := range []string{"events", "events", "other\x1b", "events", "events"} {
		for j := 0; j < 4; j++ {
			ts := base.Add(time.Duration(i*4+j) * time.Millisecond)
			if j == 3 {
				ts = time.UnixMilli(-1500) // before 1970, and a negative second
			}
			m := &Record{Topic: topic, Partition: int32(i), Offset: int64(j), Timestamp: ts, Key: []byte("k"), Value: []byte(`{"v":1}`)}
			got = a.Append(got, m)
			want = AppendJSON(want, m)
		}
	}
	if string(got) != string(want) {
		t.Fatalf("appender:\n%s\nAppendJSON:\n%s", got, want)
	}
}

// BenchmarkJSONEncoder is the sink's encoder on the JSON-valued record.
func BenchmarkJSONEncoder(b *testing.B) {
	m, v := jsonValuedRecord()
	b.SetBytes(int64(len(v)))
	var a JSONEncoder
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = a.Append(buf[:0], m)
	}
}

// BenchmarkJSONEncoderValues compares the encoder on 200-byte text values
// and on 200-byte random binary values (compressed blobs, Avro,
// Protobuf), which are written as base64: a binary value is known
// to be binary at its first invalid byte, not after escaping all of it.
func BenchmarkJSONEncoderValues(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1024
	text := make([][]byte, n)
	binary := make([][]byte, n)
	for i := range n {
		t := make([]byte, 200)
		for j := range t {
			t[j] = 'a' + byte(rng.IntN(26))
		}
		text[i] = t
		bin := make([]byte, 200)
		for j := range bin {
			bin[j] = byte(rng.Uint32())
		}
		binary[i] = bin
	}
	for _, c := range []struct {
		name   string
		values [][]byte
	}{{"text", text}, {"binary", binary}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(200)
			var e JSONEncoder
			var buf []byte
			m := Record{Topic: "events", Partition: 1, Timestamp: time.UnixMilli(1764410400123), Key: []byte("user-42")}
			for i := 0; i < b.N; i++ {
				m.Offset, m.Value = int64(i), c.values[i%n]
				buf = e.Append(buf[:0], &m)
			}
		})
	}
}

// TestBinaryValueWithEscapesFirstIsBase64: a value whose bytes before the
// first invalid one needed escapes is still written whole as base64 (the
// early bail-out of appendJSONText drops what it escaped).
func TestBinaryValueWithEscapesFirstIsBase64(t *testing.T) {
	v := []byte("a\"\x01\u202e\xff tail")
	got := AppendJSON(nil, &Record{Topic: "t", Timestamp: time.UnixMilli(0), Value: v})
	want := `{"topic":"t","partition":0,"offset":0,"timestamp":"1970-01-01T00:00:00.000Z","key":null,"value_b64":"` +
		base64.StdEncoding.EncodeToString(v) + `","headers":[]}` + "\n"
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A record of message format v0 has no timestamp: its line says null, as
// kcat leaves ts out and Java prints NO_TIMESTAMP, not Go's zero time
// (the codec cross-check on Kafka 2.8 reads such records).
func TestNoTimestampIsNull(t *testing.T) {
	m := &Record{Topic: "t", Partition: 0, Offset: 3, Value: []byte("v")}
	want := `{"topic":"t","partition":0,"offset":3,"timestamp":null,"key":null,"value":"v","headers":[]}` + "\n"
	if got := string(AppendJSON(nil, m)); got != want {
		t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
	}
	var enc JSONEncoder
	if got := string(enc.Append(nil, m)); got != want {
		t.Errorf("JSONEncoder.Append\n got %s\nwant %s", got, want)
	}
	aborted := strings.Replace(want, `]}`, `],"aborted":true}`, 1)
	if got := string(enc.AppendAborted(nil, m)); got != aborted {
		t.Errorf("JSONEncoder.AppendAborted\n got %s\nwant %s", got, aborted)
	}
}

// TestBase64MatchesEncodingBase64: appendBase64 (segmentio/asm, with AVX2
// where the CPU has it) writes what encoding/base64 writes, for every
// length around its vector widths and for large values, appended after
// what the buffer holds and into spare capacity holding other bytes.
func TestBase64MatchesEncodingBase64(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	lengths := []int{1 << 20, 1<<20 + 1, 1<<20 + 2, 64<<10 + 7}
	for n := 0; n <= 600; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		prefix := []byte(`"value_b64":"`)
		buf := make([]byte, len(prefix), len(prefix)+n*2+8)
		copy(buf, prefix)
		spare := buf[len(buf):cap(buf)]
		for i := range spare {
			spare[i] = 0xff
		}
		got := appendBase64(buf, src)
		want := base64.StdEncoding.AppendEncode(append([]byte(nil), prefix...), src)
		if string(got) != string(want) {
			t.Fatalf("%d bytes: appendBase64 differs from encoding/base64", n)
		}
		if got := appendBase64(nil, src); string(got) != string(want[len(prefix):]) {
			t.Fatalf("%d bytes into nil: differs", n)
		}
	}
}

// TestTimestampPastYear9999: Kafka takes a timestamp past the year 9999,
// which RFC 3339 cannot write; "10000-01-01T00:00:00.000Z" would break
// every RFC 3339 parser reading the sink. Such a timestamp is null,
// with its milliseconds beside it; the last second of 9999 is still text.
func TestTimestampPastYear9999(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{253402300799999, `"timestamp":"9999-12-31T23:59:59.999Z","key"`},
		{253402300800000, `"timestamp":null,"timestamp_ms":253402300800000,"key"`},
		{1<<63 - 2, `"timestamp":null,"timestamp_ms":9223372036854775806,"key"`},
	} {
		m := &Record{Topic: "t", Offset: 1, Timestamp: time.UnixMilli(tc.ms)}
		var enc JSONEncoder
		for name, got := range map[string]string{"AppendJSON": string(AppendJSON(nil, m)), "JSONEncoder": string(enc.Append(nil, m))} {
			if !strings.Contains(got, tc.want) {
				t.Errorf("%s of %d ms: %s, want it to hold %s", name, tc.ms, got, tc.want)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Errorf("%s of %d ms: not JSON: %v", name, tc.ms, err)
			}
		}
	}
}
