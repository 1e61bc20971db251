package consumer

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// countingGate is a SampleGate that is closed while limit bytes or more
// were sent and not taken.
type countingGate struct {
	waiting atomic.Int64
	limit   int64
}

func (g *countingGate) Open() bool       { return g.waiting.Load() < g.limit }
func (g *countingGate) Sent(bytes int64) { g.waiting.Add(bytes) }

// A receiver that falls behind a catch-up of large records does not get
// copies of all of them as samples: while its gate is closed, batches come
// without them (on 1 MiB values the screen's process would copy the whole
// topic, and its heap stand above the soft limit). Once it has taken
// what waited, the next batch has its samples again.
func TestSamplesWaitForAReceiverThatFallsBehind(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("large", 1)
	const size = 64 << 10
	h.kc.ProduceN(topic, 0, 40, size)
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.Samples = 3
	cfg.MaxPerPartition = 2 // 20 batches of 2 records: every record a sample
	gate := &countingGate{limit: 4 * size}
	cfg.SampleGate = gate
	s := start(t, cfg)
	defer s.Close()

	var records, kept int64
	skipped := 0
	for records < 40 {
		var ev Event
		select {
		case ev = <-s.Events():
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of 40 records in batches after 20 s", records)
		}
		be, ok := ev.(*BatchEvent)
		if !ok {
			continue
		}
		b := be.Batch
		records += b.Records
		switch {
		case b.SamplesSkipped:
			skipped++
			if len(b.Samples) != 0 {
				t.Errorf("batch %d: skipped, with %d samples", b.ID, len(b.Samples))
			}
		case len(b.Samples) != int(b.Records):
			t.Errorf("batch %d: %d samples of %d records, want all (Samples 3, 2 per batch)", b.ID, len(b.Samples), b.Records)
		}
		kept += SampleBytes(b)
	}
	if skipped == 0 {
		t.Fatalf("no batch of the 20 came without samples; %d bytes of samples sent", kept)
	}
	if got := gate.waiting.Load(); got != kept {
		t.Errorf("the gate was told of %d bytes, the batches had %d", got, kept)
	}
	// Sent and not taken: up to the gate's limit, plus the batches cut
	// before the events that closed it were sent (one at the committer,
	// one processed and not yet acked, the one being cut).
	if limit := gate.limit + 3*2*(size+8); kept > limit {
		t.Errorf("%d bytes of samples made for a receiver that took none, want at most %d", kept, limit)
	}

	// Taken: the next batch has its samples.
	gate.waiting.Store(0)
	h.kc.ProduceN(topic, 0, 1, size)
	for {
		ev := <-s.Events()
		if be, ok := ev.(*BatchEvent); ok {
			if b := be.Batch; b.SamplesSkipped || len(b.Samples) != 1 {
				t.Fatalf("batch %d after the receiver took every sample: skipped %v, %d samples; want 1", b.ID, b.SamplesSkipped, len(b.Samples))
			}
			return
		}
	}
}

// With manual acks the planned and the acked event of a batch both carry
// its samples: what the gate is told and what a receiver that takes every
// event counts down balance once the stream is closed and drained
// so the gate cannot stay closed for good.
func TestSampleGateBalancesUnderManualAck(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("large", 2)
	const size = 64 << 10
	h.kc.ProduceN(topic, 0, 30, size)
	h.kc.ProduceN(topic, 1, 30, size)
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.Samples = 3
	cfg.MaxPerPartition = 4
	cfg.ManualAck = true
	gate := &countingGate{limit: 3 * size}
	cfg.SampleGate = gate
	s := start(t, cfg)
	var acked int64
	skipped := 0
	deadline := time.After(30 * time.Second)
	for acked < 60 {
		select {
		case ev := <-s.Events():
			if be, ok := ev.(*BatchEvent); ok {
				gate.waiting.Add(-SampleBytes(be.Batch))
				if be.Batch.SamplesSkipped {
					skipped++
				}
				switch be.Batch.State {
				case offsets.StatePlanned:
					_ = s.Ack(be.Batch.ID)
				case offsets.StateAcked:
					acked += be.Batch.Records
				}
			}
		case <-deadline:
			t.Fatalf("%d of 60 records acked after 30 s", acked)
		}
	}
	s.Close()
	for ev := range s.Events() {
		if be, ok := ev.(*BatchEvent); ok {
			gate.waiting.Add(-SampleBytes(be.Batch))
		}
	}
	if w := gate.waiting.Load(); w != 0 {
		t.Fatalf("gate left at %d bytes after every event was taken (%d skipped)", w, skipped)
	}
	t.Logf("%d batch events skipped", skipped)
}
