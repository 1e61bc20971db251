package offsets_test

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

func ExampleKcatCommands() {
	next := map[offsets.Partition]int64{{Topic: "events", Partition: 1}: 120, {Topic: "events", Partition: 0}: 80}
	for _, line := range offsets.KcatCommands([]string{"k1:9092", "k2:9092"}, next) {
		fmt.Println(line)
	}
	// Output:
	// kcat -C -b k1:9092,k2:9092 -t events -p 0 -o 80
	// kcat -C -b k1:9092,k2:9092 -t events -p 1 -o 120
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:9092": "localhost:9092",
		"events.v1_x-2":  "events.v1_x-2",
		"":               "''",
		"a b":            "'a b'",
		"it's":           `'it'\''s'`,
		"$(rm -rf /)":    "'$(rm -rf /)'",
		"x;y":            "'x;y'",
	} {
		if got := offsets.ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestShellQuoteTerminalSafe: a name with terminal controls is written in
// ANSI-C quoting ($'...'), which holds no raw control byte and which bash
// reads back as exactly the same bytes.
func TestShellQuoteTerminalSafe(t *testing.T) {
	for _, in := range []string{
		"ev\x1b]0;PWNED\x07nts",
		"\x1b]52;c;cHduZWQ=\x07",
		"c1\u009b2J",
		"rtl\u202eevil",
		"bad\xffutf8",
		"tab\tnl\n'q'\\",
		"café and \x1b",
	} {
		got := offsets.ShellQuote(in)
		if !utf8.ValidString(got) {
			t.Fatalf("ShellQuote(%q) = %q is not valid UTF-8", in, got)
		}
		for i, r := range got {
			if record.UnsafeRune(r) {
				t.Fatalf("ShellQuote(%q) = %q holds %U at %d", in, got, r, i)
			}
		}
		if _, err := exec.LookPath("bash"); err != nil {
			continue
		}
		out, err := exec.Command("bash", "-c", "printf %s "+got).Output()
		if err != nil {
			t.Fatalf("bash on %s: %v", got, err)
		}
		if string(out) != in {
			t.Errorf("bash reads %s back as %q, want %q", got, out, in)
		}
	}
}

// unquoteShell reads back one word ShellQuote wrote: bare, single-quoted
// (each quote inside closed, escaped and reopened), or ANSI-C quoted with
// \xNN, \' and \\. ok is false for anything else.
func unquoteShell(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "$'") && strings.HasSuffix(s, "'") && len(s) >= 3:
		var b strings.Builder
		in := s[2 : len(s)-1]
		for i := 0; i < len(in); i++ {
			if in[i] != '\\' {
				if in[i] == '\'' {
					return "", false
				}
				b.WriteByte(in[i])
				continue
			}
			if i+1 >= len(in) {
				return "", false
			}
			switch in[i+1] {
			case '\\', '\'':
				b.WriteByte(in[i+1])
				i++
			case 'x':
				if i+4 > len(in) {
					return "", false
				}
				v, err := strconv.ParseUint(in[i+2:i+4], 16, 8)
				if err != nil {
					return "", false
				}
				b.WriteByte(byte(v))
				i += 3
			default:
				return "", false
			}
		}
		return b.String(), true
	case strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2:
		return strings.ReplaceAll(s[1:len(s)-1], `'\''`, "'"), true
	}
	return s, !strings.ContainsAny(s, " '\"\\$`;&|<>()*?[]#~\t\n")
}

// FuzzShellQuote checks the words of `offsets export --format kcat`: any
// topic or broker name comes back exactly, and the word holds nothing a
// terminal acts on.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"events", "", "it's", "ev\x1b]0;x\x07", "\u009b2J", "\u202e", "\xff", "a b", `\`, "$(rm -rf /)", "é'\x1b\\", "\ufffd", "a\ufffd\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := offsets.ShellQuote(s)
		// A name may hold U+FFFD itself, which is printable; what must
		// not pass is a byte that is not UTF-8.
		if !utf8.ValidString(q) {
			t.Fatalf("ShellQuote(%q) = %q is not valid UTF-8", s, q)
		}
		for _, r := range q {
			if record.UnsafeRune(r) {
				t.Fatalf("ShellQuote(%q) = %q holds %U", s, q, r)
			}
		}
		back, ok := unquoteShell(q)
		if !ok || back != s {
			t.Fatalf("ShellQuote(%q) = %q reads back as %q (ok %v)", s, q, back, ok)
		}
	})
}
