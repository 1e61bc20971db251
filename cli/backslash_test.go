package cli

import (
	"errors"
	"strings"
	"testing"
)

// The stderr line doubles backslashes once: an ESC in an error shows as
// \x1b, the four characters \x1b as \\x1b.
func TestOneLineDoublesBackslashes(t *testing.T) {
	got := oneLine(errors.New("broker said \x1b[2J and \\x1b[2J in C:\\tmp"))
	want := `broker said \x1b[2J and \\x1b[2J in C:\\tmp`
	if got != want {
		t.Fatalf("oneLine = %q, want %q", got, want)
	}
}

// A name with a backslash shows with it doubled once, in output printed
// directly (offsets show) and in an error (an unknown stream), where it is
// quoted in the message and escaped where the line is printed.
func TestStreamNameBackslashEscapedOnce(t *testing.T) {
	store := isolatedStore(t)
	s := offsetsOpenTestStore(t, store)
	s.stream(`dc\east`, "events")
	s.close()
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store))
	if !strings.Contains(out, `stream "dc\\east"`+"\n") || strings.Contains(out, `\\\\`) {
		t.Errorf("offsets show:\n%s", out)
	}
	_, stderr, code := runInProcess(t, "", "offsets", "show", "--store", store, "--name", `dc\west`)
	want := `kbatch: unknown stream "dc\\west" in store ` + store + ` (it has "dc\\east")` + "\n"
	if code != exitUsage || stderr != want {
		t.Errorf("exit %d, stderr\n %q\nwant\n %q", code, stderr, want)
	}
}
