package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// How a record list shows values beyond one truncated line: z wraps them
// over several lines, h/l (←/→) scroll the VALUE column sideways, V shows
// the VALUE column alone across the whole width. Every list has them: the
// records pane, the replay, search and tail views.

// wrapMaxLines caps the lines one record takes while values wrap, so a
// MiB value does not take the screen; enter shows it whole.
const wrapMaxLines = 8

// scrollLimit caps the horizontal scroll (columns into the value): the
// list escapes this much of a value at most per row.
const scrollLimit = 64 << 10

// modeKey handles the keys that change how values show; it reports
// whether k was one.
func (l *recordList) modeKey(k string) bool {
	km := l.keys
	switch {
	case keyIs(k, km.Wrap):
		l.wrap = !l.wrap
		l.xoff = 0
	case keyIs(k, km.ValueOnly):
		l.valueOnly = !l.valueOnly
		l.layout()
	case keyIs(k, km.ScrollRight) && !l.wrap:
		l.xoff = min(scrollLimit, l.xoff+l.scrollStep())
	case keyIs(k, km.ScrollLeft) && !l.wrap:
		l.xoff = max(0, l.xoff-l.scrollStep())
	default:
		return false
	}
	return true
}

// scrollStep is half the VALUE column.
func (l *recordList) scrollStep() int { return max(4, l.valueWidth()/2) }

func (l *recordList) valueWidth() int {
	for _, c := range l.cols {
		if c.title == "VALUE" {
			return c.width
		}
	}
	return 0
}

// modeStatus says how values show when it is not the default, for the
// list's title: "wrapped", "value only", "from column 41".
func (l *recordList) modeStatus() string {
	var s []string
	if l.valueOnly {
		s = append(s, "value only")
	}
	if l.wrap {
		s = append(s, "wrapped")
	}
	if l.xoff > 0 {
		s = append(s, "from column "+strconv.Itoa(l.xoff+1))
	}
	return strings.Join(s, ", ")
}

// valueOnlyColumns is the layout of V: the value alone.
var valueOnlyColumns = []column{{title: "VALUE", width: 10, priority: 0, flex: true}}

// valueText is the VALUE cell of r for a column w wide: the escaped start
// of its preview (decoded when it has a schema), or, scrolled, the part
// from column xoff on after a "…". pending: its schema is on its way.
func (l *recordList) valueText(r *record, w int) (string, bool) {
	mark := ""
	if r.Aborted {
		mark = abortedMark
	}
	s, pending := l.schemas.preview(r, false, l.xoff+w+1)
	s = mark + s
	if l.xoff == 0 {
		return s, pending
	}
	if ansi.StringWidth(s) <= l.xoff {
		return "…", pending
	}
	return "…" + ansi.Cut(s, l.xoff, l.xoff+w+1), pending
}

// wrappedValue is r's value escaped and cut into lines of w columns, at
// most wrapMaxLines (the last ends with "…" when more is left).
func (l *recordList) wrappedValue(r *record, w int) []string {
	if w <= 0 {
		return []string{""}
	}
	mark := ""
	if r.Aborted {
		mark = abortedMark
	}
	s, _ := l.schemas.preview(r, false, w*wrapMaxLines+1)
	s = mark + s
	var lines []string
	for len(lines) < wrapMaxLines && s != "" {
		line := ansi.Truncate(s, w, "")
		if line == "" { // a rune wider than the column
			line = ansi.Truncate(s, w+1, "")
		}
		lines = append(lines, line)
		s = s[len(line):]
	}
	if s != "" && len(lines) > 0 {
		last := &lines[len(lines)-1]
		*last = ansi.Truncate(*last, w-1, "") + "…"
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// marked is what the list marks: its filter, else its mark.
func (l *recordList) marked() string {
	if l.query != "" {
		return l.query
	}
	return l.mark
}

// Highlighting: a match shows bold and underlined. The sequences turn on
// and off only those two attributes, so a selected row's reverse video
// goes on after a match; no colour, so NO_COLOR screens show it too.
const (
	matchOn  = "\x1b[1;4m"
	matchOff = "\x1b[22;24m"
)

// highlight marks every occurrence of q in cell (plain, escaped text),
// ASCII letters compared without case. q is escaped the way cells are, so
// a query matches what the screen shows.
func highlight(cell, q string) string {
	if q == "" || cell == "" {
		return cell
	}
	q = krecord.String(q)
	lc, lq := strings.ToLower(cell), strings.ToLower(q)
	if len(lc) != len(cell) || !strings.Contains(lc, lq) {
		return cell // ToLower changed byte lengths (non-ASCII): no marks
	}
	var sb strings.Builder
	for {
		i := strings.Index(lc, lq)
		if i < 0 {
			sb.WriteString(cell)
			return sb.String()
		}
		sb.WriteString(cell[:i])
		sb.WriteString(matchOn + cell[i:i+len(q)] + matchOff)
		cell, lc = cell[i+len(q):], lc[i+len(q):]
	}
}

// viewWrapped draws the rows from the top row on, each record as many
// lines as its wrapped value takes, keeping the selected record whole on
// screen.
func (l *recordList) viewWrapped(lines []string) []string {
	room := l.height - len(lines)
	vw := l.valueWidth()
	heights := func(i int) int {
		return len(l.wrappedValue(l.all[l.shown[i]], vw))
	}
	sel := l.cur.sel
	if l.wtop > sel {
		l.wtop = sel
	}
	l.wtop = min(l.wtop, max(0, len(l.shown)-1))
	for used := 0; ; {
		used = 0
		for i := l.wtop; i <= sel; i++ {
			used += heights(i)
		}
		if used <= room || l.wtop >= sel {
			break
		}
		l.wtop++
	}
	cells := make([]string, len(l.cols))
	for i := l.wtop; i < len(l.shown) && room > 0; i++ {
		r := l.all[l.shown[i]]
		vals := l.wrappedValue(r, vw)
		for c, col := range l.cols {
			cells[c], _ = l.cell(r, col)
		}
		isSel := i == sel
		for j, v := range vals {
			if room == 0 {
				break
			}
			for c, col := range l.cols {
				switch {
				case col.title == "VALUE":
					cells[c] = highlight(v, l.marked())
				case j > 0:
					cells[c] = ""
				}
			}
			row := renderRow(l.cols, cells)
			switch {
			case j == 0:
				row = markRow(&l.theme, row, isSel, l.focused)
			case isSel && l.focused:
				row = l.theme.selected.Render("  " + row)
			case isSel:
				row = l.theme.selectedBlur.Render("  " + row)
			default:
				row = "  " + row
			}
			lines = append(lines, row)
			room--
		}
	}
	return lines
}

// modeHelp is the bindings of the value modes, for a list's help.
func (l *recordList) modeHelp() []key.Binding {
	return []key.Binding{l.keys.Wrap, l.keys.ValueOnly, l.keys.ScrollLeft, l.keys.ScrollRight}
}
