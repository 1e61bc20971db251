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

// The selected row's trend keeps its colour off the reverse-video bar:
// block glyphs in reverse turn into dark blocks on a light bar.
func TestSelectedSparklineIsNotReversed(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2))
	for i := 0; i < 6; i++ {
		feed(m, progressEv(2, float64(i)))
	}
	var sel string
	for _, line := range strings.Split(m.parts.View(), "\n") {
		if strings.Contains(stripANSI(line), "> events[0]") {
			sel = line
		}
	}
	if sel == "" {
		t.Fatal("no selected row")
	}
	w := m.parts.cols[len(m.parts.cols)-1].width
	trend := fit(m.parts.trend[part("events", 0)].render(w), w)
	if !strings.Contains(sel, m.parts.theme.spark.Render(trend)) {
		t.Fatalf("the selected row's trend %q is not drawn in its own style: %q", trend, sel)
	}
	if strings.Contains(sel, m.parts.theme.selected.Render(trend)) {
		t.Fatalf("the trend is drawn reversed: %q", sel)
	}
}

// Help at 80×24 is longer than the screen: its title says there is more
// and which way, and follows the scrolling.
func TestHelpScrollsWithAMoreMark(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Options{})
	feed(m, started(1))
	press(m, "?")
	mustContain(t, screen(m), "Help · every key · ↓ more · lines 1-")
	press(m, "j")
	mustContain(t, screen(m), "↑↓ more · lines 2-")
	press(m, "G")
	mustContain(t, screen(m), "↑ more · lines ")
	m2, _ := newTestModel(t, 140, 120, Options{})
	press(m2, "?")
	mustNotContain(t, screen(m2), "more ·")
}
