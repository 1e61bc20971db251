package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Screen sizes: the wide layout shows all panes at once; smaller screens
// show one pane at a time behind tabs; below the minimum a message.
const (
	wideWidth, wideHeight = 120, 32
	minWidth, minHeight   = 60, 16
)

func (m *Model) tooSmall() bool { return m.width < minWidth || m.height < minHeight }
func (m *Model) wide() bool     { return m.width >= wideWidth && m.height >= wideHeight }

func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.help.SetWidth(w)
	m.layout()
}

// bodyHeight is what is left between the header and the status line and
// footer (and the tab bar when there are tabs).
func (m *Model) bodyHeight() int {
	h := m.height - 4
	if !m.wide() && len(m.views) == 0 {
		h--
	}
	return max(0, h)
}

// paneRects returns each pane's outer size in the wide layout.
type rect struct{ w, h int }

func (m *Model) paneRects() [paneCount]rect {
	body := m.bodyHeight()
	top := body * 11 / 20
	bottom := body - top
	left := m.width * 3 / 5
	ev := m.width * 7 / 20
	return [paneCount]rect{
		focusPartitions: {left, top},
		focusBatches:    {m.width - left, top},
		focusRecords:    {m.width - ev, bottom},
		focusEvents:     {ev, bottom},
	}
}

// layout gives every pane and view its size.
func (m *Model) layout() {
	if m.tooSmall() {
		return
	}
	if m.wide() {
		for i, r := range m.paneRects() {
			m.panes[i].SetSize(r.w-2, r.h-2)
		}
	} else {
		for _, p := range m.panes {
			p.SetSize(m.width-2, m.bodyHeight()-2)
		}
	}
	for _, v := range m.views {
		v.SetSize(m.width-2, m.bodyHeight()-2)
	}
}

// View draws the screen. Panes draw only their visible rows.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "kbatch " + EscapeString(m.stream.name)
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
	parts := []string{m.header()}
	switch {
	case len(m.views) > 0:
		v := m.top()
		parts = append(parts, frame(&m.c.theme, v.title(), strings.Split(v.View(), "\n"), m.width, m.bodyHeight(), true))
	case m.wide():
		parts = append(parts, m.wideBody())
	default:
		p := m.panes[m.focus]
		parts = append(parts, m.tabBar(), frame(&m.c.theme, p.title(), strings.Split(p.View(), "\n"), m.width, m.bodyHeight(), true))
	}
	parts = append(parts, m.statusView(), m.footer())
	return strings.Join(parts, "\n")
}

func (m *Model) wideBody() string {
	r := m.paneRects()
	box := func(i int) string {
		p := m.panes[i]
		return frame(&m.c.theme, p.title(), strings.Split(p.View(), "\n"), r[i].w, r[i].h, i == m.focus)
	}
	return sideBySide(box(focusPartitions), box(focusBatches)) + "\n" + sideBySide(box(focusRecords), box(focusEvents))
}

func (m *Model) tabBar() string {
	var sb strings.Builder
	for i, p := range m.panes {
		name := strings.SplitN(p.title(), " ", 2)[0]
		label := fmt.Sprintf("%d %s", i+1, name)
		if i == m.focus {
			sb.WriteString(m.c.theme.tabActive.Render(label))
		} else {
			sb.WriteString(m.c.theme.tab.Render(label))
		}
	}
	return fit(sb.String()+m.c.theme.dim.Render("  tab/1-4 switch"), m.width)
}

// header is two lines: stream, state, rates, interval, store; then
// brokers, topics and totals.
func (m *Model) header() string {
	s, t := &m.stream, &m.c.theme
	var badges []string
	switch {
	case s.ended != nil || s.closed:
		badges = append(badges, t.badgeEnded.Render("ENDED"))
	case s.paused:
		badges = append(badges, t.badgePaused.Render("PAUSED"))
	default:
		badges = append(badges, t.badgeLive.Render("LIVE"))
	}
	if s.manual {
		label := "MANUAL-ACK"
		if s.waiting {
			label += fmt.Sprintf(" batch %d waits", s.waitingID)
		}
		badges = append(badges, t.badgeManual.Render(label))
	}
	if m.replay != nil {
		badges = append(badges, t.badgeReplay.Render("REPLAY"))
	}
	store := s.store
	if store == "" {
		store = "none (read-only)"
	}
	line1 := t.bold.Render("kbatch") + " " + t.info.Render(EscapeString(s.name)) + "  " + strings.Join(badges, " ") + "  " +
		fmt.Sprintf("%s rec/s · %s MB/s · interval %s · store %s", formatCount(s.rate), formatMB(s.byteRate), s.interval, EscapeString(store))
	line2 := t.dim.Render("brokers ") + EscapeString(strings.Join(s.brokers, ",")) + t.dim.Render("  topics ") + EscapeString(strings.Join(s.topics, ",")) +
		t.dim.Render("  acked ") + fmt.Sprintf("%d batches · %d records", s.batches, s.records)
	return fit(line1, m.width) + "\n" + fit(line2, m.width)
}

func (m *Model) statusView() string {
	if m.status.text == "" {
		return fit(m.c.theme.dim.Render("ready"), m.width)
	}
	ts := m.status.at.In(m.c.loc).Format("15:04:05")
	return fit(m.c.theme.dim.Render(ts+" ")+m.status.style.Render(m.status.text), m.width)
}

// footer is the short help of the focused pane or the view on top, then
// the global keys.
func (m *Model) footer() string {
	var b []key.Binding
	if v := m.top(); v != nil {
		b = v.ShortHelp()
		if !v.capturing() {
			b = append(b, m.c.keys.Help, m.c.keys.Quit)
		}
	} else if m.records.list.capturing() {
		b = m.records.ShortHelp()
	} else {
		b = append(m.panes[m.focus].ShortHelp(), m.globalHelp()...)
	}
	return fit(m.help.ShortHelpView(b), m.width)
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
