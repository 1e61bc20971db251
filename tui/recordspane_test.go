package tui

import (
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Counts agree in number: "1 range", "1 record"; samples say how many of
// the batch's records they are.
func TestPluralsAndSampleCounts(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	b := batch(1, 1, 10, offsets.StateAcked)
	b.Records = 8 // 2 of them kept as samples
	feed(m, started(1), &consumer.BatchEvent{Batch: b})
	mustContain(t, screen(m), "Records · batch 1 · 2 of 8 records sampled")
	press(m, "tab", "enter")
	s := screen(m)
	mustContain(t, s, "1 range [from, until)", "2 of 8 records sampled")
	mustNotContain(t, s, "1 ranges")
	one := batch(2, 1, 12, offsets.StateAcked)
	one.Records, one.Ranges[0].Records, one.Samples = 1, 1, one.Samples[:1]
	press(m, "esc")
	feed(m, &consumer.BatchEvent{Batch: one})
	press(m, "g", "enter")
	mustContain(t, screen(m), "1 record ·", "→ 14 · 1 record", "1 of 1 record sampled:")
}

// A stream of two topics names the topic in PARTITION even when a batch's
// samples all come from one of them.
func TestPartitionColumnNamesTheTopicOfATwoTopicStream(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	st := started(2)
	st.Topics = []string{"events", "orders"}
	feed(m, st, batchEv(1, 2, 10, offsets.StateAcked))
	rows := 0
	for _, line := range strings.Split(screen(m), "\n") {
		if strings.Contains(line, "user-1") {
			rows++
			mustContain(t, line, "events[1]")
		}
	}
	if rows == 0 {
		t.Fatalf("no record row of events[1]:\n%s", screen(m))
	}
}

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
