package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

func TestGroupsView(t *testing.T) {
	g := &fakeGroups{total: 7, groups: []ConsumerGroup{
		{Name: "billing", State: "Stable", Members: 2, Offsets: map[offsets.Partition]int64{part("events", 0): 11, part("events", 1): 100}},
		{Name: "audit\x1b[31m", Err: errors.New(`not authorized to read group "audit": the user needs DESCRIBE on it (Kafka ACL)`)},
	}}
	m := liveModel(t, 140, 40, Options{Groups: g})
	runCmd(m, press(m, "C"))
	v, ok := m.top().(*groupsView)
	if !ok {
		t.Fatalf("C opened %T", m.top())
	}
	if len(g.parts) != 4 {
		t.Errorf("asked about %v, want the stream's 4 partitions", g.parts)
	}
	s := screen(m)
	// events[0]: HWM 50, stream next 14 (after batch 2: 12-14), committed
	// 11 is in batch 1's range [10,12).
	mustContain(t, s, "Consumer groups on events · 2 of 7 groups · read 10:00:00, every 5s")
	if !rowHas(s, "billing", "events[0]") || !rowHas(s, "events[0]", "39") || !rowHas(s, "events[0]", "3 behind") || !rowHas(s, "events[0]", "1 [10,12)") {
		t.Errorf("billing's events[0] row is wrong:\n%s", s)
	}
	if !rowHas(s, "events[1]", "14 behind") || !rowHas(s, "billing", "Stable · 2 members") {
		t.Errorf("billing's events[1] row is wrong:\n%s", s)
	}
	mustContain(t, s, `not authorized to read group "audit"`)
	mustNotContain(t, m.View().Content, "\x1b[31m")

	// The refresh reads again; a failure keeps the rows and says so.
	g.mu.Lock()
	g.err = errors.New("listing consumer groups: broker down")
	g.mu.Unlock()
	runCmd(m, m.groupsTick(groupsTickMsg{id: v.id}))
	if g.reads != 2 {
		t.Errorf("%d reads, want 2", g.reads)
	}
	s = screen(m)
	mustContain(t, s, "the last refresh failed: listing consumer groups: broker down", "billing")

	// Closed: a late tick reads nothing.
	press(m, "esc")
	runCmd(m, m.groupsTick(groupsTickMsg{id: v.id}))
	if g.reads != 2 {
		t.Errorf("a closed view read again (%d reads)", g.reads)
	}
}

// A cluster with no group at all says so, not "none of the 0 groups".
func TestGroupsViewNoGroupAtAll(t *testing.T) {
	m := liveModel(t, 140, 40, Options{Groups: &fakeGroups{}})
	runCmd(m, press(m, "C"))
	s := screen(m)
	mustContain(t, s, "no consumer group to show: the cluster lists none this user may describe")
	if strings.Contains(s, "none of the 0 groups") {
		t.Errorf("the empty cluster reads as 'none of the 0 groups':\n%s", s)
	}
}

func TestGroupsViewEmptyAndError(t *testing.T) {
	g := &fakeGroups{total: 4}
	m := liveModel(t, 140, 40, Options{Groups: g})
	runCmd(m, press(m, "C"))
	mustContain(t, screen(m), "none of the 4 groups this user may describe has committed offsets on these topics")
	press(m, "esc")
	g.err = errors.New("not authorized to list consumer groups: the user needs DESCRIBE on the cluster or on the groups (Kafka ACL)")
	runCmd(m, press(m, "C"))
	mustContain(t, screen(m), "cannot read consumer groups: not authorized to list consumer groups")
}
