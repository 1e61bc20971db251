package tui

import (
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
		{"osc 52 clipboard", "\x1b]52;c;ZXZpbA==\x1b\\", `\x1b]52;c;ZXZpbA==\x1b\`},
		{"dcs", "\x1bP+q\x1b\\", `\x1bP+q\x1b\`},
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
		{"backslash kept", `a\nb`, `a\nb`},
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

func TestEscapeString(t *testing.T) {
	if got := EscapeString("events"); got != "events" {
		t.Fatal(got)
	}
	if got := EscapeString("ev\x1bents"); got != `ev\x1bents` {
		t.Fatal(got)
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
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			t.Fatalf("escape of %q holds %U: %q", in, r, s)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31m", "\x1b]0;t\x07", "\u202e", "\xff", "a\tb\r\nc", "日本\ufe0f", "\u009b"} {
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
		if limit <= 0 && utf8.Valid(b) && isPlain(string(b)) && EscapeLine(b, 0) != string(b) {
			t.Fatalf("plain %q changed to %q", b, line)
		}
	})
}
