package tui

import (
	"math"
	"os"
	"runtime/debug"
)

// heapLimit keeps the process's soft heap limit at kbatch's own limit
// (main.go) plus the sample bytes the screen holds: its history's samples
// (up to maxSampleBytes) and those the stream sent that wait for it (up
// to sampleGateBytes). The headless limit is sized for a catch-up's batch
// and read-ahead; on 1 MiB values the screen's samples alone came near
// it, and the GC ran without pause (the screen read at 0.51× its headless
// twin). A catch-up of small records keeps few sample bytes, and the
// limit then stays where a headless run has it.
//
// The zero value does nothing: a limit set by GOMEMLIMIT, or none, is
// the user's and stays as it is. Owned by the goroutine that runs Update.
type heapLimit struct {
	base int64 // the limit without samples; 0: leave it alone
	set  int64 // the limit last set
}

// heapLimitStep rounds the limit up, so it is set again only when the
// samples held move by this much.
const heapLimitStep = 1 << 20

// newHeapLimit follows the limit kbatch set itself; it leaves alone a
// limit that comes from GOMEMLIMIT, and a process with none.
func newHeapLimit() heapLimit {
	if os.Getenv("GOMEMLIMIT") != "" {
		return heapLimit{}
	}
	base := debug.SetMemoryLimit(-1)
	if base == math.MaxInt64 {
		return heapLimit{}
	}
	return heapLimit{base: base, set: base}
}

// follow sets the limit to the base plus held sample bytes.
func (l *heapLimit) follow(held int64) {
	if l.base == 0 {
		return
	}
	want := l.base + (max(held, 0)+heapLimitStep-1)/heapLimitStep*heapLimitStep
	if want != l.set {
		debug.SetMemoryLimit(want)
		l.set = want
	}
}

// restore sets the limit back to its base.
func (l *heapLimit) restore() { l.follow(0) }
