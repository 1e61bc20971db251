package offsets

// GroupMove is one partition of a plan to write a stream's next offsets
// to a consumer group: what the group has committed there now and what
// the plan writes.
type GroupMove struct {
	Partition
	// Committed is the group's committed next offset now; -1 when the
	// group has no commit on the partition.
	Committed int64
	// NextOffset is the next offset the plan writes.
	NextOffset int64
}

// Diff is NextOffset - Committed: how many offsets the group moves
// forward (negative: back, so it reads those records again). ok is false
// when the group had no commit, so there is nothing to compare with.
func (m GroupMove) Diff() (diff int64, ok bool) {
	if m.Committed < 0 {
		return 0, false
	}
	return m.NextOffset - m.Committed, true
}

// GroupPlan is the plan to write next to a group that has committed
// committed: one move per partition of next, in partition order.
// Partitions the group committed and next does not name are not in the
// plan: a commit leaves them as they are.
//
// Worked example: committed {events[0]: 90, audit[0]: 4} and next
// {events[0]: 100, events[1]: 7} give events[0] 90 → 100 (diff +10) and
// events[1] none → 7 (no diff); audit[0] keeps 4 and is not listed.
func GroupPlan(committed, next map[Partition]int64) []GroupMove {
	parts := SortedPartitions(next)
	moves := make([]GroupMove, len(parts))
	for i, p := range parts {
		moves[i] = GroupMove{Partition: p, Committed: -1, NextOffset: next[p]}
		if off, ok := committed[p]; ok && off >= 0 {
			moves[i].Committed = off
		}
	}
	return moves
}

// GroupPlanChanges counts the moves of a plan that change the group's
// offset (a new commit, or a different one).
func GroupPlanChanges(moves []GroupMove) int {
	n := 0
	for _, m := range moves {
		if m.Committed != m.NextOffset {
			n++
		}
	}
	return n
}
