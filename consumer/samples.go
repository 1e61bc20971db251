package consumer

import "github.com/kbatch-dev/kbatch/record"

// Samples are the stream's own copies of a batch's first records (detach),
// made at the cut for a screen's records pane. A screen takes the events a
// few times a second; during a catch-up of large records the batches cut
// in between carried copies of all their records, most of which the
// screen's history dropped at once: on 1 MiB values the screen's process
// copied the whole topic and held 96 MB of copies at its peak, above the
// soft memory limit. The receiver bounds that with a
// SampleGate.

// SampleGate lets the receiver of a stream's events bound the samples
// sent to it and not yet taken: the stream tells it the sample bytes of
// each batch event it sends, and a batch cut while the gate is closed
// comes without samples (Batch.SamplesSkipped). The receiver counts down
// what it took, and keeps the gate open while little waits. Nil: every
// batch has its samples.
type SampleGate interface {
	// Open reports whether the batch being cut may have samples.
	Open() bool
	// Sent is called with the sample bytes (record.Record.Bytes) of each
	// batch event sent that has samples.
	Sent(bytes int64)
}

// sampling returns how many samples per partition b, being cut, keeps:
// Config.Samples, or none while the receiver's gate is closed, which it
// marks on b.
func (l *loop) sampling(b *Batch) int {
	if l.cfg.Samples == 0 || l.cfg.SampleGate == nil || l.cfg.SampleGate.Open() {
		return l.cfg.Samples
	}
	b.SamplesSkipped = true
	return 0
}

// sentSamples tells the gate about the samples of e, just sent.
func (l *loop) sentSamples(e Event) {
	be, ok := e.(*BatchEvent)
	if !ok || len(be.Batch.Samples) == 0 || l.cfg.SampleGate == nil {
		return
	}
	l.cfg.SampleGate.Sent(SampleBytes(be.Batch))
}

// SampleBytes is the size of b's samples as a SampleGate counts it.
func SampleBytes(b *Batch) int64 {
	var n int64
	for _, m := range b.Samples {
		n += m.Bytes()
	}
	return n
}

// detach copies m with its own bytes. A record read from the broker shares
// its memory with every record of the same fetch answer (one slab of
// messages, one buffer of bytes), so a sample kept by a screen's batch
// history would otherwise pin a whole answer for as long as it is shown.
func detach(m *record.Record) *record.Record { return m.Clone() }
