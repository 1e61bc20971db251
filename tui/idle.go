package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kbatch-dev/kbatch/offsets"
)

// idleReason says why there is no batch yet, for the empty batches pane:
// where the stream reads from, what there is to read, and what to do.
func (m *Model) idleReason() []string {
	rows := m.parts.rows
	switch {
	case m.stream.ended != nil || m.stream.closed:
		return []string{"the stream ended before its first batch"}
	case len(rows) == 0:
		return []string{"waiting for the stream to start…"}
	case m.stream.paused:
		return []string{"paused before the first batch: space resumes"}
	}
	var lag int64
	lagging, errored, paused, corrupt := 0, 0, 0, 0
	for _, r := range rows {
		if l := m.parts.lag(r); l > 0 {
			lag += l
			lagging++
			if r.Paused {
				paused++
			}
		}
		if r.Errored {
			errored++
		}
		if r.Corrupt {
			corrupt++
		}
	}
	from := m.startPhrase()
	switch {
	case corrupt > 0 && corrupt == len(rows):
		return []string{fmt.Sprintf("%s: every partition stopped at a corrupt record batch (the events pane says which and why): s seeks past it",
			from)}
	case lag > 0 && errored > 0:
		return []string{fmt.Sprintf("%s: %s to read, but the broker fails for %s (the events pane says why; kbatch retries)",
			from, plural(lag, "record", "records"), plural(int64(errored), "partition", "partitions"))}
	case lag > 0 && paused == lagging:
		return []string{fmt.Sprintf("%s: %s to read on %s, all paused: P resumes the selected one",
			from, plural(lag, "record", "records"), plural(int64(lagging), "partition", "partitions"))}
	case lag > 0:
		return []string{fmt.Sprintf("%s: %s to read on %s; the first batch is cut within the interval (%s)",
			from, plural(lag, "record", "records"), plural(int64(lagging), "partition", "partitions"), m.stream.interval)}
	}
	since := "since the start at " + m.stream.startedAt.In(m.c.loc).Format("15:04:05")
	if m.stream.startedAt.IsZero() {
		since = "yet"
	}
	return []string{
		fmt.Sprintf("%s (%s): nothing new to read; no new records %s", from, m.atEnd(), since),
		"s seeks the selected partition, S seeks them all (earliest, -100, @-1h)",
	}
}

// startPhrase names where the partitions started: "reading from latest",
// "reading from stored positions on 2, latest on 1".
func (m *Model) startPhrase() string {
	counts := map[offsets.Source]int{}
	for _, r := range m.parts.rows {
		counts[r.Source]++
	}
	name := func(s offsets.Source) string {
		switch s {
		case offsets.SourceResetLatest:
			return "latest"
		case offsets.SourceResetEarly:
			return "earliest"
		case offsets.SourceStored:
			return "stored positions"
		case offsets.SourceExplicit:
			return "explicit offsets"
		case offsets.SourceTimestamp:
			return "a time"
		case offsets.SourceImport:
			return "imported offsets"
		case offsets.SourceNewPartition:
			return "new partitions' log start"
		}
		return string(s)
	}
	if len(counts) == 1 {
		for s := range counts {
			return "reading from " + name(s)
		}
	}
	var parts []string
	for s, n := range counts {
		parts = append(parts, fmt.Sprintf("%s on %d", name(s), n))
	}
	sort.Strings(parts)
	return "reading from " + strings.Join(parts, ", ")
}

// atEnd says where the partitions are when they have read everything:
// "offset 10203" for one, "offsets 10203, 88, 4521 on 3 partitions".
func (m *Model) atEnd() string {
	rows := m.parts.rows
	if len(rows) == 1 {
		return fmt.Sprintf("offset %d", rows[0].NextOffset)
	}
	var offs []string
	for i, r := range rows {
		if i == 3 {
			offs = append(offs, "…")
			break
		}
		offs = append(offs, fmt.Sprint(r.NextOffset))
	}
	return fmt.Sprintf("offsets %s on %s", strings.Join(offs, ", "), plural(int64(len(rows)), "partition", "partitions"))
}
