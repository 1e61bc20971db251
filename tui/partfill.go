package tui

import (
	"fmt"
	"strconv"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// partitionFill fills the rows the partitions tab leaves empty (a small
// screen shows one pane at a time, and a stream of few partitions used a
// third of it) with the selected partition's ranges in the kept batches,
// newest first: where its offsets went, batch by batch. h is the pane's
// inner height; lines are the pane's own.
func (m *Model) partitionFill(lines []string, h int) []string {
	st, ok := m.parts.selected()
	if !ok || h-len(lines) < 4 || m.parts.pf.editing {
		return lines
	}
	w := m.width - 2
	out := append(lines, "", rule(&m.c.theme, krecord.String(st.Partition.String())+" in the last batches [from, until)", w))
	found := false
	for i := 0; i < m.hist.len() && len(out) < h; i++ {
		e := m.hist.newest(i)
		for _, r := range e.Ranges {
			if r.Partition != st.Partition {
				continue
			}
			found = true
			line := fmt.Sprintf("  batch %s  %s  %d → %d · %s", fitRight(strconv.FormatUint(e.ID, 10), 5), e.Time.In(m.c.loc).Format("15:04:05"),
				r.From, r.Until, plural(r.Records, "record", "records"))
			if r.Jump != "" {
				line += m.c.theme.warn.Render("  * " + krecord.String(r.Jump))
			}
			out = append(out, fit(line, w))
		}
	}
	if !found {
		out = append(out, m.c.theme.dim.Render("  in none of the kept batches yet"))
	}
	return out
}
