package tui

import (
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// With manual acks, a batch waiting for its ack is lag: LAG counts from the
// acked position and AHEAD shows the records read past it, in the rows and
// the title; n says how many records wait behind the batch.
func TestManualAckLagFromAcked(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{ManualAck: true})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StatePlanned))
	pr := &consumer.Progress{Time: t0, Waiting: true}
	for i := int32(0); i < 2; i++ {
		base := 100 * int64(i)
		pr.Partitions = append(pr.Partitions, consumer.PartitionStatus{Partition: part("events", i), Source: offsets.SourceStored,
			NextOffset: base + 30, Stored: base, Acked: base, Ahead: 30, Buffered: 28,
			Bounds: offsets.Bounds{HighWatermark: base + 30}, Lag: 0})
	}
	feed(m, pr)
	s := screen(m)
	mustContain(t, s, "Partitions 2 · lag 60 from acked · 60 read ahead", "AHEAD")
	if r := m.parts.rows[0]; m.parts.lag(r) != 30 {
		t.Fatalf("lag %d of %+v, want 30 (HWM - acked)", m.parts.lag(r), r)
	}
	press(m, "n")
	mustContain(t, screen(m), "(one batch waits at a time); 56 records read ahead on 2 partitions")
	// The ack moves the acked position to the batch's untils at once.
	feed(m, batchEv(1, 2, 0, offsets.StateAcked))
	if r := m.parts.rows[0]; r.Acked != 2 || r.Ahead != 28 {
		t.Fatalf("after the ack: acked %d ahead %d, want 2 and 28", r.Acked, r.Ahead)
	}
}

// Without manual acks LAG stays HWM - NEXT and there is no AHEAD column.
func TestAutoAckLagFromNext(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), progressEv(2, 1))
	s := screen(m)
	mustContain(t, s, "Partitions 2 · lag 80")
	mustNotContain(t, s, "AHEAD", "read ahead")
}
