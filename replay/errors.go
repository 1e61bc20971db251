package replay

import (
	"fmt"
	"strings"

	"github.com/kbatch-dev/kbatch/offsets"
)

// PartialError says a replay read everything that still existed, but
// some requested offsets did not: they were below the log start
// (retention, DeleteRecords). The sink was closed normally, so a file holds
// the available part. ExitCode is 3 (docs/design.md §3).
type PartialError struct {
	// Missing lists the offsets that no longer exist, in task order.
	Missing []offsets.Range
}

func newPartialError(r *Report) *PartialError {
	e := &PartialError{}
	for _, p := range r.Partitions {
		e.Missing = append(e.Missing, p.Missing...)
	}
	return e
}

// Error is one line naming the missing offsets (the first few).
func (e *PartialError) Error() string {
	var n int64
	for _, m := range e.Missing {
		n += m.Span()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "replay incomplete: %d requested offset%s no longer exist%s (below the log start): ",
		n, plural(n), map[bool]string{true: "s"}[n == 1])
	writeFirstRanges(&b, len(e.Missing), func(i int) { b.WriteString(e.Missing[i].String()) })
	b.WriteString("; everything still available was written")
	return b.String()
}

// ExitCode is 3: a replay range was only partly available.
func (e *PartialError) ExitCode() int { return 3 }

// ShortError says a replay read its ranges up to the end of the log seen
// at start, and that end was before an explicit UNTIL: the high watermark,
// or, with --isolation committed, the last stable offset (an open
// transaction holds it back). Everything up to the end was written; the
// offsets after it did not exist yet, or were not committed yet, so a
// later replay can read them. ExitCode is 4.
type ShortError struct {
	// Committed: the end is the last stable offset.
	Committed bool
	// Tasks are the tasks whose UNTIL was beyond the end, in task order.
	Tasks []Task
}

// Short is the ShortError of tasks, or nil when every explicit UNTIL was
// within the end seen at start.
func Short(tasks []Task, committed bool) *ShortError {
	e := &ShortError{Committed: committed}
	for _, t := range tasks {
		if t.Unreachable {
			e.Tasks = append(e.Tasks, t)
		}
	}
	if len(e.Tasks) == 0 {
		return nil
	}
	return e
}

// Error is one line naming the first few partitions, their end and their
// UNTIL, e.g.
//
//	replay short of UNTIL: events[0] ends at the last stable offset 5, before UNTIL 10; the end was seen at start: with --isolation committed it is the last stable offset, which an open transaction holds back; everything up to the end was written
func (e *ShortError) Error() string {
	end, why := "high watermark", "the offsets after it did not exist yet"
	if e.Committed {
		end, why = "last stable offset", "with --isolation committed it is the last stable offset, which an open transaction holds back"
	}
	var b strings.Builder
	b.WriteString("replay short of UNTIL: ")
	writeFirstRanges(&b, len(e.Tasks), func(i int) {
		t := e.Tasks[i]
		fmt.Fprintf(&b, "%s ends at the %s %d, before UNTIL %d", t.Read.Partition, end, t.Bounds.HighWatermark, t.Requested.Until)
	})
	fmt.Fprintf(&b, "; the end was seen at start: %s; everything up to the end was written", why)
	return b.String()
}

// ExitCode is 4: an explicit UNTIL was beyond the end seen at start.
func (e *ShortError) ExitCode() int { return 4 }

// writeFirstRanges writes the first three of n ranges to b with write,
// separated by commas, then how many more there are.
func writeFirstRanges(b *strings.Builder, n int, write func(i int)) {
	for i := range n {
		if i == 3 {
			fmt.Fprintf(b, " and %d more ranges", n-i)
			return
		}
		if i > 0 {
			b.WriteString(", ")
		}
		write(i)
	}
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
