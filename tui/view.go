package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// Screen sizes: the wide layout shows all panes at once, batches and
// records side by side; a narrower but tall screen stacks them (layout.go);
// smaller screens show one pane at a time behind tabs; below the minimum a
// message.
const (
	wideWidth, wideHeight = 120, 32
	minWidth, minHeight   = 60, 16
)

func (m *Model) tooSmall() bool { return m.width < minWidth || m.height < minHeight }

// wide reports a layout that shows every pane at once (side by side or
// stacked): no tabs.
func (m *Model) wide() bool { return m.layoutKind() != layoutTabs }

func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.help.SetWidth(w)
	m.layout()
}

// bodyHeight is what is left between the header and the status line and
// footer (and the tab bar when there are tabs).
func (m *Model) bodyHeight() int {
	h := m.height - 4
	if m.showTabs() {
		h--
	}
	return max(0, h)
}

type rect struct{ w, h int }

// viewPad is the blank column on each side of a view's text inside its
// frame.
const viewPad = 1

// layout gives every pane and view its size.
func (m *Model) layout() {
	if m.tooSmall() {
		return
	}
	if m.wide() {
		m.laidOutBatchesW = m.batches.naturalWidth()
		for i, r := range m.paneRects() {
			m.panes[i].SetSize(r.w-2, r.h-2)
		}
	} else {
		for _, p := range m.panes {
			p.SetSize(m.width-2, m.bodyHeight()-2)
		}
	}
	for _, v := range m.views {
		if isDialog(v) {
			v.SetSize(m.dialogWidth()-2-2*viewPad, m.bodyHeight()-2)
			continue
		}
		v.SetSize(m.width-2-2*viewPad, m.bodyHeight()-2)
	}
}

// View draws the screen. Panes draw only their visible rows.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "kbatch " + krecord.String(m.stream.name)
	v.MouseMode = tea.MouseModeCellMotion // mouse.go
	return v
}

func (m *Model) render() string {
	if m.width == 0 {
		return ""
	}
	if m.tooSmall() {
		msg := fmt.Sprintf("terminal too small: %d×%d\nkbatch needs at least %d×%d\n(q quits)", m.width, m.height, minWidth, minHeight)
		return placeBlock(centerText(msg, m.width, m.height), m.width, m.height)
	}
	header, dropped := m.header()
	parts := []string{header}
	var body string
	base := m.base()
	switch {
	case base > 0:
		v := m.views[base-1]
		body = frame(&m.c.theme, v.title(), padLines(v.View()), m.width, m.bodyHeight(), true)
	case m.wide():
		body = m.wideBody(dropped)
	default:
		p := m.panes[m.focus]
		parts = append(parts, m.tabBar(dropped))
		lines := strings.Split(p.View(), "\n")
		if m.focus == focusPartitions {
			lines = m.partitionFill(lines, m.bodyHeight()-2) // partfill.go
		}
		body = frame(&m.c.theme, p.title(), lines, m.width, m.bodyHeight(), true)
	}
	for _, v := range m.views[base:] {
		body = m.overlayDialog(body, v)
	}
	parts = append(parts, body, m.statusView(), m.footer())
	return strings.Join(parts, "\n")
}

// padLines splits a view's text into lines with the view's margin.
func padLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Repeat(" ", viewPad) + l
	}
	return lines
}

func (m *Model) wideBody(dropped []segment) string {
	r := m.paneRects()
	box := func(i int) string {
		p := m.panes[i]
		title := p.title()
		if i == focusPartitions {
			// No tab bar: the figures the header had no room for
			// follow the partitions' title.
			for _, sg := range dropped {
				title += " · " + ansi.Strip(sg.text)
			}
		}
		return frame(&m.c.theme, title, strings.Split(p.View(), "\n"), r[i].w, r[i].h, i == m.focus)
	}
	if m.layoutKind() == layoutStacked {
		return box(focusPartitions) + "\n" + box(focusBatches) + "\n" + box(focusRecords) + "\n" + box(focusEvents)
	}
	return box(focusPartitions) + "\n" + sideBySide(box(focusBatches), box(focusRecords)) + "\n" + box(focusEvents)
}

// tabBar lists the panes, then the header figures dropped there.
func (m *Model) tabBar(dropped []segment) string {
	var sb strings.Builder
	for i, p := range m.panes {
		label := tabLabel(i, p)
		if i == m.focus {
			sb.WriteString(m.c.theme.tabActive.Render(label))
		} else {
			sb.WriteString(m.c.theme.tab.Render(label))
		}
	}
	// Figures the header had no room for come here, the most wanted
	// first, each in its short form when the long one does not fit (at
	// 80 columns no long one does); the hint gives way to them.
	hint := m.c.theme.dim.Render("  tab/1-4 switch")
	line := sb.String()
	sep := "  "
	for _, sg := range slices.SortedStableFunc(slices.Values(dropped), func(a, b segment) int { return a.drop - b.drop }) {
		for _, text := range []string{sg.text, sg.short} {
			if text != "" && ansi.StringWidth(line+sep+text) <= m.width {
				line += sep + text
				sep = m.c.theme.dim.Render(" · ")
				break
			}
		}
	}
	if ansi.StringWidth(line+hint) <= m.width {
		line += hint
	}
	return fit(line, m.width)
}

// tabLabel is pane i's tab: its number and the first word of its title.
func tabLabel(i int, p pane) string {
	return fmt.Sprintf("%d %s", i+1, strings.SplitN(p.title(), " ", 2)[0])
}

// centerText centres each line of msg in a w×h block.
func centerText(msg string, w, h int) string {
	lines := strings.Split(msg, "\n")
	pad := max(0, (h-len(lines))/2)
	out := make([]string, 0, h)
	for i := 0; i < pad; i++ {
		out = append(out, "")
	}
	for _, l := range lines {
		l = ansi.Truncate(l, w, "…")
		out = append(out, strings.Repeat(" ", max(0, (w-ansi.StringWidth(l))/2))+l)
	}
	return strings.Join(out, "\n")
}
