package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTUIEndToEndInTmux runs the real `kbatch demo` in a tmux pane of
// 140×40 and drives it with keys: pause, resume, seek, replay, quit. It
// only polls the pane's text; every wait is bounded and generous, so a
// loaded machine makes it slower, never flaky.
func TestTUIEndToEndInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end TUI test needs it (.ci/run installs it with apt)")
	}
	dir := t.TempDir()
	bin := kbatchBinary(t)
	tm := startTmux(t, dir, 140, 40, bin+" demo --store "+filepath.Join(dir, "offsets.db")+`; echo "kbatch exited with status $?"`)

	// The first batch: the batches pane counts it, the records pane shows
	// its samples.
	tm.waitFor("the first batch", func(s string) bool {
		return regexp.MustCompile(`Batches \d+ · latest \d+`).MatchString(s) && strings.Contains(s, "Records · batch ")
	})

	// space pauses every partition; space again resumes.
	tm.keys("Space")
	tm.waitFor("PAUSED", func(s string) bool {
		return strings.Contains(header(s), "PAUSED") && strings.Contains(s, "paused: no new batches until space")
	})
	tm.keys("Space")
	tm.waitFor("LIVE again", func(s string) bool {
		return strings.Contains(header(s), "LIVE") && !strings.Contains(header(s), "PAUSED")
	})

	// s on events[1] (the second row of the partitions pane), offset 100.
	tm.keys("1", "j")
	tm.waitFor("events[1] selected", func(s string) bool { return strings.Contains(s, "> events[1]") })
	tm.keys("s")
	tm.waitFor("the seek form", func(s string) bool { return strings.Contains(s, "Seek events[1]") && strings.Contains(s, "offset>") })
	tm.keys("1", "0", "0", "Enter")
	tm.waitFor("the seek event and the jump mark", func(s string) bool {
		return regexp.MustCompile(`seek +events\[1\]: seek from \d+ to 100`).MatchString(s) && // events pane
			regexp.MustCompile(`[│┃]>? +\*\d+ +\d\d:\d\d:\d\d`).MatchString(s) // a batch marked as jumped
	})

	// r on the newest batch: the form comes prefilled, enter replays.
	tm.keys("2", "g")
	tm.waitFor("the batches pane focused", func(s string) bool { return strings.Contains(s, "┏━ Batches") })
	tm.keys("r")
	tm.waitFor("the replay form", func(s string) bool {
		return regexp.MustCompile(`ranges> .*:\d+-\d+`).MatchString(s)
	})
	tm.keys("Enter")
	tm.waitFor("the replay view with records", func(s string) bool {
		return strings.Contains(header(s), "REPLAY") && strings.Contains(s, "100%") && strings.Contains(s, "done in") &&
			regexp.MustCompile(`> +\d+ +(events|orders|sensor-data)\[\d\]`).MatchString(s)
	})
	tm.keys("Escape")
	tm.waitFor("the main screen again", func(s string) bool {
		return !strings.Contains(header(s), "REPLAY") && strings.Contains(s, "Partitions 7")
	})

	// q quits: exit status 0, the alternate screen is gone, the shell
	// prints the status.
	tm.keys("q")
	status := tm.waitExit()
	if status != "0" {
		t.Fatalf("kbatch exited with status %s; pane:\n%s", status, tm.capture())
	}
	if s := tm.capture(); strings.Contains(s, "Partitions 7") || strings.Contains(s, "goroutine ") || strings.Contains(s, "panic") {
		t.Fatalf("after q the pane still shows the screen, or a stack trace:\n%s", s)
	}
}

// tmuxPane is one command running in a pane of a private tmux server.
type tmuxPane struct {
	t      *testing.T
	socket string
}

// startTmux starts a private tmux server (its socket in dir) with one
// w×h pane running command with sh. The pane stays after the command
// exits, so what it printed last can be read; the server is killed at
// cleanup.
func startTmux(t *testing.T, dir string, w, h int, command string) *tmuxPane {
	t.Helper()
	tm := &tmuxPane{t: t, socket: filepath.Join(dir, "tmux.sock")}
	conf := filepath.Join(dir, "tmux.conf")
	// No status line: the pane is the whole w×h window.
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("tmux", "-u", "-S", tm.socket, "-f", conf,
		"new-session", "-d", "-s", "kbatch", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), command)
	cmd.Env = e2eEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last screen:\n%s", tm.capture())
		}
		_ = exec.Command("tmux", "-S", tm.socket, "kill-server").Run()
	})
	return tm
}

// e2eEnv is the test's environment without kbatch settings, with its own
// config and state directories and a UTF-8 locale.
func e2eEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "KBATCH_"), strings.HasPrefix(kv, "XDG_CONFIG_HOME="), strings.HasPrefix(kv, "XDG_STATE_HOME="),
			strings.HasPrefix(kv, "LANG="), strings.HasPrefix(kv, "LC_ALL="), strings.HasPrefix(kv, "TMUX="):
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "LANG=C.UTF-8")
}

func (tm *tmuxPane) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// capture is the pane's text now: the screen, and with history set, the
// lines scrolled off it too.
func (tm *tmuxPane) capture(history ...bool) string {
	args := []string{"-S", tm.socket, "capture-pane", "-p", "-t", "kbatch"}
	if len(history) > 0 && history[0] {
		args = append(args, "-S", "-")
	}
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return string(out)
}

// keys sends tmux key names ("Space", "Enter", "Escape") or characters.
func (tm *tmuxPane) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		tm.tmux("send-keys", "-t", "kbatch", k)
	}
}

// e2eTimeout bounds each wait; it is generous for a loaded 2-core
// machine, where building the demo cluster alone can take a while.
const e2eTimeout = 90 * time.Second

// waitFor polls the pane until ok accepts its text, or fails the test
// with the last screen after e2eTimeout.
func (tm *tmuxPane) waitFor(what string, ok func(screen string) bool) string {
	tm.t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(e2eTimeout)
	for {
		s := tm.capture()
		if ok(s) {
			return s
		}
		select {
		case <-tick.C:
		case <-deadline:
			tm.t.Fatalf("no %s after %s; screen:\n%s", what, e2eTimeout, s)
		}
	}
}

// exitLine is what the pane's shell prints after kbatch ends.
var exitLine = regexp.MustCompile(`kbatch exited with status (\d+)`)

// waitExit waits for kbatch to end and returns its exit status, as the
// pane's shell printed it. If kbatch does not end, it gets SIGQUIT, so
// the log shows where every goroutine was stuck.
func (tm *tmuxPane) waitExit() string {
	tm.t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(e2eTimeout)
	for {
		if m := exitLine.FindStringSubmatch(tm.capture(true)); m != nil {
			return m[1]
		}
		select {
		case <-tick.C:
			continue
		case <-deadline:
		}
		break
	}
	// The pane runs sh, sh runs kbatch: signal sh's children.
	shell := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "kbatch", "#{pane_pid}"))
	if out, err := exec.Command("pgrep", "-P", shell).Output(); err == nil {
		for _, pid := range strings.Fields(string(out)) {
			_ = exec.Command("kill", "-QUIT", pid).Run()
		}
	}
	for i := 0; i < 50 && exitLine.FindString(tm.capture(true)) == ""; i++ {
		<-tick.C
	}
	tm.t.Fatalf("kbatch did not exit %s after q; its goroutines (SIGQUIT):\n%s", e2eTimeout, tm.capture(true))
	return ""
}

// header is the first line of a screen.
func header(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
