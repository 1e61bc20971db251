package tui

import (
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// A batch held in the batches pane is shown under HELD, never LIVE, and
// is let go holdIdle after the last key: the next batch is selected.
func TestHoldEndsAfterIdle(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	now := t0
	m.now = func() time.Time { return now }
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked), batchEv(2, 2, 12, offsets.StateAcked))
	press(m, "2", "j")
	mustContain(t, screen(m), "HELD batch 1", "holding 1", "Records · batch 1")
	mustNotContain(t, screen(m), "LIVE")

	now = now.Add(holdIdle - time.Second)
	feed(m, batchEv(3, 2, 14, offsets.StateAcked))
	mustContain(t, screen(m), "HELD batch 1", "Records · batch 1")

	now = now.Add(time.Second)
	feed(m, batchEv(4, 2, 16, offsets.StateAcked))
	s := screen(m)
	mustContain(t, s, "LIVE", "Records · batch 4")
	mustNotContain(t, s, "HELD", "holding")
}

// Reading the records pane keeps its batch while keys come, and follows
// again after holdIdle; g in the batches pane follows at once.
func TestRecordsPaneFollowsAfterIdle(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	now := t0
	m.now = func() time.Time { return now }
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked))
	press(m, "3", "j")
	feed(m, batchEv(2, 2, 12, offsets.StateAcked))
	mustContain(t, screen(m), "Records · batch 1", "HELD batch 1")
	now = now.Add(holdIdle)
	feed(m, batchEv(3, 2, 14, offsets.StateAcked))
	mustContain(t, screen(m), "Records · batch 3", "LIVE")

	press(m, "2", "j")
	feed(m, batchEv(4, 2, 16, offsets.StateAcked))
	mustContain(t, screen(m), "HELD batch 2")
	press(m, "g")
	mustContain(t, screen(m), "LIVE", "Records · batch 4")
}
