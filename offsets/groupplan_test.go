package offsets

import "testing"

func TestGroupPlan(t *testing.T) {
	ev := func(p int32) Partition { return Partition{Topic: "events", Partition: p} }
	audit := Partition{Topic: "audit", Partition: 0}
	committed := map[Partition]int64{ev(0): 90, audit: 4, ev(2): 50}
	next := map[Partition]int64{ev(1): 7, ev(0): 100, ev(2): 30}
	moves := GroupPlan(committed, next)
	want := []struct {
		p         Partition
		committed int64
		next      int64
		diff      int64
		hasDiff   bool
	}{
		{ev(0), 90, 100, 10, true},
		{ev(1), -1, 7, 0, false},
		{ev(2), 50, 30, -20, true},
	}
	if len(moves) != len(want) {
		t.Fatalf("moves %+v, want %d (audit[0] is not in next and must not be listed)", moves, len(want))
	}
	for i, w := range want {
		m := moves[i]
		d, ok := m.Diff()
		if m.Partition != w.p || m.Committed != w.committed || m.NextOffset != w.next || d != w.diff || ok != w.hasDiff {
			t.Errorf("move %d: %+v diff %d %v, want %+v", i, m, d, ok, w)
		}
	}
	if n := GroupPlanChanges(moves); n != 3 {
		t.Errorf("changes %d, want 3", n)
	}
	same := GroupPlan(map[Partition]int64{ev(0): 100}, map[Partition]int64{ev(0): 100})
	if n := GroupPlanChanges(same); n != 0 {
		t.Errorf("a plan that writes the committed offset again changes %d partitions, want 0", n)
	}
}
