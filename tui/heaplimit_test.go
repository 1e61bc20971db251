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

// limitIs fails the test unless the soft heap limit is want rounded up
// to heapLimitStep.
func limitIs(t *testing.T, want int64, what string) {
	t.Helper()
	if got := debug.SetMemoryLimit(-1); got < want || got >= want+heapLimitStep {
		t.Fatalf("%s: soft heap limit %d, want %d rounded up to a MiB", what, got, want)
	}
}

// The screen's samples of large values count twice on top of kbatch's
// own soft heap limit, beyond the few MiB it has room for already: as
// the stream sends them, before the screen has them. The limit does not
// fall when the screen keeps less of them (it keeps the first MiB of a
// value), and is back where it was once the screen stops.
func TestScreenSamplesRaiseTheSoftHeapLimit(t *testing.T) {
	const base = 32 << 20
	withHeapLimit(t, base, "")
	gate := NewSampleGate()
	m, _ := newTestModel(t, 140, 40, Options{SampleGate: gate})
	gate.heap.start()
	b := batch(1, 1, 0, offsets.StateAcked)
	for _, s := range b.Samples {
		s.Value = bytes.Repeat([]byte("v"), 3<<20)
	}
	sent := consumer.SampleBytes(b)
	gate.Sent(sent)
	raised := base + 2*(sent-heapLimitSlack)
	limitIs(t, raised, "samples sent, not yet on screen")
	feed(m, started(1), &consumer.BatchEvent{Batch: b})
	if kept := int64(m.hist.sampleBytes); kept >= sent {
		t.Fatalf("the screen keeps %d sample bytes of the %d sent, want their first MiB each", kept, sent)
	}
	limitIs(t, raised, "samples kept by the screen, fewer bytes than sent")
	gate.heap.stop()
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Fatalf("soft heap limit %d after the screen, want %d back", got, base)
	}
}

// A screen of small records holds fewer sample bytes than the base limit
// has room for: the limit stays where a headless run has it.
func TestScreenOfSmallSamplesKeepsTheSoftHeapLimit(t *testing.T) {
	const base = 32 << 20
	withHeapLimit(t, base, "")
	gate := NewSampleGate()
	m, _ := newTestModel(t, 140, 40, Options{SampleGate: gate})
	gate.heap.start()
	defer gate.heap.stop()
	for id := uint64(1); id <= 100; id++ {
		b := batch(id, 3, int64(id)*10, offsets.StateAcked)
		gate.Sent(consumer.SampleBytes(b))
		feed(m, &consumer.BatchEvent{Batch: b})
	}
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Fatalf("soft heap limit %d with %d sample bytes kept, want %d", got, m.hist.sampleBytes, base)
	}
}

// The records the tail view keeps count as samples do: a tail of large
// records raises the limit.
func TestScreenTailRaisesTheSoftHeapLimit(t *testing.T) {
	const base = 32 << 20
	withHeapLimit(t, base, "")
	gate := NewSampleGate()
	m, _ := newTestModel(t, 140, 40, Options{SampleGate: gate, Tail: NewTail(MaxTailRecords)})
	gate.heap.start()
	defer gate.heap.stop()
	feed(m, twoTopics()...)
	press(m, "t")
	recs := tailMsgs(0, 0, 2000)
	for _, r := range recs {
		r.Value = bytes.Repeat([]byte("v"), 64<<10)
	}
	deliverTail(m, recs)
	held := int64(m.hist.sampleBytes + m.tailRing.bytes)
	if held <= heapLimitSlack {
		t.Fatalf("the screen keeps %d bytes of records, want more than %d for the test", held, heapLimitSlack)
	}
	limitIs(t, base+2*(held-heapLimitSlack), "a tail of large records")
}

// A limit the user set with GOMEMLIMIT is theirs: the screen leaves it.
func TestScreenLeavesGOMEMLIMITAlone(t *testing.T) {
	const user = 48 << 20
	withHeapLimit(t, user, "48MiB")
	gate := NewSampleGate()
	m, _ := newTestModel(t, 140, 40, Options{SampleGate: gate})
	gate.heap.start()
	b := batch(1, 1, 0, offsets.StateAcked)
	b.Samples[0].Value = bytes.Repeat([]byte("v"), 2<<20)
	gate.Sent(consumer.SampleBytes(b))
	feed(m, started(1), &consumer.BatchEvent{Batch: b})
	gate.heap.stop()
	if got := debug.SetMemoryLimit(-1); got != user {
		t.Fatalf("soft heap limit %d, want GOMEMLIMIT's %d untouched", got, user)
	}
}
