package tui

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// withHeapLimit runs the test with the process's soft heap limit at
// limit and GOMEMLIMIT as env, and puts both back after it.
func withHeapLimit(t *testing.T, limit int64, env string) {
	t.Setenv("GOMEMLIMIT", env)
	old := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
}

// The screen's samples of large values count on top of kbatch's own soft
// heap limit: a batch whose samples take megabytes raises it by as much,
// and the limit is back where it was once the screen stops.
func TestScreenSamplesRaiseTheSoftHeapLimit(t *testing.T) {
	const base = 32 << 20
	withHeapLimit(t, base, "")
	m, _ := newTestModel(t, 140, 40, Options{})
	m.heap = newHeapLimit()
	b := batch(1, 1, 0, offsets.StateAcked)
	for _, s := range b.Samples {
		s.Value = bytes.Repeat([]byte("v"), 512<<10)
	}
	feed(m, started(1), &consumer.BatchEvent{Batch: b})
	held := int64(m.hist.sampleBytes)
	if held < int64(len(b.Samples))*512<<10 {
		t.Fatalf("the screen holds %d sample bytes, want at least %d", held, len(b.Samples)*512<<10)
	}
	got := debug.SetMemoryLimit(-1)
	if got < base+held || got >= base+held+heapLimitStep {
		t.Fatalf("soft heap limit %d with %d sample bytes held, want %d rounded up to a MiB", got, held, base+held)
	}
	m.heap.restore()
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Fatalf("soft heap limit %d after the screen, want %d back", got, base)
	}
}

// A limit the user set with GOMEMLIMIT is theirs: the screen leaves it.
func TestScreenLeavesGOMEMLIMITAlone(t *testing.T) {
	const user = 48 << 20
	withHeapLimit(t, user, "48MiB")
	m, _ := newTestModel(t, 140, 40, Options{})
	m.heap = newHeapLimit()
	b := batch(1, 1, 0, offsets.StateAcked)
	b.Samples[0].Value = bytes.Repeat([]byte("v"), 2<<20)
	feed(m, started(1), &consumer.BatchEvent{Batch: b})
	if got := debug.SetMemoryLimit(-1); got != user {
		t.Fatalf("soft heap limit %d, want GOMEMLIMIT's %d untouched", got, user)
	}
}
