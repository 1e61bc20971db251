package tui

import (
	"github.com/kbatch-dev/kbatch/consumer"
)

// sampleGateBytes is how much of the samples sent to the screen may wait
// for it: about two batches of the stream's default batch bytes
// (consumer.Config.MaxBatchBytes). The screen
// takes the stream's events a few times a second (bridge.go); during a
// catch-up of 1 MiB values the batches cut in between would bring copies
// of every record, 96 MB at the peak, which the history drops at once.
// With the gate the stream skips the samples of the batches it cuts while
// this much waits.
const sampleGateBytes = 8 << 20

// SampleGate is the screen's consumer.SampleGate: the stream adds the
// sample bytes of each batch event it sends, the screen subtracts them as
// it takes the event, and the gate is open while less than
// sampleGateBytes waits. Use one per stream; the zero value is ready.
type SampleGate struct {
	// heap.waiting is the sample bytes sent and not yet taken; heap
	// follows them once the screen runs (Run).
	heap heapLimit
}

// NewSampleGate returns an open gate.
func NewSampleGate() *SampleGate { return &SampleGate{} }

// Open implements consumer.SampleGate.
func (g *SampleGate) Open() bool { return g.heap.waiting.Load() < sampleGateBytes }

// Sent implements consumer.SampleGate.
func (g *SampleGate) Sent(bytes int64) {
	g.heap.waiting.Add(bytes)
	g.heap.follow()
}

// took counts b's samples as taken; nil-safe.
func (g *SampleGate) took(b *consumer.Batch) {
	if g != nil && len(b.Samples) > 0 {
		g.heap.waiting.Add(-consumer.SampleBytes(b))
	}
}

// kept tells the gate's heap limit the sample bytes the screen's history
// keeps; nil-safe.
func (g *SampleGate) kept(bytes int64) {
	if g != nil {
		g.heap.kept.Store(bytes)
		g.heap.follow()
	}
}
