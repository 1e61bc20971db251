package tui

import (
	"github.com/kbatch-dev/kbatch/consumer"
)

// History bounds (docs/design.md §2.6): memory does not grow with run time.
//
// maxSampleBytes leaves room under the process's 64 MiB soft memory limit
// (main.go) for the stream's read-ahead (twice the stream's batch bytes, consumer.Config.MaxBatchBytes: 16 MiB
// by default) and the batches cut and not yet acked: with 64 MiB of
// samples the live heap of a topic of large values stands above the limit
// and the GC runs without pause (the screen on 1 MiB values then reads at
// 0.58x its headless twin, 10 KiB text at 0.76x). 16 MiB still keeps
// 1,600 samples of 10 KiB; the newest batch keeps all of its samples
// whatever their size (add), and on 200 B values the record bound comes
// first.
const (
	maxBatches       = 500
	maxRanges        = 50_000 // over all kept batches: 50 batches of 1000 partitions
	maxSampleRecords = 20_000
	maxSampleBytes   = 16 << 20
	maxEvents        = 1000
)

// batchEntry is one batch as the screen keeps it.
type batchEntry struct {
	*consumer.Batch
	samples        []*record
	samplesDropped bool // the samples were dropped (or not copied) to bound memory
	// logged is a batch of an earlier run, from the store's batch log:
	// its ranges are known, its records were not kept.
	logged      bool
	sampleBytes int
}

// history is the ring of the last maxBatches batches with their samples,
// fewer when their ranges exceed maxRanges (wide topics); when the samples
// of all kept batches exceed the budget, the oldest batches lose theirs
// first.
type history struct {
	ring        []*batchEntry // oldest first
	ranges      int           // over the kept batches
	sampleCount int
	sampleBytes int
	maxRecords  int
	maxBytes    int
	maxLen      int
	maxRanges   int
}

func newHistory() *history {
	return &history{maxRecords: maxSampleRecords, maxBytes: maxSampleBytes, maxLen: maxBatches, maxRanges: maxRanges}
}

func (h *history) len() int { return len(h.ring) }

// newest returns the i-th batch counting from the newest (0).
func (h *history) newest(i int) *batchEntry { return h.ring[len(h.ring)-1-i] }

// indexOf returns the newest-first index of batch id, or -1.
func (h *history) indexOf(id uint64) int {
	for i := len(h.ring) - 1; i >= 0; i-- {
		if h.ring[i].ID == id {
			return len(h.ring) - 1 - i
		}
	}
	return -1
}

// add records b. A batch that is already kept (planned, then acked) is
// replaced in place and keeps its samples; one of the earlier run's log
// that this run re-delivered takes the samples it brings.
func (h *history) add(b *consumer.Batch) *batchEntry {
	// The entry keeps the batch without its samples: they are copied into
	// records below, which the sample budget counts; keeping the stream's
	// slices too would hold every sample of every batch in the history.
	kept := *b
	kept.Samples = nil
	if i := h.indexOf(b.ID); i >= 0 {
		e := h.newest(i)
		h.ranges += len(kept.Ranges) - len(e.Ranges)
		e.Batch = &kept
		if e.logged && len(b.Samples) > 0 {
			// A batch of the earlier run's log that this run re-delivers
			// has the records just read again, so one waiting for a
			// manual ack shows them.
			e.logged = false
			h.adopt(e, b)
			h.trimSamples()
		}
		return e
	}
	// A batch cut while the screen was behind the stream by a batch's
	// worth of samples comes without them (consumer.Batch.SamplesSkipped).
	e := &batchEntry{Batch: &kept, samplesDropped: b.SamplesSkipped}
	h.adopt(e, b)
	h.ring = append(h.ring, e)
	h.ranges += len(kept.Ranges)
	for len(h.ring) > h.maxLen || (h.ranges > h.maxRanges && len(h.ring) > 1) {
		h.drop(h.ring[0])
		h.ranges -= len(h.ring[0].Ranges)
		h.ring[0] = nil
		h.ring = h.ring[1:]
	}
	h.trimSamples()
	return e
}

// trimSamples drops the samples of the oldest batches, the newest's
// excepted, while the kept samples exceed the budget.
func (h *history) trimSamples() {
	for i := 0; i < len(h.ring)-1 && (h.sampleCount > h.maxRecords || h.sampleBytes > h.maxBytes); i++ {
		if len(h.ring[i].samples) > 0 {
			h.drop(h.ring[i])
			h.ring[i].samplesDropped = true
		}
	}
}

// adopt makes b's samples (the stream's own copies) e's, counted in the
// sample budget.
func (h *history) adopt(e *batchEntry, b *consumer.Batch) {
	e.samples = make([]*record, 0, len(b.Samples))
	for _, m := range b.Samples {
		r := adoptRecord(m, b.ID)
		r.Aborted = len(b.Aborted) > 0 && b.IsAborted(r.Partition, r.Offset)
		e.samples = append(e.samples, r)
		e.sampleBytes += r.size()
	}
	h.sampleCount += len(e.samples)
	h.sampleBytes += e.sampleBytes
}

func (h *history) drop(e *batchEntry) {
	h.sampleCount -= len(e.samples)
	h.sampleBytes -= e.sampleBytes
	e.samples, e.sampleBytes = nil, 0
}
