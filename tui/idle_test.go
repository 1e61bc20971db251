package tui

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// latestIdle is a stream started at latest on n partitions with nothing
// new to read.
func latestIdle(n int) *consumer.Started {
	s := started(n)
	for i := range s.Starts {
		s.Starts[i].Source = offsets.SourceResetLatest
		s.Starts[i].NextOffset = s.Starts[i].HighWatermark
	}
	return s
}

// An idle topic read from latest says why the screen is empty and what
// to do, instead of "no batch yet".
func TestIdleScreenSaysWhy(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, latestIdle(3))
	s := screen(m)
	mustContain(t, s, "reading from latest (offsets 50, 150, 250 on 3 partitions): nothing new to read; no new records since the start at 10:00:00",
		"s seeks the selected partition, S seeks them") // the narrow batches pane wraps the rest
	mustNotContain(t, stripANSI(m.batches.View()), "no batch yet")
	// The status line says it too, at every size.
	m2, _ := newTestModel(t, 80, 24, Options{})
	feed(m2, latestIdle(1))
	mustContain(t, screen(m2), "reading from latest (offset 50)")
}

// With records to read, paused, or a failing broker, it says that.
func TestIdleScreenOtherReasons(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), progressEv(2, 0))
	mustContain(t, screen(m), "reading from stored positions: 80 records to read on 2 partitions; the first batch is cut within the interval (1s)")
	pr := progressEv(2, 0)
	pr.Partitions[0].Errored = true
	feed(m, pr)
	mustContain(t, screen(m), "but the broker fails for 1 partition")
	pr = progressEv(2, 0)
	pr.Paused = true
	feed(m, pr)
	mustContain(t, screen(m), "paused before the first batch: space resumes")
	st := started(2)
	st.Starts[1].Source = offsets.SourceResetLatest
	m3, _ := newTestModel(t, 140, 40, Options{})
	feed(m3, st)
	mustContain(t, screen(m3), "reading from latest on 1, stored positions on 1")
}

func TestGoldenIdleScreen(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
		keys []string
	}{{"wide_140x40", 140, 40, nil}, {"small_batches_80x24", 80, 24, []string{"2"}}} {
		t.Run(sz.name, func(t *testing.T) {
			r := runProgram(t, sz.w, sz.h, Options{StorePath: "/state/offsets.db"}, []consumer.Event{latestIdle(3)}, sz.keys...)
			golden.RequireEqual(t, []byte(r.screen))
		})
	}
}
