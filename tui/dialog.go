package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// showTabs reports whether the tab bar shows: on small screens, when the
// panes are what is under the dialogs, if any.
func (m *Model) showTabs() bool { return !m.wide() && m.base() == 0 }

// dialogView is a view drawn as a box over what is under it (the forms),
// so the live screen stays in sight.
type dialogView interface{ dialog() bool }

func isDialog(v view) bool {
	d, ok := v.(dialogView)
	return ok && d.dialog()
}

// base is how many views lie under the dialogs on top: the screen draws
// views[base-1] in full (or the panes when base is 0), then the dialogs.
func (m *Model) base() int {
	n := len(m.views)
	for n > 0 && isDialog(m.views[n-1]) {
		n--
	}
	return n
}

// dialogWidth is the outer width of a dialog box.
func (m *Model) dialogWidth() int { return min(m.width-4, 110) }

// overlayDialog draws dialog v in a focused box over body, centred across
// and placed where it hides the least: under the partitions pane on wide
// screens (the selected partition and the events stay in sight), at the
// bottom otherwise (the selected row near the top stays in sight).
func (m *Model) overlayDialog(body string, v view) string {
	lines := padLines(v.View())
	bh := m.bodyHeight()
	h := min(len(lines)+2, bh)
	box := frame(&m.c.theme, v.title(), lines, m.dialogWidth(), h, true)
	y := max(0, bh-h-1) // the frame's bottom edge stays
	if m.wide() && m.base() == 0 {
		y = min(y, m.paneRects()[focusPartitions].h+1) // the pane titles stay
	}
	return overlay(body, box, (m.width-m.dialogWidth())/2, y, m.width)
}

// overlay puts box over base (w columns wide) with its top left corner at
// column x, line y. Both are blocks of styled lines; base lines keep their
// styles on both sides of the box.
func overlay(base, box string, x, y, w int) string {
	lines := strings.Split(base, "\n")
	for i, bl := range strings.Split(box, "\n") {
		if y+i >= len(lines) {
			break
		}
		l := lines[y+i]
		bw := ansi.StringWidth(bl)
		left := ansi.Truncate(l, x, "")
		left += strings.Repeat(" ", max(0, x-ansi.StringWidth(left)))
		right := ansi.TruncateLeft(l, x+bw, "")
		lines[y+i] = fit(left+"\x1b[m"+bl+"\x1b[m"+right, w)
	}
	return strings.Join(lines, "\n")
}
