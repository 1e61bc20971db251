package main

import (
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
// shell waits for a line; the clock starts when that line is sent and the
// shell execs kbatch, so the server's start-up is not in the time.
//
// The screen is read from outside (tmux capture-pane of the header line)
// every 20ms until the header first counts an acked batch (first), then
// every 250ms, as each capture starts a tmux client that takes CPU from
// the two cores kbatch and the broker share. The header counting all n
// records acked ends the run (CPU time and peak
// RSS are read from /proc then, and q quits). done is not read from the
// screen, which redraws a catch-up only a few times a second: it is the
// time the store (store, stream name) recorded for the ack of the batch
// that completed the n records, the same moment the headless twin's
// batch line is written.
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
	start := time.Now()
	if out, err := tmux("send-keys", "-t", "bench", "Enter").CombinedOutput(); err != nil {
		s.err = fmt.Errorf("tmux: %v: %s", err, out)
		return s
	}
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
			batches, _ := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
			records, _ := strconv.ParseInt(strings.ReplaceAll(string(m[2]), ",", ""), 10, 64)
			if batches > 0 && s.first == 0 {
				s.first = time.Since(start)
			}
			onScreen = records >= n
		}
		switch {
		case onScreen:
		case s.first == 0:
			time.Sleep(20 * time.Millisecond)
		default:
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
		at, err := ackedAt(store, stream, n)
		if err != nil {
			s.err = err
		} else {
			s.done = at.Sub(start)
		}
	}
	return s
}

// ackedAt is when the store recorded the ack of the batch that brought
// stream's acked records to n.
func ackedAt(path, stream string, n int64) (time.Time, error) {
	st, err := offsets.Open(path, offsets.OpenOptions{ReadOnly: true})
	if err != nil {
		return time.Time{}, err
	}
	defer st.Close()
	batches, err := st.Batches(stream, 0)
	if err != nil {
		return time.Time{}, err
	}
	var total int64
	for i := len(batches) - 1; i >= 0; i-- { // oldest first
		b := batches[i]
		if b.State != offsets.StateAcked {
			continue
		}
		if total += b.Records; total >= n {
			return b.AckedAt, nil
		}
	}
	return time.Time{}, fmt.Errorf("the store %s holds %d acked records of %s, want %d", path, total, stream, n)
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
