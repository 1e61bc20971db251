package tui

import (
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Records of aborted transactions (a stream reading uncommitted) are
// marked in the records pane and say so in their detail; the others are
// not.
func TestAbortedRecordsAreMarked(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	b := batch(1, 2, 0, offsets.StateAcked)
	b.Aborted = []offsets.Range{{Partition: part("events", 1), From: 100, Until: 101}}
	feed(m, started(2), &consumer.BatchEvent{Batch: b})
	press(m, "3")
	s := screen(m)
	if n := strings.Count(s, abortedMark); n != 1 {
		t.Fatalf("%d records marked aborted, want 1:\n%s", n, s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, abortedMark) && !strings.Contains(l, `{"seq":100}`) {
			t.Fatalf("the wrong record is marked: %q", l)
		}
	}
	press(m, "enter")
	mustNotContain(t, screen(m), "aborted transaction")
	press(m, "esc", "j", "j", "enter")
	mustContain(t, screen(m), "Record events[1] @ 100", "aborted transaction")
}
