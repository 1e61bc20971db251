package tui

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/offsets"
)

// fakeSetter plans against fixed committed offsets and records writes.
type fakeSetter struct {
	mu        sync.Mutex
	committed map[offsets.Partition]int64
	refusal   string
	plans     int
	writes    []map[offsets.Partition]int64
}

func (f *fakeSetter) PlanGroup(_ context.Context, group string, next map[offsets.Partition]int64) (GroupPlan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans++
	p := GroupPlan{State: "Empty", Refusal: f.refusal, Moves: offsets.GroupPlan(f.committed, next)}
	if f.refusal != "" {
		p.State, p.Members = "Stable", 1
	}
	return p, nil
}

func (f *fakeSetter) SetGroup(_ context.Context, group string, next map[offsets.Partition]int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, maps.Clone(next))
	maps.Copy(f.committed, next)
	return nil
}

// runSettled runs cmd like run, without waiting on the groups view's
// refresh timer.
func runSettled(m *Model, cmd tea.Cmd) {
	for cmd != nil {
		for _, v := range m.views {
			if g, ok := v.(*groupsView); ok {
				g.timer = func(int) tea.Cmd { return nil }
			}
		}
		msg := cmd()
		if msg == nil {
			return
		}
		_, cmd = m.Update(msg)
	}
}

// O on a batch shows the plan first and writes nothing; tab picks the
// batch's end; a second enter writes, and the groups view opens on the
// new offsets.
func TestSetGroupFromABatchPlansThenWrites(t *testing.T) {
	s := &fakeSetter{committed: map[offsets.Partition]int64{part("events", 0): 5, part("events", 1): 112}}
	g := &fakeGroups{total: 1}
	m := liveModel(t, 140, 40, Options{GroupSetter: s, Groups: g})
	press(m, "2") // the batches pane: batch 2 is selected, the newest
	press(m, "O")
	f, ok := m.top().(*setGroupForm)
	if !ok {
		t.Fatalf("O opened %T", m.top())
	}
	typeText(m, "billing")
	runSettled(m, press(m, "enter"))
	sc := screen(m)
	// Batch 2 read events[i] 100i+12 → 100i+14.
	mustContain(t, sc, "Set consumer group offsets · batch 2", "billing (Empty)", "now: from, the group reads the batch again",
		"enter writes 3 partitions to the group")
	if !planRow(sc, "events[0]", "5", "12", "+7") || !planRow(sc, "events[1]", "112", "112", "+0") || !planRow(sc, "events[3]", "-", "312", "-") {
		t.Errorf("the plan's rows are wrong:\n%s", sc)
	}
	if len(s.writes) != 0 {
		t.Fatalf("the plan wrote %v", s.writes)
	}
	press(m, "tab") // the batch's end: the plan is read again
	mustNotContain(t, screen(m), "enter writes")
	runSettled(m, press(m, "enter"))
	sc = screen(m)
	mustContain(t, sc, "now: until, the group goes on after it")
	if !planRow(sc, "events[0]", "5", "14", "+9") || s.plans != 2 || len(s.writes) != 0 {
		t.Fatalf("after tab: plans %d writes %v\n%s", s.plans, s.writes, sc)
	}
	runSettled(m, press(m, "enter"))
	want := map[offsets.Partition]int64{part("events", 0): 14, part("events", 1): 114, part("events", 2): 214, part("events", 3): 314}
	if len(s.writes) != 1 || !maps.Equal(s.writes[0], want) {
		t.Fatalf("wrote %v, want %v", s.writes, want)
	}
	if _, ok := m.top().(*groupsView); !ok || m.viewIndex(f) >= 0 {
		t.Fatalf("after the write the top is %T, want the groups view in place of the form", m.top())
	}
	mustContain(t, screen(m), "consumer group billing set: 4 partitions written")
	if g.reads != 1 {
		t.Errorf("the groups view read the groups %d times, want 1", g.reads)
	}
}

// planRow reports whether a line of s holds fields, one after another.
func planRow(s string, fields ...string) bool {
	want := strings.Join(fields, " ")
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(" "+strings.Join(strings.Fields(line), " ")+" ", " "+want+" ") {
			return true
		}
	}
	return false
}

// viewIndex is v's place in the view stack, -1 when it is not there.
func (m *Model) viewIndex(v view) int {
	for i, w := range m.views {
		if w == v {
			return i
		}
	}
	return -1
}

// A group with live members shows why it cannot be set, and enter
// writes nothing.
func TestSetGroupRefusesALiveGroup(t *testing.T) {
	s := &fakeSetter{committed: map[offsets.Partition]int64{}, refusal: `consumer group "billing" has 1 live member on /10.0.0.5 (state Stable): its offsets are written only while it is inactive; stop its consumers first`}
	m := liveModel(t, 140, 40, Options{GroupSetter: s})
	press(m, "2", "O")
	typeText(m, "billing")
	runSettled(m, press(m, "enter"))
	runSettled(m, press(m, "enter"))
	sc := screen(m)
	mustContain(t, sc, "billing (Stable · 1 member)", `has 1 live member on /10.0.0.5 (state Stable)`)
	mustNotContain(t, sc, "enter writes")
	if len(s.writes) != 0 {
		t.Errorf("a live group was written: %v", s.writes)
	}
}

// From the partitions pane, O puts the group at the selected partition's
// acked offset only; the palette lists the action.
func TestSetGroupFromAPartition(t *testing.T) {
	s := &fakeSetter{committed: map[offsets.Partition]int64{}}
	m := liveModel(t, 140, 40, Options{GroupSetter: s, Groups: &fakeGroups{}})
	press(m, ":")
	typeText(m, "set group")
	mustContain(t, stripANSI(m.top().View()), "O          set group offsets…")
	runSettled(m, press(m, "enter"))
	f, ok := m.top().(*setGroupForm)
	if !ok {
		t.Fatalf("the palette opened %T", m.top())
	}
	p, _ := m.parts.selected()
	if !strings.Contains(f.title(), p.Partition.String()+" at its acked offset") || len(f.targets) != 1 {
		t.Errorf("title %q targets %v", f.title(), f.targets)
	}
	typeText(m, "ops")
	runSettled(m, press(m, "enter"))
	mustNotContain(t, screen(m), "tab: at the batch's")
	runSettled(m, press(m, "enter"))
	if len(s.writes) != 1 || len(s.writes[0]) != 1 || s.writes[0][p.Partition] != p.Stored {
		t.Errorf("wrote %v, want %s at %d only", s.writes, p.Partition, p.Stored)
	}
}

// Without a setter (kbatch spark), O says it is not available.
func TestSetGroupNotAvailable(t *testing.T) {
	m := liveModel(t, 140, 40, Options{})
	press(m, "2", "O")
	noViewOpen(t, m)
}

// A blank group name (spaces only) is refused on the form: no plan is
// asked for and nothing is written.
func TestSetGroupRefusesABlankName(t *testing.T) {
	s := &fakeSetter{committed: map[offsets.Partition]int64{}}
	m := liveModel(t, 140, 40, Options{GroupSetter: s})
	press(m, "2", "O")
	typeText(m, "   ")
	runSettled(m, press(m, "enter"))
	runSettled(m, press(m, "enter"))
	mustContain(t, screen(m), "type the consumer group's name")
	if s.plans != 0 || len(s.writes) != 0 {
		t.Errorf("a blank name was planned %d times and written %v", s.plans, s.writes)
	}
}
