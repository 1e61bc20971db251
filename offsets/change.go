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
	e := NewEvent(now, code, at, what+": "+JoinSome(len(moves), MaxListed, func(i int) string { return moves[i] }))
	if len(parts) == 1 {
		e.To = next[parts[0]]
		if off, ok := before[parts[0]]; ok {
			e.From = off
		}
	}
	return e
}

// MaxListed is how many partitions an event's message lists; JoinSome
// counts the others.
const MaxListed = 20

// JoinSome joins the first max of n items with ", " (item formats the
// i-th; only those listed are formatted) and says how many more there
// are: "a, b and 3 more".
func JoinSome(n, max int, item func(i int) string) string {
	var sb strings.Builder
	for i := range min(n, max) {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(item(i))
	}
	if n > max {
		fmt.Fprintf(&sb, " and %d more", n-max)
	}
	return sb.String()
}
