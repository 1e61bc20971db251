package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/record"
)

// FuzzOneLine checks the stderr line kbatch prints for any error text (a
// broker's message, a host or topic name, a file name): one line, and not a
// rune a terminal would act on.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{
		"scram: server refused: \x1b]0;PWNED\x07\x1b[2J", "dial tcp: lookup evil\u009b2J: no such host",
		"a\r\nb\nc\r", "\u202etxt.exe", "\xff\xfe", "topic \x1b]52;c;aGk=\x07 does not exist", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := oneLine(errors.New(s))
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("oneLine(%q) = %q is not one line", s, line)
		}
		for _, r := range line {
			if record.UnsafeRune(r) {
				t.Fatalf("oneLine(%q) = %q holds %U", s, line, r)
			}
		}
	})
}
