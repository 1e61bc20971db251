package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one run of one contender.
type sample struct {
	// done is the time from starting the process to the moment it had
	// everything (see the done funcs); first is the time to its first
	// batch, when that is watched.
	done, first time.Duration
	// exit is the time to the end of the process.
	exit time.Duration
	cpu  time.Duration // user + system
	rss  int64         // peak resident set, KiB
	// stderr is what the contender wrote there.
	stderr string
	err    error
}

// lineWatch looks at each stdout line of a contender with the time since
// it started; it returns true once the contender is done.
type lineWatch func(line []byte, at time.Duration, s *sample) bool

// measure runs cmd to its end. Peak RSS is the process's own VmHWM, read
// from /proc while it runs: rusage's ru_maxrss is not usable here, as
// Linux charges a child that a Go program starts (vfork, then exec) with
// the parent's high-water mark. done is when watch says so, else the
// exit.
func measure(cmd *exec.Cmd, watch lineWatch) sample { return runProcess(cmd, watch, false) }

// measureUntil is measure for a process that does not end by itself: it
// is sent SIGTERM once watch says it is done.
func measureUntil(cmd *exec.Cmd, watch lineWatch) sample { return runProcess(cmd, watch, true) }

func runProcess(cmd *exec.Cmd, watch lineWatch, stop bool) sample {
	var s sample
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var stdout io.ReadCloser
	if watch != nil {
		var err error
		if stdout, err = cmd.StdoutPipe(); err != nil {
			s.err = err
			return s
		}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		s.err = err
		return s
	}
	stopPoll := make(chan struct{})
	polled := make(chan int64, 1)
	go func() { polled <- pollHWM(cmd.Process.Pid, stopPoll) }()
	if watch != nil {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if s.done == 0 && watch(sc.Bytes(), time.Since(start), &s) {
				s.done = time.Since(start)
				if stop {
					s.cpu = cpuOf(cmd.Process.Pid)
					_ = cmd.Process.Signal(syscall.SIGTERM)
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}
	err := cmd.Wait()
	s.exit = time.Since(start)
	close(stopPoll)
	s.rss = <-polled
	if s.done == 0 {
		s.done = s.exit
	}
	if ps := cmd.ProcessState; ps != nil && s.cpu == 0 {
		s.cpu = ps.UserTime() + ps.SystemTime()
	}
	s.stderr = stderr.String()
	if err != nil {
		s.err = fmt.Errorf("%v: %s", err, lastLine(stderr.String()))
	}
	return s
}

// pollHWM reads the peak RSS of pid every 5ms until stop; it returns the
// last value read.
func pollHWM(pid int, stop <-chan struct{}) int64 {
	var hwm int64
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if v, ok := readHWM(pid); ok && v > hwm {
			hwm = v
		}
		select {
		case <-stop:
			return hwm
		case <-t.C:
		}
	}
}

// readHWM returns VmHWM of pid in KiB.
func readHWM(pid int) (int64, bool) { return readStatusKiB(pid, "VmHWM:") }

// cpuOf returns the user+system time of a running pid.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times; 100 on every
// Linux kbatch runs on.
const clockTicks = 100

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// kill ends pid's process group quietly.
func kill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
