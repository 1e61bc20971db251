package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/offsets"
	sparkopts "github.com/kbatch-dev/kbatch/offsets/spark"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// The Spark export key (e): a batch's ranges as the startingOffsets /
// endingOffsets pair of a Spark batch query that reads exactly that batch
// (the same pair as `kbatch offsets show --batch N --format spark`).
//
// The package offsets/spark is imported as sparkopts because this package
// has a type named spark (the rate sparkline).

// sparkOptionPair returns startingOffsets and endingOffsets that make a
// Spark batch query read exactly batch id: its ranges, and for every other
// partition the screen knows an empty range at the position that partition
// had around the batch (offsets.BatchSpan over the kept batches, falling
// back on each partition's next offset). Spark needs every partition of
// the subscribed topics listed; the partitions pane has them all. ok is
// false when the batch is no longer kept.
func (m *Model) sparkOptionPair(id uint64) (starting, ending string, ok bool) {
	log := make([]offsets.Batch, 0, m.hist.len())
	for i := 0; i < m.hist.len(); i++ {
		log = append(log, m.hist.newest(i).Batch.Batch)
	}
	next := make(map[offsets.Partition]int64, len(m.parts.rows))
	for _, r := range m.parts.rows {
		if r.NextOffset >= 0 {
			next[r.Partition] = r.NextOffset
		}
	}
	start, end, ok := offsets.BatchSpan(log, id, next)
	if !ok {
		return "", "", false
	}
	return sparkopts.StartingOffsetsJSON(start, nil), sparkopts.EndingOffsetsJSON(end, nil), true
}

// exportSpark shows a batch's Spark option pair (the batch in the detail
// view on top, else the one selected in the batches and records panes) and
// copies it to the clipboard with OSC 52, as
// "startingOffsets=...\nendingOffsets=...".
func (m *Model) exportSpark() tea.Cmd {
	e := m.batchOnTop()
	if e == nil && m.top() == nil && (m.focus == focusBatches || m.focus == focusRecords) {
		e = m.batches.selected()
	}
	if e == nil {
		m.setStatus("e exports the selected batch as Spark options (batches pane)", m.c.theme.dim)
		return nil
	}
	starting, ending, ok := m.sparkOptionPair(e.ID)
	if !ok {
		m.setStatus(fmt.Sprintf("batch %d is no longer kept on screen", e.ID), m.c.theme.warn)
		return nil
	}
	text := sparkExportText(starting, ending)
	id := e.ID
	m.pushView(newTextView(m.c, fmt.Sprintf("Spark options · batch %d", id), func(int) string {
		return krecord.String("startingOffsets="+starting) + "\n" + krecord.String("endingOffsets="+ending) + "\n\n" +
			m.c.theme.dim.Render(fmt.Sprintf("A Spark batch query (spark.read.format(\"kafka\")) given these two options\n"+
				"reads exactly batch %d: its ranges, and an empty range on every other partition\n"+
				"(Spark wants every partition listed). Copied to the clipboard (OSC 52); esc closes.", id))
	}))
	m.setStatus(fmt.Sprintf("copied batch %d's startingOffsets/endingOffsets with OSC 52", id), m.c.theme.ok)
	return tea.SetClipboard(text + "\n")
}

// sparkExportText is what e copies: "startingOffsets=...\nendingOffsets=...".
func sparkExportText(starting, ending string) string {
	return "startingOffsets=" + starting + "\nendingOffsets=" + ending
}
