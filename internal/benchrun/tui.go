package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ackedRE reads the TUI header's count of acked batches and records:
// "acked 57 batches, 1000000 records".
var ackedRE = regexp.MustCompile(`acked ([0-9,]+) batch(?:es)?, ([0-9,]+) records?`)

// tuiRun runs kbatch with the TUI in a detached tmux session of 140×40 on
// a tmux server of its own, and reads the screen from outside (tmux
// capture-pane of the header line) every 20ms: first is when the header
// first counts an acked batch, done when it counts all n records acked.
// CPU time and peak RSS are read from /proc at done; then q quits.
func tuiRun(kbatch string, args []string, n int64) sample {
	var s sample
	sock := fmt.Sprintf("benchrun-%d", os.Getpid())
	tmux := func(a ...string) *exec.Cmd {
		return exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, a...)...)
	}
	defer func() { _ = tmux("kill-server").Run() }()
	line := "exec " + shellQuote(append([]string{kbatch}, args...))
	start := time.Now()
	if out, err := tmux("new-session", "-d", "-s", "bench", "-x", "140", "-y", "40", line).CombinedOutput(); err != nil {
		s.err = fmt.Errorf("tmux: %v: %s", err, out)
		return s
	}
	out, err := tmux("display-message", "-p", "-t", "bench", "#{pane_pid}").Output()
	if err != nil {
		s.err = fmt.Errorf("tmux: %v", err)
		return s
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	stopPoll := make(chan struct{})
	polled := make(chan int64, 1)
	go func() { polled <- pollHWM(pid, stopPoll) }()
	deadline := time.Now().Add(10 * time.Minute)
	var screen []byte
	for s.done == 0 {
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
			at := time.Since(start)
			if batches > 0 && s.first == 0 {
				s.first = at
			}
			if records >= n {
				s.done = at
			}
		}
		if s.done == 0 {
			time.Sleep(20 * time.Millisecond)
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
	}
	return s
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
