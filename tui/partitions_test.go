package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

func TestSortPartitionsCycles(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	pr := progressEv(3, 0)
	pr.Partitions[0].Lag, pr.Partitions[1].Lag, pr.Partitions[2].Lag = 5, 50, 20
	pr.Partitions[0].Rate, pr.Partitions[1].Rate, pr.Partitions[2].Rate = 9, 1, 3
	feed(m, started(3), pr)
	order := func() string { return rowOrder(m) }
	press(m, "j") // select events[1]
	press(m, "o")
	if got := order(); got != "events[1] events[2] events[0]" {
		t.Errorf("by lag: %s", got)
	}
	mustContain(t, screen(m), "Partitions 3 · lag 75 · sorted by lag")
	if sel, _ := m.parts.selected(); sel.Partition != part("events", 1) {
		t.Errorf("selection moved to %s", sel.Partition)
	}
	press(m, "o")
	if got := order(); got != "events[0] events[2] events[1]" {
		t.Errorf("by rate: %s", got)
	}
	mustContain(t, screen(m), "sorted by rate")
	// The order holds across progress events.
	feed(m, pr)
	if got := order(); got != "events[0] events[2] events[1]" {
		t.Errorf("by rate after progress: %s", got)
	}
	press(m, "o")
	if got := order(); got != "events[0] events[1] events[2]" {
		t.Errorf("by name: %s", got)
	}
	mustNotContain(t, screen(m), "· sorted by")
}

// TestManualAckSortsAndFiltersByTheLagShown: under --ack manual LAG is the
// high watermark minus the acked position, and sorting by lag, a lag>N
// filter and the idle text go by that same LAG, not by HWM - NEXT
// (usually 0 there: read ahead, not acked), so they agree with the column.
func TestManualAckSortsAndFiltersByTheLagShown(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{ManualAck: true})
	pr := progressEv(3, 0)
	for i, acked := range []int64{45, 100, 230} {
		r := &pr.Partitions[i]
		r.NextOffset, r.Lag, r.Acked = r.HighWatermark, 0, acked // all read, some acked
	}
	feed(m, started(3), pr)
	order := func() string { return rowOrder(m) }
	press(m, "o")
	if got := order(); got != "events[1] events[2] events[0]" { // acked lag 50, 20, 5
		t.Errorf("by lag: %s", got)
	}
	press(m, "/")
	typeText(m, "lag>10")
	press(m, "enter")
	mustContain(t, screen(m), `filter "lag>10" 2 of 3`)
}

// TestLagStaysWithoutTheMarkerAfterABatch: the stream counts no lag for
// offsets read past NEXT that hold no record (a final transaction
// marker); a batch or a seek form keeps the stream's LAG rather than
// recomputing HWM - NEXT, which would show LAG 1 until the next progress
// event.
func TestLagStaysWithoutTheMarkerAfterABatch(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	pr := progressEv(1, 0)
	r := &pr.Partitions[0]
	r.HighWatermark, r.NextOffset, r.Read, r.Lag = 18, 15, 18, 0 // records to 14, markers after
	feed(m, started(1), pr, batchEv(1, 1, 15, offsets.StateAcked))
	row := m.parts.rows[0]
	if row.Lag != 0 {
		t.Errorf("after the batch: NEXT %d, HWM %d, LAG %d; want 0 (read to 18)", row.NextOffset, row.HighWatermark, row.Lag)
	}
}

// rowOrder lists the partitions pane's rows in their order.
func rowOrder(m *Model) string {
	var names []string
	for _, r := range m.parts.rows {
		names = append(names, r.Partition.String())
	}
	return strings.Join(names, " ")
}

// A partition stopped at a corrupt record batch says `corrupt` in its
// STATE (it showed `live`, or `error` while it was retried for ever), the
// event is in the events pane in the colour of errors, and the state
// goes once progress says the partition reads again (a seek).
func TestCorruptPartitionRow(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	pr := progressEv(3, 1)
	pr.Partitions[1].Corrupt, pr.Partitions[1].CorruptAt = true, 110
	e := offsets.NewEvent(t0, offsets.CodeCorrupt, part("events", 1),
		"events[1]: corrupt record batch at offset 110: CRC mismatch; the partition stops before it: seek past it to read on")
	e.Expected = 110
	feed(m, started(3), pr, &consumer.Notice{Event: e})
	s := screen(m)
	if !rowHas(s, "events[1]  stored", "corrupt") || rowHas(s, "events[0]  stored", "corrupt") || rowHas(s, "events[2]  stored", "corrupt") {
		t.Fatalf("STATE should say corrupt for events[1] alone:\n%s", s)
	}
	mustContain(t, s, "corrupt-batch", "corrupt record batch at offset 110")
	if got := eventStyle(&m.c.theme, offsets.CodeCorrupt).Render("x"); got != m.c.theme.bad.Render("x") {
		t.Errorf("the corrupt-batch event is not drawn as an error")
	}
	if !m.parts.matchTerm(pr.Partitions[1], "corrupt") || m.parts.matchTerm(pr.Partitions[0], "corrupt") {
		t.Error("the partition filter's state corrupt does not pick the corrupt partition alone")
	}
	feed(m, progressEv(3, 1))
	if s := screen(m); rowHas(s, "events[1]  stored", "corrupt") {
		t.Fatalf("STATE still says corrupt once the partition reads again:\n%s", s)
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

// S seeks every partition of the stream; -N past the log start moves each
// to its log start and the status line says so (one rule, never silent).
func TestSeekAllMovesEveryPartition(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	feed(m, started(3), progressEv(3, 1))
	run(m, press(m, "S"))
	mustContain(t, screen(m), "Seek 3 partitions", "events: 3 partitions", "log start 0", "high watermark 50 to 250",
		"bounds listed 10:00:00", "moves to the nearest end")
	typeText(m, "-1000")
	run(m, press(m, "enter"))
	want := []string{"seek events[0] 0", "seek events[1] 0", "seek events[2] 0"}
	if got := fs.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	mustNotContain(t, screen(m), "Seek 3 partitions")
	mustContain(t, screen(m), "seek: 3 partitions moved", "3 moved to the nearest end of their offsets")
	// The seek events that follow go to the events pane; the summary stays.
	ev := offsets.NewEvent(t0, offsets.CodeSeek, part("events", 2), "events[2]: seek from 210 to 0")
	feed(m, &consumer.Notice{Event: ev})
	mustContain(t, screen(m), "seek: 3 partitions moved", "events[2]: seek from 210 to 0")
}

// TOPIC= and TOPIC:P= narrow S as -o does; a topic the stream does not
// read is refused in the form, nothing moves.
func TestSeekAllNarrowsToATopic(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	st := startedWithOrders(2)
	feed(m, st)
	run(m, press(m, "S"))
	mustContain(t, screen(m), "events: 2 partitions", "orders: 1 partition ", "offset> events=")
	retype(m, "events=", "nope=1")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "nope is not a topic of this stream (events, orders)")
	if len(fs.Calls()) != 0 {
		t.Fatalf("a refused form moved partitions: %v", fs.Calls())
	}
	retype(m, "nope=1", "events:1=earliest")
	run(m, press(m, "enter"))
	if got := fs.Calls(); !slices.Equal(got, []string{"seek events[1] 0"}) {
		t.Fatalf("calls %v", got)
	}
	run(m, press(m, "S"))
	retype(m, "events=", "orders=latest")
	run(m, press(m, "enter"))
	if got := fs.Calls(); got[len(got)-1] != "seek orders[0] 50" || len(got) != 2 {
		t.Fatalf("calls %v", got)
	}
}

// The seek form shows the bounds listed when it opens, not the stale ones
// of the last progress; the seek of a paused partition never shows NEXT
// above HWM; a too-large offset and @2099 follow the same stated rule.
func TestSeekFiguresAgree(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), progressEv(2, 1)) // events[1]: HWM 150
	fs.bounds = map[offsets.Partition]offsets.Bounds{part("events", 1): {LogStart: 20, HighWatermark: 10203}}
	run(m, press(m, "P", "j", "s"))
	mustContain(t, screen(m), "log start 20 · high watermark 10203")
	typeText(m, "9000")
	run(m, press(m, "enter"))
	row := m.parts.rows[m.parts.index[part("events", 1)]]
	if row.NextOffset != 9000 || row.HighWatermark < row.NextOffset || row.LogStart != 20 {
		t.Fatalf("after the seek: %+v", row)
	}
	mustContain(t, screen(m), "seek: events[1] moves to 9000")

	run(m, press(m, "s"))
	typeText(m, "99999999")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "seek: events[1] moves to 10203: offset 99999999 is past the high watermark: moved to 10203")

	run(m, press(m, "s"))
	typeText(m, "@2099-01-01T00:00:00Z")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "no record at or after 2099-01-01T00:00:00Z: moved to the high watermark 10203")
}

// A progress that still has the stale high watermark does not undo what
// the seek showed beyond the figures the stream itself reports.
func TestSeekMovedKeepsHWMAtOrAboveNext(t *testing.T) {
	p := newPartitionsPane(&common{theme: newTheme(), keys: newKeyMap()})
	p.start([]offsets.Start{{Partition: part("events", 0), NextOffset: 10, Bounds: offsets.Bounds{HighWatermark: 10}}})
	p.moved(consumer.SeekTarget{Partition: part("events", 0), Offset: 500, Bounds: offsets.Bounds{LogStart: 0, HighWatermark: 600}})
	if r := p.rows[0]; r.NextOffset != 500 || r.HighWatermark != 600 || r.Lag != 100 || r.Source != offsets.SourceExplicit {
		t.Fatalf("row %+v", r)
	}
	if !strings.Contains(p.title(), "lag 100") {
		t.Fatalf("title %q", p.title())
	}
}

// retype erases old from the field with focus, a backspace a character,
// and types text.
func retype(m *Model, old, text string) {
	for range old {
		press(m, "backspace")
	}
	typeText(m, text)
}
