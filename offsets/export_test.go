package offsets_test

import (
	"fmt"
	"os/exec"
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
		for i, r := range got {
			if record.UnsafeRune(r) || r == utf8.RuneError {
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
