package consumer

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/record"
)

func TestAppendRecordJSON(t *testing.T) {
	ts := time.Date(2026, 11, 29, 10, 0, 0, 123e6, time.UTC)
	cases := []struct {
		name string
		msg  sarama.ConsumerMessage
		want string
	}{
		{"text", sarama.ConsumerMessage{Topic: "events", Partition: 0, Offset: 51, Timestamp: ts, Key: []byte("user-7"), Value: []byte(`{"seq":51}`),
			Headers: []*sarama.RecordHeader{{Key: []byte("source"), Value: []byte("web")}}},
			`{"topic":"events","partition":0,"offset":51,"timestamp":"2026-11-29T10:00:00.123Z","key":"user-7","value":"{\"seq\":51}","headers":[{"key":"source","value":"web"}]}` + "\n"},
		{"null key, binary value, null header", sarama.ConsumerMessage{Topic: "t", Partition: 2, Offset: 0, Timestamp: ts, Value: []byte{0xff, 0x00, 0x01},
			Headers: []*sarama.RecordHeader{{Key: []byte("h"), Value: nil}}},
			`{"topic":"t","partition":2,"offset":0,"timestamp":"2026-11-29T10:00:00.123Z","key":null,"value_b64":"/wAB","headers":[{"key":"h","value":null}]}` + "\n"},
		{"empty is not null", sarama.ConsumerMessage{Topic: "t", Timestamp: ts, Key: []byte{}, Value: []byte{}},
			`{"topic":"t","partition":0,"offset":0,"timestamp":"2026-11-29T10:00:00.123Z","key":"","value":"","headers":[]}` + "\n"},
		{"hostile text escaped", sarama.ConsumerMessage{Topic: "t", Timestamp: ts, Value: []byte("a\x1b[2J\x07\u202e\u0085\x7fb")},
			`{"topic":"t","partition":0,"offset":0,"timestamp":"2026-11-29T10:00:00.123Z","key":null,"value":"a\u001b[2J\u0007\u202e\u0085\u007fb","headers":[]}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(AppendRecordJSON(nil, &c.msg))
			if got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestBinaryHeaderKeyIsBase64 is issue 13's bug 6: a header key that is
// not UTF-8 was written raw, making the line invalid UTF-8 and letting a
// raw C1 byte through. It follows the key/value rule of DESIGN §4.
func TestBinaryHeaderKeyIsBase64(t *testing.T) {
	m := &sarama.ConsumerMessage{Topic: "t", Timestamp: time.UnixMilli(0), Value: []byte("v"),
		Headers: []*sarama.RecordHeader{{Key: []byte{0xff, 0xfe, 'a'}, Value: []byte("x")}, {Key: []byte("\x1b]0;\u0085"), Value: nil}, {Key: []byte{0x9b}, Value: []byte{0x9b}}}}
	want := `{"topic":"t","partition":0,"offset":0,"timestamp":"1970-01-01T00:00:00.000Z","key":null,"value":"v","headers":[` +
		`{"key_b64":"//5h","value":"x"},{"key":"\u001b]0;\u0085","value":null},{"key_b64":"mw==","value_b64":"mw=="}]}` + "\n"
	var enc RecordEncoder
	for name, got := range map[string][]byte{"AppendRecordJSON": AppendRecordJSON(nil, m), "RecordEncoder": enc.Append(nil, m)} {
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
	m := &sarama.ConsumerMessage{Topic: "t\xff\xc2", Timestamp: time.UnixMilli(0)}
	got := AppendRecordJSON(nil, m)
	var dec struct{ Topic string }
	if !utf8.Valid(got) || json.Unmarshal(got, &dec) != nil || dec.Topic != "t\ufffd" {
		t.Fatalf("got %q", got)
	}
}

// FuzzAppendRecordJSON checks the line is valid JSON that decodes back to
// the same bytes and never carries a raw control or bidi character.
func FuzzAppendRecordJSON(f *testing.F) {
	f.Add([]byte("user-7"), []byte(`{"seq":1}`), false, []byte("source"), []byte("web"))
	f.Add([]byte{0xff}, []byte("\x1b]52;c;aGk=\x07\u202e"), true, []byte{0xff, 0xfe, 'a'}, []byte{0xc2, 0x9b})
	f.Add([]byte{}, []byte{}, false, []byte{}, []byte(nil))
	f.Add([]byte("tag\U000e0041"), []byte("zwj \u200d \ufe0f"), false, []byte("h"), []byte("v"))
	f.Fuzz(func(t *testing.T, key, value []byte, nullKey bool, hkey, hvalue []byte) {
		if nullKey {
			key = nil
		}
		m := &sarama.ConsumerMessage{Topic: "t", Key: key, Value: value, Timestamp: time.UnixMilli(0),
			Headers: []*sarama.RecordHeader{{Key: hkey, Value: hvalue}, {Key: value, Value: key}}}
		line := AppendRecordJSON(nil, m)
		if !utf8.Valid(line) {
			t.Fatalf("invalid UTF-8 %q", line)
		}
		for _, r := range string(line[:len(line)-1]) {
			if record.UnsafeRune(r) {
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
		var enc RecordEncoder
		if again := enc.Append(nil, m); string(again) != string(line) {
			t.Fatalf("RecordEncoder %q, AppendRecordJSON %q", again, line)
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

func BenchmarkAppendRecordJSON(b *testing.B) {
	v := make([]byte, 200)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	m := &sarama.ConsumerMessage{Topic: "events", Partition: 1, Offset: 123456, Timestamp: time.Now(), Key: []byte("user-42"), Value: v,
		Headers: []*sarama.RecordHeader{{Key: []byte("source"), Value: []byte("web")}}}
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = AppendRecordJSON(buf[:0], m)
	}
}

// BenchmarkAppendRecordJSONJSONValue is a record whose value is JSON text,
// as most are: quotes to escape between long plain runs.
func BenchmarkAppendRecordJSONJSONValue(b *testing.B) {
	v := []byte(`{"seq":123456,"user":"u-42","payload":"`)
	for len(v) < 198 {
		v = append(v, "0123456789abcdef"[len(v)%16])
	}
	v = append(v, `"}`...)
	m := &sarama.ConsumerMessage{Topic: "events", Partition: 1, Offset: 123456, Timestamp: time.Now(), Key: []byte("user-42"), Value: v}
	b.SetBytes(int64(len(v)))
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = AppendRecordJSON(buf[:0], m)
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

// TestRecordEncoderMatchesAppendRecordJSON checks the sink's encoder,
// which remembers the last topic and timestamp second, against the
// stateless one over topic and second changes.
func TestRecordEncoderMatchesAppendRecordJSON(t *testing.T) {
	var a RecordEncoder
	base := time.Date(2026, 11, 29, 10, 0, 59, 998e6, time.UTC)
	var got, want []byte
	for i, topic := range []string{"events", "events", "other\x1b", "events", "events"} {
		for j := 0; j < 4; j++ {
			ts := base.Add(time.Duration(i*4+j) * time.Millisecond)
			if j == 3 {
				ts = time.UnixMilli(-1500) // before 1970, and a negative second
			}
			m := &sarama.ConsumerMessage{Topic: topic, Partition: int32(i), Offset: int64(j), Timestamp: ts, Key: []byte("k"), Value: []byte(`{"v":1}`)}
			got = a.Append(got, m)
			want = AppendRecordJSON(want, m)
		}
	}
	if string(got) != string(want) {
		t.Fatalf("appender:\n%s\nAppendRecordJSON:\n%s", got, want)
	}
}

// BenchmarkRecordEncoder is the sink's encoder on the JSON-valued record.
func BenchmarkRecordEncoder(b *testing.B) {
	v := []byte(`{"seq":123456,"user":"u-42","payload":"`)
	for len(v) < 198 {
		v = append(v, "0123456789abcdef"[len(v)%16])
	}
	v = append(v, `"}`...)
	m := &sarama.ConsumerMessage{Topic: "events", Partition: 1, Offset: 123456, Timestamp: time.Now(), Key: []byte("user-42"), Value: v}
	b.SetBytes(int64(len(v)))
	var a RecordEncoder
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = a.Append(buf[:0], m)
	}
}
