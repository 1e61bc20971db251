package tui

import (
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
)

// column describes one table column.
type column struct {
	title string
	width int
	right bool
	// priority orders which columns survive on narrow screens: lower
	// numbers stay longer. The flex column (at most one per table) takes
	// what the others leave, at least its width.
	priority int
	flex     bool
	// maxWidth caps how far the flex column grows (0: no cap); what is
	// left stays blank at the end of the row.
	maxWidth int
	// gap is the blank cells before the column (set by layoutColumns).
	gap int
}

// fitContent widens column title of cols to w cells, capped at limit
// (limit <= 0: no cap); it never narrows a column.
func fitContent(cols []column, title string, w, limit int) {
	if limit > 0 {
		w = min(w, limit)
	}
	for i := range cols {
		if cols[i].title == title {
			cols[i].width = max(cols[i].width, w)
			return
		}
	}
}

// layoutColumns picks the columns that fit in w cells by priority and
// returns them in table order, the flex column widened to fill the rest.
// Columns are two spaces apart when all of them fit that way, else one;
// the last cell of the row stays blank, so text never touches a frame.
func layoutColumns(cols []column, w int) []column {
	w--
	keep, used := pickColumns(cols, w, 2)
	gap := 2
	if slices.Contains(keep, false) {
		keep, used = pickColumns(cols, w, 1)
		gap = 1
	}
	out := make([]column, 0, len(cols))
	for i, c := range cols {
		if keep[i] {
			c.gap = gap
			out = append(out, c)
		}
	}
	for i := range out {
		if out[i].flex {
			base := out[i].width
			out[i].width += max(0, w-used)
			if c := out[i].maxWidth; c > 0 {
				out[i].width = min(out[i].width, max(c, base))
			}
			break
		}
	}
	return out
}

// pickColumns marks the columns that fit in w cells, gap apart, taking
// them by priority, and returns the cells they use.
func pickColumns(cols []column, w, gap int) ([]bool, int) {
	keep := make([]bool, len(cols))
	used := -gap
	for {
		best := -1
		for i, c := range cols {
			if !keep[i] && (best < 0 || c.priority < cols[best].priority) {
				best = i
			}
		}
		if best < 0 || used+gap+cols[best].width > w {
			return keep, used
		}
		keep[best] = true
		used += gap + cols[best].width
	}
}

// renderRow renders cells (already escaped, one per column in cols) fitted
// to their columns. styles, when not nil, styles cell i with styles[i]
// (nil entries: plain); selected rows pass nil so reverse video covers
// the whole row.
func renderRow(cols []column, cells []string, styles ...*lipgloss.Style) string {
	var sb strings.Builder
	for i, c := range cols {
		if i > 0 {
			sb.WriteString("  "[:min(2, max(1, c.gap))])
		}
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		if c.right {
			cell = fitRight(cell, c.width)
		} else {
			cell = fit(cell, c.width)
		}
		if i < len(styles) && styles[i] != nil {
			cell = styles[i].Render(cell)
		}
		sb.WriteString(cell)
	}
	return sb.String()
}

func headerRow(t *theme, cols []column) string {
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	return t.colHeader.Render(renderRow(cols, titles))
}

// cursor is a selection in a list of n rows shown height rows at a time.
// The screen only ever draws rows [top, top+height).
type cursor struct {
	sel, top, n, height int
}

func (c *cursor) setLen(n int) {
	c.n = n
	c.clamp()
}

func (c *cursor) setHeight(h int) {
	c.height = max(1, h)
	c.clamp()
}

func (c *cursor) move(d int) {
	c.sel += d
	c.clamp()
}

func (c *cursor) home() { c.sel = 0; c.clamp() }
func (c *cursor) end()  { c.sel = c.n - 1; c.clamp() }

func (c *cursor) clamp() {
	c.sel = min(max(c.sel, 0), max(c.n-1, 0))
	if c.sel < c.top {
		c.top = c.sel
	}
	if c.sel >= c.top+c.height {
		c.top = c.sel - c.height + 1
	}
	c.top = max(0, min(c.top, c.n-c.height))
}

// visible returns the half-open row range on screen.
func (c *cursor) visible() (from, until int) {
	return c.top, min(c.n, c.top+c.height)
}

// markRow renders a selected row: "> " and reverse when the pane has focus,
// "> " and bold when it has not; others get two spaces.
func markRow(t *theme, line string, selected, focused bool) string {
	if !selected {
		return "  " + line
	}
	if focused {
		return t.selected.Render("> " + line)
	}
	return t.selectedBlur.Render("> " + line)
}
