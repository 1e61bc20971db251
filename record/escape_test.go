package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func TestEscapeLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "user-7", "user-7"},
		{"empty", "", ""},
		{"esc csi", "a\x1b[31mred", `a\x1b[31mred`},
		{"osc title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"osc 52 clipboard", "\x1b]52;c;ZXZpbA==\x1b\\", `\x1b]52;c;ZXZpbA==\x1b\\`},
		{"dcs", "\x1bP+q\x1b\\", `\x1bP+q\x1b\\`},
		{"c0", "\x00\x01\x08\x0b\x0c\x1f", `\x00\x01\x08\x0b\x0c\x1f`},
		{"del", "a\x7fb", `a\x7fb`},
		{"newline and cr", "a\nb\r\nc\rd", `a\nb\r\nc\rd`},
		{"c1 csi as utf-8", "x\u009b31my", `x\u009b31my`},
		{"c1 nel", "\u0085", `\u0085`},
		{"raw c1 byte is invalid utf-8", "\x9b31m", `\x9b31m`},
		{"invalid utf-8", "ok\xff\xfe", `ok\xff\xfe`},
		{"truncated rune", "a\xe2\x82", `a\xe2\x82`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"bidi marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"zero width", "a\u200bb\u200dc\ufeff", `a\u200bb\u200dc\ufeff`},
		{"tag chars", "\U000e0041", `\U000e0041`},
		{"line separator", "a\u2028b\u2029", `a\u2028b\u2029`},
		{"variation selector", "\u2764\ufe0f", `❤\ufe0f`},
		{"tab stops", "ab\tc\td", "ab      c       d"},
		{"tab at stop", "12345678\tx", "12345678        x"},
		{"wide runes kept", "日本語", "日本語"},
		{"accents kept", "café é", "café é"},
		{"replacement char kept", "\ufffd", "\ufffd"},
		{"backslash doubled", `a\nb\`, `a\\nb\\`},
		{"escaped ESC and its four characters differ", "\x1b" + `\x1b`, `\x1b\\x1b`},
		{"backslash before an escape", "\\\x1b", `\\\x1b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EscapeLine([]byte(tt.in), 0); got != tt.want {
				t.Errorf("EscapeLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscapeText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"lines kept", "a\nb", "a\nb"},
		{"crlf is a newline", "a\r\nb", "a\nb"},
		{"lone cr escaped", "a\rb", `a\rb`},
		{"tab stops restart per line", "abc\td\n\te", "abc     d\n        e"},
		{"esc in text", "x\n\x1b[2J", "x\n" + `\x1b[2J`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EscapeText([]byte(tt.in), 0); got != tt.want {
				t.Errorf("EscapeText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscapeLineLimitBoundsWork(t *testing.T) {
	huge := []byte(strings.Repeat("\x1b[31m日本", 1<<20)) // ~11 MiB
	got := EscapeLine(huge, 40)
	if w := ansi.StringWidth(got); w < 40 || w > 60 {
		t.Fatalf("width %d, want a little over 40: %q", w, got)
	}
	if strings.ContainsRune(got, 0x1b) {
		t.Fatalf("raw ESC in %q", got)
	}
}

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"events", "events"},
		{"ev\x1bents", `ev\x1bents`},
		{"scram: server refused: \x1b]0;PWNED\x07\x1b[2J", `scram: server refused: \x1b]0;PWNED\x07\x1b[2J`},
		{"clip \x1b]52;c;ZXZpbA==\x07", `clip \x1b]52;c;ZXZpbA==\x07`},
		{"host\u009b2Jname", `host\u009b2Jname`},
		{"a\tb", "a       b"},
		{"two\nlines", `two\nlines`},
		{"bad \xff utf-8", `bad \xff utf-8`},
		{"rtl \u202egnp.exe", `rtl \u202egnp.exe`},
		{"café", "café"},
		{`C:\tmp\x1b`, `C:\\tmp\\x1b`},
		{"esc \x1b or " + `\x1b`, `esc \x1b or \\x1b`},
	}
	for _, tt := range tests {
		got := String(tt.in)
		if got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapeBinary(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ab~", "ab~"},
		{"\x00\xff\x1b", `\x00\xff\x1b`},
		{`\x00`, `\\x00`},
		{"日", `\xe6\x97\xa5`},
	}
	for _, tt := range tests {
		if got := EscapeBinary([]byte(tt.in), 0); got != tt.want {
			t.Errorf("EscapeBinary(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUnsafeRune(t *testing.T) {
	for _, r := range []rune{0, 0x07, 0x1b, '\n', '\t', 0x7f, 0x80, 0x9b, 0x9f, 0x200b, 0x200d, 0x202a, 0x202e, 0x2066, 0x2069, 0x200e, 0x061c, 0x2028, 0x2029, 0xfeff, 0xfe0f, 0xe0041, 0x3164} {
		if !UnsafeRune(r) {
			t.Errorf("UnsafeRune(%U) = false", r)
		}
	}
	for _, r := range []rune{' ', 'a', '~', '\\', 0xa0, 0xe9, 0x65e5, 0xfffd, 0x1f600} {
		if UnsafeRune(r) {
			t.Errorf("UnsafeRune(%U) = true", r)
		}
	}
}

// checkSafe fails when s holds anything a terminal would interpret.
func checkSafe(t testing.TB, in []byte, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("escape of %q is not valid UTF-8: %q", in, s)
	}
	for _, r := range s {
		if r == '\n' {
			continue
		}
		if UnsafeRune(r) {
			t.Fatalf("escape of %q holds %U: %q", in, r, s)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31m", "\x1b]0;t\x07", "\u202e", "\xff", "a\tb\r\nc", "日本\ufe0f", "\u009b", `\x1b`, `a\\b\`} {
		f.Add([]byte(s), 0)
		f.Add([]byte(s), 5)
	}
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		limit %= 200
		line := EscapeLine(b, limit)
		checkSafe(t, b, line)
		if strings.ContainsRune(line, '\n') {
			t.Fatalf("EscapeLine(%q) has a newline: %q", b, line)
		}
		checkSafe(t, b, EscapeText(b, limit))
		if limit <= 0 {
			if s := String(string(b)); s != line {
				t.Fatalf("String(%q) = %q, EscapeLine gave %q; not the same rule", b, s, line)
			}
			// Every escape reads back to the input: distinct inputs
			// never look the same (tabs aside, which become spaces).
			if !bytes.ContainsRune(b, '\t') {
				if back, err := Unescape(line); err != nil || !bytes.Equal(back, b) {
					t.Fatalf("EscapeLine(%q) = %q reads back as %q (%v)", b, line, back, err)
				}
			}
			if back, err := Unescape(EscapeBinary(b, 0)); err != nil || !bytes.Equal(back, b) {
				t.Fatalf("EscapeBinary(%q) reads back as %q (%v)", b, back, err)
			}
		}
		if limit <= 0 && utf8.Valid(b) && isPlain(string(b)) && EscapeLine(b, 0) != string(b) {
			t.Fatalf("plain %q changed to %q", b, line)
		}
	})
}

func TestSafeJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{"{\n\t\"a\": 1\n}", "{\n\t\"a\": 1\n}"},
		{"{\"t\":\"ev\u009b2J\"}", `{"t":"ev\u009b2J"}`},
		{"{\"t\":\"a\u202eb\x7f\"}", `{"t":"a\u202eb\u007f"}`},
		{"{\"t\":\"tag\U000e0041\"}", `{"t":"tag\udb40\udc41"}`},
		{"{\"t\":\"caf\u00e9 \xff\"}", `{"t":"café \ufffd"}`},
	}
	for _, tt := range tests {
		got := string(SafeJSON([]byte(tt.in)))
		if got != tt.want {
			t.Errorf("SafeJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(AppendSafeJSON([]byte(`"line":`), tt.in)); got != `"line":`+tt.want {
			t.Errorf("AppendSafeJSON(%q) = %q, want %q after the line so far", tt.in, got, tt.want)
		}
	}
}

// FuzzSafeJSON checks that a document encoding/json wrote still decodes to
// the same value after SafeJSON, and holds no rune a terminal interprets.
func FuzzSafeJSON(f *testing.F) {
	for _, s := range []string{"", "events", "\x1b]52;c;aGk=\x07", "\u009b2J", "\u202e", "\xff", "\U000e0041", "a\x7fb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, err := json.Marshal(map[string]any{"s": s, "l": []string{s, "x"}})
		if err != nil {
			t.Fatal(err)
		}
		out := SafeJSON(in)
		for _, r := range string(out) {
			if UnsafeRune(r) {
				t.Fatalf("SafeJSON(%q) holds %U: %q", in, r, out)
			}
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("SafeJSON(%q) = %q is not JSON: %v", in, out, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("SafeJSON changed the value: %v, then %v", a, b)
		}
	})
}

func TestUnescape(t *testing.T) {
	good := []struct{ in, want string }{
		{`a\\b`, `a\b`},
		{`\n\r\t`, "\n\r\t"},
		{`\x1b\xff`, "\x1b\xff"},
		{`\u00e9\U0001f600`, "é😀"},
	}
	for _, tt := range good {
		if got, err := Unescape(tt.in); err != nil || string(got) != tt.want {
			t.Errorf("Unescape(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	bad := []struct{ in, want string }{
		{`ab\`, `a lone \ at the end: type \\ for a backslash`},
		{`ab\q`, `unknown escape \q at column 3: type \\ for a backslash`},
		{`\x1`, `\x at column 1 needs two hex digits`},
		{`\xzz`, `\x at column 1 needs two hex digits`},
		{`\u12`, `\u at column 1 needs 4 hex digits`},
		{`\U00110000`, `\U at column 1 needs 8 hex digits of a character`},
	}
	for _, tt := range bad {
		if _, err := Unescape(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("Unescape(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// CutMiddle keeps text of at most max bytes as it is, and cuts a longer
// one in its middle without splitting a rune, saying how many bytes went:
// what is kept and what is said to be cut add up to the text.
func TestCutMiddle(t *testing.T) {
	if got := CutMiddle("short", 10); got != "short" {
		t.Errorf("CutMiddle(short) = %q", got)
	}
	exact := strings.Repeat("x", 64)
	if got := CutMiddle(exact, 64); got != exact {
		t.Errorf("a text of max bytes was cut: %q", got)
	}
	for _, s := range []string{
		strings.Repeat("é", 500) + "end",
		"start" + strings.Repeat("日本", 300),
		strings.Repeat("a", 10_000),
	} {
		got := CutMiddle(s, 100)
		if again := CutMiddle(got, 100); again != got {
			t.Errorf("a text cut once was cut again: %q, then %q", got, again)
		}
		if !utf8.ValidString(got) || len(got) > 100+40 {
			t.Fatalf("CutMiddle of %d bytes = %q (%d bytes)", len(s), got, len(got))
		}
		head, rest, ok := strings.Cut(got, " …[")
		n, tail, ok2 := strings.Cut(rest, " bytes cut]… ")
		cut, err := strconv.Atoi(n)
		if !ok || !ok2 || err != nil || !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) || len(head)+cut+len(tail) != len(s) {
			t.Errorf("CutMiddle of %d bytes = %q: head %d + cut %q + tail %d", len(s), got, len(head), n, len(tail))
		}
	}
}
