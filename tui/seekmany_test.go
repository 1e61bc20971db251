package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

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
