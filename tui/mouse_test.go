package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestMouseClickFocusesAndSelects(t *testing.T) {
	m := liveModel(t, 140, 40, Options{})
	r := m.paneRects()
	// The third partition row: header 2 lines, the frame's top edge, the
	// column header.
	m.Update(tea.MouseClickMsg{X: 10, Y: 2 + 1 + 1 + 2, Button: tea.MouseLeft})
	if sel, _ := m.parts.selected(); m.focus != focusPartitions || sel.Partition != part("events", 2) {
		t.Errorf("focus %d selected %s, want events[2] in the partitions pane", m.focus, sel.Partition)
	}
	// The second batch row (batch 1).
	y := 2 + r[focusPartitions].h + 1 + 1 + 1
	m.Update(tea.MouseClickMsg{X: 5, Y: y, Button: tea.MouseLeft})
	if e := m.batches.selected(); m.focus != focusBatches || e == nil || e.ID != 1 {
		t.Errorf("focus %d batch %v, want batch 1 in the batches pane", m.focus, e)
	}
	mustContain(t, screen(m), "holding 1")
	// The records pane to its right: its first record.
	m.Update(tea.MouseClickMsg{X: r[focusBatches].w + 5, Y: y - 1, Button: tea.MouseLeft})
	if m.focus != focusRecords || m.records.list.selected() == nil || m.records.list.selected().Batch != 1 {
		t.Errorf("focus %d, want the records pane with batch 1's records", m.focus)
	}
	// The wheel scrolls the pane under the pointer.
	m.Update(tea.MouseWheelMsg{X: r[focusBatches].w + 5, Y: y, Button: tea.MouseWheelDown})
	if m.records.list.cur.sel != wheelStep {
		t.Errorf("wheel moved the records selection to %d, want %d", m.records.list.cur.sel, wheelStep)
	}
}

func TestMouseOnTabsAndViews(t *testing.T) {
	m := liveModel(t, 80, 24, Options{})
	// The tab bar is line 2: "1 Partitions", "2 Batches"…
	x := strings.Index(screen(m), "3 Records") - strings.LastIndex(screen(m)[:strings.Index(screen(m), "3 Records")], "\n") - 1
	m.Update(tea.MouseClickMsg{X: x + 1, Y: 2, Button: tea.MouseLeft})
	if m.focus != focusRecords {
		t.Fatalf("clicking the Records tab focused %d", m.focus)
	}
	// Over a view the wheel scrolls the view.
	press(m, "?")
	before := screen(m)
	m.Update(tea.MouseWheelMsg{X: 10, Y: 10, Button: tea.MouseWheelDown})
	if screen(m) == before {
		t.Errorf("the wheel did not scroll the help")
	}
}
