package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
)

// paneTitles are the four panes' title words.
var paneTitles = []string{"Partitions", "Batches", "Records", "Events"}

// The layout follows width and height: side by side from 120×32, stacked
// on a narrower screen that is tall (112×45 shows every pane, not one
// pane and 35 blank lines), tabs when small.
func TestLayoutByWidthAndHeight(t *testing.T) {
	for _, tt := range []struct {
		w, h int
		want layoutKind
	}{
		{140, 40, layoutWide}, {120, 32, layoutWide}, {300, 32, layoutWide},
		{112, 45, layoutStacked}, {80, 38, layoutStacked}, {60, 60, layoutStacked}, {140, 38, layoutWide},
		{80, 24, layoutTabs}, {119, 37, layoutTabs}, {140, 31, layoutTabs}, {100, 30, layoutTabs},
	} {
		t.Run(fmt.Sprintf("%dx%d", tt.w, tt.h), func(t *testing.T) {
			m, _ := newTestModel(t, tt.w, tt.h, Options{})
			feed(m, twoTopics()...)
			if got := m.layoutKind(); got != tt.want {
				t.Fatalf("layout %d, want %d", got, tt.want)
			}
			s := screen(m)
			for _, title := range paneTitles {
				if tt.want != layoutTabs && !strings.Contains(s, "━ "+title) && !strings.Contains(s, "─ "+title) {
					t.Fatalf("pane %s not on screen:\n%s", title, s)
				}
			}
			if tt.want == layoutTabs {
				mustContain(t, s, "1 Partitions", "tab/1-4 switch")
			} else {
				mustNotContain(t, s, "tab/1-4 switch")
			}
			checkGrid(t, m.View().Content, tt.w, tt.h)
		})
	}
}

// At 112×45 the stacked panes leave no long run of blank lines (one pane
// and 35 blank lines before), and the records get more room than batches.
func TestStackedLayoutHasNoBlankScreen(t *testing.T) {
	m, _ := newTestModel(t, 112, 45, Options{})
	feed(m, twoTopics()...)
	blank := 0
	for _, l := range strings.Split(screen(m), "\n") {
		inner := strings.Trim(l, "│┃ ")
		if inner == "" {
			blank++
			if blank > 12 {
				t.Fatalf("more than 12 blank lines in a row:\n%s", screen(m))
			}
			continue
		}
		blank = 0
	}
	r := m.paneRects()
	if r[focusRecords].h <= r[focusBatches].h {
		t.Fatalf("records pane %d lines, batches %d: records should get more", r[focusRecords].h, r[focusBatches].h)
	}
}

// The wide layout gives the batches pane what its table needs and the
// records pane the rest, so VALUE is wide at 140×40 (it was 27).
func TestValueColumnGetsTheSpareWidth(t *testing.T) {
	valueW := func(m *Model) int {
		for _, c := range m.records.list.cols {
			if c.title == "VALUE" {
				return c.width
			}
		}
		return 0
	}
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, twoTopics()...)
	if w := valueW(m); w < 36 {
		t.Fatalf("VALUE is %d wide at 140×40, want at least 36", w)
	}
	mustContain(t, screen(m), "TIMESTAMP", "KEY")
	// The batches pane has no blank columns past its last column.
	r := m.paneRects()
	if r[focusBatches].w != m.batches.naturalWidth() {
		t.Fatalf("batches pane %d wide, its table needs %d", r[focusBatches].w, m.batches.naturalWidth())
	}
	// A re-delivered batch widens STATE, and the panes are laid out again.
	before := m.batches.naturalWidth()
	b := batch(3, 2, 10, "acked")
	b.Redelivered = true
	feed(m, &consumer.BatchEvent{Batch: b})
	if after := m.batches.naturalWidth(); after <= before {
		t.Fatalf("natural width %d after a redelivered batch, was %d", after, before)
	}
	if m.paneRects()[focusBatches].w != m.laidOutBatchesW || m.laidOutBatchesW != m.batches.naturalWidth() {
		t.Fatal("the panes were not laid out again for the wider STATE")
	}
	checkGrid(t, m.View().Content, 140, 40)
}

// A narrow batches pane keeps what the selection does in its title.
func TestNarrowBatchesTitleKeepsHolding(t *testing.T) {
	m, _ := newTestModel(t, 120, 32, Options{})
	feed(m, started(1))
	for id := uint64(1); id <= 12; id++ {
		feed(m, batchEv(id+12340, 1, int64(2*id), "acked"))
	}
	press(m, "2", "j")
	mustContain(t, screen(m), "holding 12351 (g: follow)")
}

// z wraps values over several lines, V shows the value alone, l and h
// scroll the VALUE column sideways.
func TestValueModes(t *testing.T) {
	long := `{"user":"user-7","items":["` + strings.Repeat("abcdefghij", 20) + `"],"end":"THE-END"}`
	m, _ := newTestModel(t, 80, 24, Options{})
	feed(m, started(1))
	b := batch(1, 1, 0, "acked")
	b.Samples[0].Value = []byte(long)
	feed(m, &consumer.BatchEvent{Batch: b})
	press(m, "3")
	mustNotContain(t, screen(m), "THE-END")

	press(m, "z")
	s := screen(m)
	mustContain(t, s, "wrapped", "abcdefghij")
	if n := strings.Count(s, "abcdefghij"); n < 8 {
		t.Fatalf("wrapped value shows %d pieces, want the value over several lines:\n%s", n, s)
	}
	mustContain(t, s, "plain value") // the next record still shows
	press(m, "z")
	mustNotContain(t, screen(m), "wrapped")

	press(m, "V")
	s = screen(m)
	mustContain(t, s, "value only")
	mustNotContain(t, s, "OFFSET", "TIMESTAMP")
	press(m, "V")
	mustContain(t, screen(m), "OFFSET")

	for i := 0; i < 40 && !strings.Contains(screen(m), "THE-END"); i++ {
		press(m, "l")
	}
	s = screen(m)
	mustContain(t, s, "THE-END", "from column ")
	mustNotContain(t, s, `{"user":"user-7"`)
	for i := 0; i < 40; i++ {
		press(m, "h")
	}
	mustContain(t, screen(m), `{"user":"user-7"`)
	mustNotContain(t, screen(m), "from column")
	checkGrid(t, m.View().Content, 80, 24)
}

// A wrapped list keeps the selected record whole on screen as the
// selection moves down past the bottom.
func TestWrappedListKeepsTheSelectionInSight(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Options{})
	feed(m, started(1))
	b := batch(1, 1, 0, "acked")
	b.Samples = nil
	for i := 0; i < 12; i++ {
		b.Samples = append(b.Samples, msg("events", 0, int64(i), fmt.Sprintf("k%d", i), fmt.Sprintf("rec-%02d-", i)+strings.Repeat("x", 150)))
	}
	feed(m, &consumer.BatchEvent{Batch: b})
	press(m, "3", "z")
	for i := 0; i < 9; i++ {
		press(m, "j")
	}
	s := screen(m)
	mustContain(t, s, "> ", "rec-09-")
	mustNotContain(t, s, "rec-00-")
	checkGrid(t, m.View().Content, 80, 24)
}

func TestHighlight(t *testing.T) {
	for _, tt := range []struct{ cell, q, want string }{
		{"user-7 user-7", "USER", matchOn + "user" + matchOff + "-7 " + matchOn + "user" + matchOff + "-7"},
		{"abc", "x", "abc"},
		{"abc", "", "abc"},
		{`a\x1b[31m`, "\x1b[31m", `a` + matchOn + `\x1b[31m` + matchOff}, // the query escaped as the cell is
	} {
		if got := highlight(tt.cell, tt.q); got != tt.want {
			t.Errorf("highlight(%q, %q) = %q, want %q", tt.cell, tt.q, got, tt.want)
		}
	}
}

// Without a tab bar (stacked at 80×40) the header's dropped figures show
// in the partitions pane's title instead of being lost.
func TestStackedKeepsDroppedHeaderFigures(t *testing.T) {
	m, _ := newTestModel(t, 80, 40, Options{})
	feed(m, twoTopics()...)
	_, dropped := m.header()
	if len(dropped) == 0 {
		t.Skip("the header fits at 80 columns: nothing to check")
	}
	mustContain(t, screen(m), "interval 1s")
	checkGrid(t, m.View().Content, 80, 40)
}
