package tui

// layoutKind is how the main screen shows its panes.
type layoutKind int

const (
	// layoutTabs shows one pane at a time behind a tab bar.
	layoutTabs layoutKind = iota
	// layoutWide shows every pane: partitions across the top, batches
	// and records side by side, events across the bottom.
	layoutWide
	// layoutStacked shows every pane full width, one above the other:
	// a screen too narrow for batches and records side by side but tall
	// enough for all four (112×45).
	layoutStacked
)

// stackedMinHeight is the least height for the stacked layout: below it
// the batches and records panes would get only a few rows each, and one
// pane at a time shows more.
const stackedMinHeight = 38

// layoutKind chooses the layout by width and height.
func (m *Model) layoutKind() layoutKind {
	switch {
	case m.width >= wideWidth && m.height >= wideHeight:
		return layoutWide
	case m.height >= stackedMinHeight:
		return layoutStacked
	}
	return layoutTabs
}

// batchesMaxShare caps the batches pane at this share of the width in the
// wide layout (4/9): on a narrow wide screen the records pane keeps most.
const batchesMaxNum, batchesMaxDen = 4, 9

// paneRects returns each pane's outer size in the layouts that show every
// pane. Wide: the partitions across the top, as tall as their rows need (at
// most two fifths of the body); batches and records side by side, the
// batches pane as wide as its table needs and the records pane (whose
// VALUE column grows) the rest; the events in a short strip across the
// bottom. Stacked: the same panes full width, the records pane taller
// than the batches pane.
func (m *Model) paneRects() [paneCount]rect {
	body := m.bodyHeight()
	evH := 5
	if body < 30 {
		evH = 4
	}
	if m.layoutKind() == layoutStacked {
		partH := min(m.parts.wantHeight()+2, max(5, body/4))
		mid := max(8, body-partH-evH)
		bh := max(4, mid*2/5)
		return [paneCount]rect{
			focusPartitions: {m.width, partH},
			focusBatches:    {m.width, bh},
			focusRecords:    {m.width, mid - bh},
			focusEvents:     {m.width, evH},
		}
	}
	partH := min(m.parts.wantHeight()+2, max(5, body*2/5))
	midH := max(4, body-partH-evH)
	bw := min(m.batches.naturalWidth(), m.width*batchesMaxNum/batchesMaxDen)
	return [paneCount]rect{
		focusPartitions: {m.width, partH},
		focusBatches:    {bw, midH},
		focusRecords:    {m.width - bw, midH},
		focusEvents:     {m.width, evH},
	}
}
