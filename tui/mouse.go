package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// wheelStep is how many rows one turn of the wheel moves.
const wheelStep = 3

// mouse handles clicks (focus the pane under the pointer and select the
// row clicked; a click on the tab bar switches panes) and the wheel
// (scroll the pane under the pointer, or the view on top).
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	ms := msg.Mouse()
	if m.tooSmall() || m.records.list.capturing() {
		return nil
	}
	var down bool
	switch msg.(type) {
	case tea.MouseWheelMsg:
		switch ms.Button {
		case tea.MouseWheelUp:
		case tea.MouseWheelDown:
			down = true
		default:
			return nil
		}
	case tea.MouseClickMsg:
		if ms.Button != tea.MouseLeft || m.top() != nil {
			return nil
		}
		m.click(ms.X, ms.Y)
		return nil
	default:
		return nil
	}
	k := "up"
	if down {
		k = "down"
	}
	if v := m.top(); v != nil {
		var cmds []tea.Cmd
		for i := 0; i < wheelStep; i++ {
			cmds = append(cmds, v.Update(pressOf(k)))
		}
		return tea.Batch(cmds...)
	}
	i, _, ok := m.paneAt(ms.X, ms.Y)
	if !ok {
		return nil
	}
	for n := 0; n < wheelStep; n++ {
		m.panes[i].Update(pressOf(k))
	}
	if i == focusBatches {
		m.records.show(m.batches.selected())
	}
	return nil
}

// paneAt returns the pane under screen cell (x, y) and the line inside
// its frame (0: the first line under the top edge; -1: the edge).
func (m *Model) paneAt(x, y int) (int, int, bool) {
	top := 2 // the header's two lines
	if !m.wide() {
		top++ // the tab bar
		if y < top || y >= top+m.bodyHeight() {
			return 0, 0, false
		}
		return m.focus, y - top - 1, true
	}
	r := m.paneRects()
	switch {
	case y < top:
		return 0, 0, false
	case y < top+r[focusPartitions].h:
		return focusPartitions, y - top - 1, true
	case y < top+r[focusPartitions].h+r[focusBatches].h:
		line := y - top - r[focusPartitions].h - 1
		if x < r[focusBatches].w {
			return focusBatches, line, true
		}
		return focusRecords, line, true
	case y < top+r[focusPartitions].h+r[focusBatches].h+r[focusEvents].h:
		return focusEvents, y - top - r[focusPartitions].h - r[focusBatches].h - 1, true
	}
	return 0, 0, false
}

// click focuses the pane at (x, y) and selects the row there.
func (m *Model) click(x, y int) {
	if !m.wide() && y == 2 {
		if i, ok := m.tabAt(x); ok {
			m.setFocus(i)
			m.layout()
		}
		return
	}
	i, line, ok := m.paneAt(x, y)
	if !ok {
		return
	}
	m.setFocus(i)
	var cur *cursor
	first := 1 // the column header
	switch i {
	case focusPartitions:
		cur = &m.parts.cur
	case focusBatches:
		cur = &m.batches.cur
	case focusRecords:
		cur = &m.records.list.cur
		if m.records.list.query != "" {
			first++ // the filter line
		}
	case focusEvents:
		cur, first = &m.events.cur, 0
	}
	row := line - first
	if row < 0 || row >= cur.height || cur.top+row >= cur.n {
		return
	}
	cur.sel = cur.top + row
	cur.clamp()
	if i == focusBatches {
		m.batches.remember()
		m.batches.holding = cur.sel > 0
		m.records.show(m.batches.selected())
	}
}

// tabAt returns the pane whose tab is at column x of the tab bar.
func (m *Model) tabAt(x int) (int, bool) {
	at := 0
	for i, p := range m.panes {
		label := m.c.theme.tab.Render(tabLabel(i, p))
		if i == m.focus {
			label = m.c.theme.tabActive.Render(tabLabel(i, p))
		}
		w := ansi.StringWidth(label)
		if x >= at && x < at+w {
			return i, true
		}
		at += w
	}
	return 0, false
}
