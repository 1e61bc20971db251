package replay

import (
	"fmt"
	"strings"

	"github.com/kbatch-dev/kbatch/offsets"
)

// PartialError says a replay read everything that still existed, but
// some requested offsets did not: they were below the log start
// (retention, DeleteRecords). The sink was closed normally, so a file holds
// the available part. ExitCode is 3 (DESIGN §3).
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
	for i, m := range e.Missing {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more ranges", len(e.Missing)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.String())
	}
	b.WriteString("; everything still available was written")
	return b.String()
}

// ExitCode is 3: a replay range was only partly available.
func (e *PartialError) ExitCode() int { return 3 }

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
