package tui

import (
	"math"
	"os"
	"runtime/debug"
	"sync/atomic"
)

// heapLimit keeps the process's soft heap limit at kbatch's own limit
// (main.go) plus twice the bytes of records the screen holds beyond
// heapLimitSlack: its history's samples (up to maxSampleBytes), the
// samples the stream sent that wait for it (up to sampleGateBytes), and
// its tail view's records (up to tailMaxBytes). Twice, because they are
// live data, and the GC needs as much again of room above live data not
// to run back to back. The headless limit is sized for a catch-up's batch
// and read-ahead; on 1 MiB values the screen's samples alone came near
// it, and the GC ran without pause: the screen took 0.65-0.71 s of CPU
// where its headless twin took 0.19.
//
// The stream raises it as it sends samples (SampleGate.Sent), the screen
// as it keeps records (Model.followHeap): the limit rises with them, not
// only at the screen's few redraws a second. Its methods are safe for
// concurrent use. The zero value does nothing: a limit set by GOMEMLIMIT,
// or none, is the user's and stays as it is.
type heapLimit struct {
	base    atomic.Int64 // the limit without samples; 0: leave it alone
	set     atomic.Int64 // the limit last set
	waiting atomic.Int64 // sample bytes sent, not yet taken by the screen
	kept    atomic.Int64 // bytes of records the screen keeps (samples, tail)
}

// heapLimitStep rounds the limit up, so it is set again only when the
// samples held move by this much.
const heapLimitStep = 1 << 20

// heapLimitSlack is the sample bytes the base limit has room for already:
// at the peak of the 3 M catch-up of 200 B records the live heap is about
// 19 MiB against the 32 MiB limit, and the screen holds 2-5 MiB of
// samples of such records; with those counted the screen's peak on that
// catch-up was 66-67 MiB of RSS.
const heapLimitSlack = 4 << 20

// start follows the limit kbatch set itself from now on; it leaves alone
// a limit that comes from GOMEMLIMIT, and a process with none.
func (l *heapLimit) start() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	base := debug.SetMemoryLimit(-1)
	if base == math.MaxInt64 {
		return
	}
	l.set.Store(base)
	l.base.Store(base)
	l.follow()
}

// stop sets the limit back to its base and follows it no more.
func (l *heapLimit) stop() {
	if base := l.base.Swap(0); base != 0 {
		debug.SetMemoryLimit(base)
	}
}

// follow raises the limit to the base plus twice the bytes held beyond
// heapLimitSlack, when that is more than it is. It never lowers it while
// the screen runs: samples come and go with every batch, and a limit that
// went down with them started a collection each time the heap stood
// above it (the screen on 1 MiB values went through 169 collections where
// it now goes through 14). It stays about within the base plus twice the
// screen's bounds, and the newest batch's samples whatever their size:
// 91 MiB on 1 MiB values.
func (l *heapLimit) follow() {
	base := l.base.Load()
	if base == 0 {
		return
	}
	held := max(l.waiting.Load()+l.kept.Load()-heapLimitSlack, 0)
	want := base + (2*held+heapLimitStep-1)/heapLimitStep*heapLimitStep
	for {
		set := l.set.Load()
		if want <= set {
			return
		}
		if l.set.CompareAndSwap(set, want) {
			debug.SetMemoryLimit(want)
			return
		}
	}
}

// followHeap tells the heap limit the bytes the screen keeps of records:
// its history's samples and its tail (up to tailMaxBytes, copied while the
// tail view is open).
func (m *Model) followHeap() {
	kept := m.hist.sampleBytes
	if m.tailRing != nil {
		kept += m.tailRing.bytes
	}
	m.opts.SampleGate.kept(int64(kept))
}
