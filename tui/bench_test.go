package tui

import (
	"fmt"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// BenchmarkView140x40 draws a full screen over 1000 partitions and a full
// batch history (batches over every partition, as many as the history
// keeps, each with a sample per partition): the cost must follow what is
// visible, not what is kept.
func BenchmarkView140x40(b *testing.B) { benchView(b, 1000) }

// BenchmarkView140x40Partitions10k is BenchmarkView140x40 over 10,000
// partitions (target: View() ≤ 2 ms there too).
func BenchmarkView140x40Partitions10k(b *testing.B) { benchView(b, 10_000) }

func benchView(b *testing.B, parts int) {
	m, _ := newTestModel(b, 140, 40, Options{})
	st := &consumer.Started{Stream: "big", Topics: []string{"events"}}
	for i := 0; i < parts; i++ {
		st.Starts = append(st.Starts, offsets.Start{Partition: part("events", int32(i)), Source: offsets.SourceStored})
	}
	feed(m, st)
	for i := 0; i < sparkHistory; i++ {
		feed(m, progressEv(parts, float64(i)))
	}
	for id := uint64(1); id <= maxBatches; id++ {
		bt := &consumer.Batch{Batch: offsets.Batch{ID: id, Time: t0, State: offsets.StateAcked}}
		for p := 0; p < parts; p++ {
			bt.Ranges = append(bt.Ranges, offsets.BatchRange{Range: offsets.Range{Partition: part("events", int32(p)), From: int64(id) * 10, Until: int64(id)*10 + 10}, Records: 10})
			bt.Samples = append(bt.Samples, msg("events", int32(p), int64(id)*10, fmt.Sprint("k", p), `{"v":1}`))
		}
		feed(m, &consumer.BatchEvent{Batch: bt})
	}
	if m.hist.ranges < maxRanges-parts || m.hist.sampleCount < maxSampleRecords-parts {
		b.Fatalf("history holds %d ranges and %d samples, not full", m.hist.ranges, m.hist.sampleCount)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkApplyProgress is one progress event over 1000 partitions.
func BenchmarkApplyProgress(b *testing.B) {
	m, _ := newTestModel(b, 140, 40, Options{})
	pr := progressEv(1000, 5)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		feed(m, pr)
	}
}
