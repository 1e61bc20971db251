package tui

import (
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/kbatch-dev/kbatch/offsets"
)

// Every binding of the key map is in the palette (but moves), and the
// palette's key press for it prints as the binding's key: choosing an
// action is typing its key.
func TestPaletteListsEveryBinding(t *testing.T) {
	km := newKeyMap()
	entries := paletteEntries(km)
	byPress := map[string]bool{}
	for _, e := range entries {
		byPress[e.press] = true
		if got := pressOf(e.press).String(); got != e.press {
			t.Errorf("palette sends %q for %q", got, e.press)
		}
	}
	v := reflect.ValueOf(km)
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		b, ok := v.Field(i).Interface().(key.Binding)
		if !ok || paletteSkip[name] {
			continue
		}
		if !byPress[b.Keys()[0]] {
			t.Errorf("binding %s (%v) is not in the palette", name, b.Keys())
		}
	}
	for _, k := range []string{"1", "2", "3", "4"} {
		if !byPress[k] {
			t.Errorf("pane %s is not in the palette", k)
		}
	}
}

// Every binding's keys are explained in the help: one table (the key
// map) feeds the keys, the palette and this check.
func TestHelpExplainsEveryBinding(t *testing.T) {
	m, _ := newTestModel(t, 220, 80, Options{})
	press(m, "?")
	tokens := map[string]bool{}
	for _, line := range strings.Split(screen(m), "\n") {
		line = strings.Trim(line, "┃│ ")
		if len(line) < 2 {
			continue
		}
		for _, tok := range strings.Fields(ansiCut(line, 15)) {
			tokens[tok] = true
		}
	}
	v := reflect.ValueOf(m.c.keys)
	for i := 0; i < v.NumField(); i++ {
		b, ok := v.Field(i).Interface().(key.Binding)
		if !ok {
			continue
		}
		found := false
		for _, k := range b.Keys() {
			name := map[string]string{"up": "↑", "down": "↓"}[k]
			if name == "" {
				name = k
			}
			found = found || tokens[name]
		}
		if !found {
			t.Errorf("help has no line for %s %v", v.Type().Field(i).Name, b.Keys())
		}
	}
}

func ansiCut(s string, w int) string {
	r := []rune(s)
	return string(r[:min(len(r), w)])
}

func TestFuzzyScore(t *testing.T) {
	if _, ok := fuzzyScore("consumer groups C", "cgr"); !ok {
		t.Error("cgr does not match consumer groups")
	}
	if _, ok := fuzzyScore("seek s", "sk"); !ok {
		t.Error("sk does not match seek")
	}
	if _, ok := fuzzyScore("seek s", "kz"); ok {
		t.Error("kz matches seek")
	}
	a, _ := fuzzyScore("replay r", "rep")
	b, _ := fuzzyScore("pause partition P", "rep")
	if a <= b {
		t.Errorf("replay scores %d, not above pause partition's %d for rep", a, b)
	}
}

// : lists the actions; typing narrows them; enter runs the first, as if
// its key was typed on the screen under the palette.
func TestPaletteRunsTheChosenAction(t *testing.T) {
	g := &fakeGroups{total: 3}
	m := liveModel(t, 140, 40, Options{Groups: g, Replayer: &fakeReplayer{}})
	press(m, ":")
	if _, ok := m.top().(*palette); !ok {
		t.Fatalf(": opened %T", m.top())
	}
	var names []string
	for _, e := range m.top().(*palette).all {
		names = append(names, e.name)
	}
	mustContain(t, strings.Join(names, "|"), "seek", "consumer groups", "produce a record", "switch cluster", "focus the events pane")
	typeText(m, "groups")
	s := stripANSI(m.top().View())
	mustContain(t, s, "C          consumer groups")
	mustNotContain(t, s, "seek")
	runCmd(m, press(m, "enter"))
	if _, ok := m.top().(*groupsView); !ok {
		t.Fatalf("the palette ran into %T, want the groups view", m.top())
	}
	// A pane by number.
	press(m, "esc", ":")
	typeText(m, "focus events")
	runCmd(m, press(m, "enter"))
	if m.top() != nil || m.focus != focusEvents {
		t.Errorf("top %T focus %d, want the events pane", m.top(), m.focus)
	}
}

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
	noViewOpen(t, m, "a: needs --ack manual")
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
