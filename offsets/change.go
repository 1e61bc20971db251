package offsets

import (
	"fmt"
	"strings"
	"time"
)

// ChangeEvent describes a change of next offsets made by hand (code
// CodeSet or CodeImport) as the one event Store.SetNext records: before
// are the stream's next offsets, next the new ones, what says what made
// the change. The event names the partition and carries the move (From,
// To) when one partition changes, names the topic when one topic does, and
// its message lists the moves in partition order, at most 20. For
// before {events[0]: 5} and next {events[0]: 80, events[1]: 120}:
//
//	Topic "events", Partition -1,
//	Message "offsets set ...: events[0] 5→80, events[1] -→120"
func ChangeEvent(now time.Time, code string, before, next map[Partition]int64, what string) Event {
	parts := SortedPartitions(next)
	moves := make([]string, 0, len(parts))
	for _, p := range parts {
		old := "-"
		if off, ok := before[p]; ok {
			old = fmt.Sprint(off)
		}
		moves = append(moves, fmt.Sprintf("%s %s→%d", p, old, next[p]))
	}
	var at Partition
	at.Partition = -1
	if len(parts) > 0 {
		at.Topic = parts[0].Topic
		if parts[len(parts)-1].Topic != at.Topic {
			at.Topic = ""
		}
	}
	if len(parts) == 1 {
		at.Partition = parts[0].Partition
	}
	const maxMoves = 20
	list := strings.Join(moves, ", ")
	if len(moves) > maxMoves {
		list = strings.Join(moves[:maxMoves], ", ") + fmt.Sprintf(" and %d more", len(moves)-maxMoves)
	}
	e := NewEvent(now, code, at, what+": "+list)
	if len(parts) == 1 {
		e.To = next[parts[0]]
		if off, ok := before[parts[0]]; ok {
			e.From = off
		}
	}
	return e
}
