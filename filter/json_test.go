package filter

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fromStdlib is encoding/json's reading of s in parseJSON's number types.
func fromStdlib(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = fromStdlib(e)
		}
	case []any:
		for i, e := range v {
			v[i] = fromStdlib(e)
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	}
	return v
}

func checkAgainstStdlib(t *testing.T, s string) {
	t.Helper()
	got, err := parseJSON(s)
	var want any
	var stdErr error
	if !json.Valid([]byte(s)) {
		stdErr = errNotJSON
	} else {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		stdErr = d.Decode(&want)
	}
	if (err == nil) != (stdErr == nil) {
		if err == nil && isInf(got) {
			return // 1e999: encoding/json refuses it, the filter reads +Inf
		}
		t.Fatalf("%q: parseJSON error %v, encoding/json error %v", s, err, stdErr)
	}
	if err != nil {
		return
	}
	// A projection builds fewer fields but accepts and refuses the same
	// text: a field it skips must still be JSON.
	if _, perr := parseProjected(s, &projection{fields: []string{"a"}}, nil); (perr == nil) != (err == nil) {
		t.Fatalf("%q: projected parse error %v, whole parse error %v", s, perr, err)
	}
	want = fromStdlib(want)
	if !reflect.DeepEqual(got, want) && validUTF8Strings(s) {
		t.Fatalf("%q: parseJSON %#v, encoding/json %#v", s, got, want)
	}
}

func isInf(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsInf(f, 0)
}

func TestParseJSON(t *testing.T) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, ` 12 `, `-0`, `1.5e3`, `9223372036854775807`,
		`9223372036854775808`, `"\u00e9\ud83d\ude00\n\"\\\/"`, `"\ud83d"`, `[]`, `{}`, `{"a":1,"a":2}`,
		`{"a":1,"b":[1,}`, `{"b":"\q","a":1}`, `{"b":{"c":01},"a":1}`, `{"b":"\u12g4"}`, `{"b":tru}`,
		`01`, `1.`, `.5`, `-`, `tru`, `{"a"}`, `[1,]`, `{"a":1,}`, `"a` + "\n" + `"`, `[1] x`, `"\x"`, `"\u12"`,
	} {
		checkAgainstStdlib(t, s)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",null,true]}`, `"\ud83d\ude00"`, `-1e-3`, `[[[]]]`} {
		f.Add(s)
	}
	f.Fuzz(checkAgainstStdlib)
}

// validUTF8Strings: encoding/json replaces bytes that are not UTF-8 in
// strings, parseJSON keeps them; such inputs are compared by error only.
func validUTF8Strings(s string) bool {
	return utf8.ValidString(s) && !strings.Contains(s, `\ud`) && !strings.Contains(s, `\uD`)
}

// plainLen, eight bytes at a time, stops where a byte-by-byte reading
// stops: at each quote, backslash and control byte, wherever it falls in
// a word, and after bytes of any value (UTF-8, 0x7f, 0xff).
func TestPlainLen(t *testing.T) {
	fills := []byte{'a', ' ', 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0x21, 0x23, 0x5b, 0x5d, 0x1f + 0x80}
	for _, stop := range []byte{'"', '\\', 0, 0x1f, '\n', 0x01} {
		for _, fill := range fills {
			for n := range 20 {
				for at := 0; at <= n; at++ {
					b := []byte(strings.Repeat(string(fill), n))
					if at < n {
						b[at] = stop
						if at+1 < n {
							b[at+1] = '"' // a second stop after the first
						}
					}
					if got, want := plainLen(string(b)), oneByOne(string(b)); got != want {
						t.Fatalf("plainLen(%q) = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
	for _, s := range []string{"", "é", "customer-with-a-longer-name", "a note of some length\" for", strings.Repeat("\u00e9x", 9) + "\\n"} {
		if got, want := plainLen(s), oneByOne(s); got != want {
			t.Fatalf("plainLen(%q) = %d, want %d", s, got, want)
		}
	}
}

// oneByOne is plainLen a byte at a time.
func oneByOne(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return len(s)
}

func FuzzPlainLen(f *testing.F) {
	f.Add("customer-with-a-longer-name\"")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainLen(s), oneByOne(s); got != want {
			t.Fatalf("plainLen(%q) = %d, want %d", s, got, want)
		}
	})
}
