package tui

import (
	"slices"

	"github.com/kbatch-dev/kbatch/consumer"
)

// Partition orders (o cycles them; the pane title says which).
const (
	sortName = iota // topic, then partition number: the stream's order
	sortLag         // largest lag first
	sortRate        // fastest first
	sortCount
)

var sortNames = [sortCount]string{"name", "lag", "rate"}

// sortRows orders rows by the pane's order; ties go by name, so equal
// rows do not swap places between two progress events.
func (p *partitionsPane) sortRows() {
	byName := func(a, b consumer.PartitionStatus) int {
		switch {
		case a.Partition.Less(b.Partition):
			return -1
		case b.Partition.Less(a.Partition):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(p.rows, func(a, b consumer.PartitionStatus) int {
		switch p.order {
		case sortLag: // what LAG shows (from the acked position under --ack manual)
			if la, lb := p.lag(a), p.lag(b); la != lb {
				if la > lb {
					return -1
				}
				return 1
			}
		case sortRate:
			if a.Rate != b.Rate {
				if a.Rate > b.Rate {
					return -1
				}
				return 1
			}
		}
		return byName(a, b)
	})
}

// cycleOrder is o: the next order, the selection kept on its partition.
func (p *partitionsPane) cycleOrder() string {
	p.order = (p.order + 1) % sortCount
	p.setRows(slices.Clone(p.rows))
	return sortNames[p.order]
}

// orderTitle is the pane title's note of the order; the stream's own
// order (by name) needs none.
func (p *partitionsPane) orderTitle() string {
	if p.order == sortName {
		return ""
	}
	return " · sorted by " + sortNames[p.order]
}
