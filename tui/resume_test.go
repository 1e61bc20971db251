package tui

import (
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A run that resumes a stored stream says so in the status line and the
// events pane, and shows the last batches of the store's batch log.
func TestResumeShowsTheStoredStream(t *testing.T) {
	acked := time.Date(2026, 11, 28, 14, 2, 11, 0, time.UTC)
	log := ackedLog(acked, 12, 11, 2)
	m, _ := newTestModel(t, 140, 40, Options{StorePath: "/state/offsets.db",
		Resume: &Resume{LastBatch: 12, AckedAt: acked, Batches: log}})
	feed(m, started(2))
	s := screen(m)
	mustContain(t, s, "resumed stream events from /state/offsets.db after batch 12 (acked 2026-11-28 14:02:11)",
		"Events 1", "resumed", "Batches 2 · latest 12", "earlier run", "Records · batch 12 · earlier run, records not kept",
		"the store keeps its ranges, not its records")
	// A new batch of this run follows them.
	feed(m, batchEv(13, 2, 2, offsets.StateAcked))
	mustContain(t, screen(m), "Batches 3 · latest 13", "Records · batch 13 · 4 of 4 records sampled")
	// The notice shows once, not at every Started.
	feed(m, started(2))
	mustContain(t, screen(m), "Events 1")
}

// A fresh stream (nothing acked before) says nothing about resuming.
func TestNoResumeNoticeForAFreshStream(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Resume: &Resume{}})
	feed(m, started(2))
	mustNotContain(t, screen(m), "resumed")
}

// A batch of the earlier run that this run re-delivers (planned, never
// acked) shows the records read again, not "records not kept": one
// waiting for a manual ack must not be acked blind.
func TestRedeliveredBatchShowsItsRecords(t *testing.T) {
	var log []offsets.Batch
	for id := uint64(3); id >= 2; id-- {
		state := offsets.StateAcked
		if id == 3 {
			state = offsets.StatePlanned
		}
		log = append(log, batch(id, 2, 0, state).Batch)
	}
	m, _ := newTestModel(t, 140, 40, Options{Resume: &Resume{LastBatch: 2, Batches: log}})
	feed(m, started(2))
	mustContain(t, screen(m), "Records · batch 3 · earlier run, records not kept")
	re := batch(3, 2, 2, offsets.StatePlanned)
	re.Redelivered = true
	feed(m, &consumer.BatchEvent{Batch: re})
	s := screen(m)
	mustContain(t, s, "Records · batch 3 · 4 of 4 records sampled")
	mustNotContain(t, s, "records not kept")
}

// ackedLog is a store's batch log, newest first: batches newest down to
// oldest over parts partitions, each acked at acked.
func ackedLog(acked time.Time, newest, oldest uint64, parts int) []offsets.Batch {
	var log []offsets.Batch
	for id := newest; id >= oldest; id-- {
		b := batch(id, parts, 0, offsets.StateAcked).Batch
		b.AckedAt = acked
		log = append(log, b)
	}
	return log
}
