package cli

import (
	"strings"
	"testing"
)

// TERM=dumb cannot draw the screen: watch, demo and spark say so in one
// line and exit 2 before reaching a cluster; --no-tui still works there.
func TestDumbTerminalIsRefusedInOneLine(t *testing.T) {
	for _, args := range screenCommands(t.TempDir()) {
		r := execKbatch(t, []string{"TERM=dumb"}, args...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "TERM=dumb cannot draw the screen") {
			t.Fatalf("kbatch %v on TERM=dumb: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	r := execKbatch(t, []string{"TERM=dumb"}, "-b", "127.0.0.1:1", "-t", "events", "--no-tui")
	if strings.Contains(r.stderr, "TERM=dumb") {
		t.Fatalf("--no-tui refused on TERM=dumb: %q", r.stderr)
	}
}

// Without a terminal for the screen (stdout redirected to a file or a
// pipe, or no terminal at all) the screen cannot be drawn: each case is
// one line, exit 2, before reaching a cluster, rather than escape codes in
// the file or library internals on stderr; --no-tui runs.
func TestNoTerminalIsRefusedInOneLine(t *testing.T) {
	for _, args := range screenCommands(t.TempDir()) {
		r := execKbatch(t, nil, args...) // stdout a buffer, no controlling terminal
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "stdout is not a terminal") || r.stdout != "" {
			t.Fatalf("kbatch %v without a terminal: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := execKbatch(t, nil, "-b", "127.0.0.1:1", "-t", "events", "--no-tui")
	if strings.Contains(r.stderr, "terminal") {
		t.Fatalf("--no-tui refused without a terminal: %q", r.stderr)
	}
}
