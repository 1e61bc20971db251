package tui

import (
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

// The palette greys what cannot run here, says why, lists it after what
// can, and choosing it says why in the status line instead of doing
// nothing.
func TestPaletteGreysWhatCannotRun(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked))
	press(m, ":")
	typeText(m, "ack batch")
	mustContain(t, screen(m), "ack batch · needs --ack manual")
	run(m, press(m, "enter"))
	if m.top() != nil {
		t.Fatalf("choosing ack left %T open", m.top())
	}
	mustContain(t, screen(m), "a: needs --ack manual")
	press(m, ":")
	typeText(m, "write file")
	mustContain(t, screen(m), "write file · in the replay view (r opens one)")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "w: in the replay view (r opens one)")
	if calls := fs.Calls(); len(calls) != 0 {
		t.Fatalf("greyed actions drove the stream: %v", calls)
	}
	// What can run is listed before what cannot.
	press(m, ":")
	p := m.top().(*palette)
	greyed := false
	for _, i := range p.shown {
		if p.all[i].why != "" {
			greyed = true
		} else if greyed {
			t.Fatalf("%q (runs here) is listed after a greyed action", p.all[i].name)
		}
	}
	// In the replay view, w is offered.
	press(m, "esc")
	m2, _ := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}, ManualAck: true})
	feed(m2, started(2), batchEv(1, 2, 10, offsets.StatePlanned))
	run(m2, press(m2, "2", "r", "enter"))
	if _, ok := m2.top().(*replayView); !ok {
		t.Fatalf("r enter opened %T", m2.top())
	}
	press(m2, ":")
	typeText(m2, "write file")
	s := screen(m2)
	if !strings.Contains(s, "write file") || strings.Contains(s, "r opens one") {
		t.Fatalf("in the replay view the palette still greys w:\n%s", s)
	}
}
