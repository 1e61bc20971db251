package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// ackedRE reads the TUI header's count of acked batches and records:
// "acked 57 batches, 1000000 records".
var ackedRE = regexp.MustCompile(`acked ([0-9,]+) batch(?:es)?, ([0-9,]+) records?`)

// tuiRun runs kbatch with the TUI in a 140×40 pane of a tmux server of
// its own. The server and the pane's shell are started first and the
// shell waits for a line; when that line is sent the shell execs kbatch,
// and the clock starts when the pane's process is kbatch (its
// /proc/PID/comm, read every 200µs), so neither the server's start-up nor
// tmux's delivery of the line is in the time: the headless twin's clock
// starts at its exec too.
//
// The screen is read from outside (tmux capture-pane of the header line)
// every 250ms, as each capture starts a tmux client that takes CPU from
// the two cores kbatch and the broker share (every 20ms until the first
// batch, as before 2026-12-03, took a tenth of a core from the short
// rows' first second). The header counting all n records acked ends the
// run (CPU time and peak RSS are read from /proc then, and q quits).
// first and done are not read from the screen, which redraws a catch-up
// only a few times a second: they are the times the store (store, stream
// name) recorded for the acks of the first batch and of the batch that
// completed the n records, the moments the headless twin's batch lines
// are written.
func tuiRun(kbatch string, args []string, n int64, store, stream string) sample {
	var s sample
	sock := fmt.Sprintf("benchrun-%d", os.Getpid())
	tmux := func(a ...string) *exec.Cmd {
		return exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, a...)...)
	}
	defer func() { _ = tmux("kill-server").Run() }()
	line := "read _ && exec " + shellQuote(append([]string{kbatch}, args...))
	if out, err := tmux("new-session", "-d", "-s", "bench", "-x", "140", "-y", "40", "sh -c "+shellQuote([]string{line})).CombinedOutput(); err != nil {
		s.err = fmt.Errorf("tmux: %v: %s", err, out)
		return s
	}
	out, err := tmux("display-message", "-p", "-t", "bench", "#{pane_pid}").Output()
	if err != nil {
		s.err = fmt.Errorf("tmux: %v", err)
		return s
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	shell, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if out, err := tmux("send-keys", "-t", "bench", "Enter").CombinedOutput(); err != nil {
		s.err = fmt.Errorf("tmux: %v: %s", err, out)
		return s
	}
	start := execed(pid, shell)
	stopPoll := make(chan struct{})
	polled := make(chan int64, 1)
	go func() { polled <- pollHWM(pid, stopPoll) }()
	deadline := time.Now().Add(10 * time.Minute)
	var screen []byte
	for onScreen := false; !onScreen; {
		if time.Now().After(deadline) {
			s.err = fmt.Errorf("not done after 10 minutes; screen: %q", screen)
			break
		}
		screen, err = tmux("capture-pane", "-p", "-t", "bench", "-S", "0", "-E", "0").Output()
		if err != nil {
			s.err = fmt.Errorf("the TUI ended before it was done: %v", err)
			break
		}
		if m := ackedRE.FindSubmatch(screen); m != nil {
			records, _ := strconv.ParseInt(strings.ReplaceAll(string(m[2]), ",", ""), 10, 64)
			onScreen = records >= n
		}
		if !onScreen {
			time.Sleep(250 * time.Millisecond)
		}
	}
	s.cpu = cpuOf(pid)
	close(stopPoll)
	s.rss = <-polled
	_ = tmux("send-keys", "-t", "bench", "q").Run()
	for i := 0; i < 200 && processAlive(pid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	s.exit = time.Since(start)
	if processAlive(pid) {
		kill(pid)
		if s.err == nil {
			s.err = fmt.Errorf("q did not end the TUI")
		}
	}
	if s.err == nil {
		first, done, err := ackedAt(store, stream, n)
		if err != nil {
			s.err = err
		} else {
			s.first, s.done = first.Sub(start), done.Sub(start)
		}
	}
	return s
}

// execed waits until process pid, a shell whose /proc/PID/comm was shell,
// has exec'd another program, and returns that moment (read every 200µs,
// at most 10 s).
func execed(pid int, shell []byte) time.Time {
	path := "/proc/" + strconv.Itoa(pid) + "/comm"
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Microsecond) {
		comm, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(comm, shell) {
			break
		}
	}
	return time.Now()
}

// ackedAt is when the store recorded the acks of stream's first batch and
// of the batch that brought its acked records to n.
func ackedAt(path, stream string, n int64) (first, done time.Time, err error) {
	st, err := offsets.Open(path, offsets.OpenOptions{ReadOnly: true})
	if err != nil {
		return first, done, err
	}
	defer st.Close()
	batches, err := st.Batches(stream, 0)
	if err != nil {
		return first, done, err
	}
	var total int64
	for i := len(batches) - 1; i >= 0; i-- { // oldest first
		b := batches[i]
		if b.State != offsets.StateAcked {
			continue
		}
		if first.IsZero() {
			first = b.AckedAt
		}
		if total += b.Records; total >= n {
			return first, b.AckedAt, nil
		}
	}
	return first, done, fmt.Errorf("the store %s holds %d acked records of %s, want %d", path, total, stream, n)
}

func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// A zombie (state Z) has ended.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// shellQuote quotes args for sh.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
