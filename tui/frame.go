package tui

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// fit truncates s (which may hold style sequences) to w columns, marking a
// cut with "…", and pads it with spaces to exactly w columns.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// partitionLabel renders "topic[3]" in at most w columns, shortening the
// topic ("sensor-d…[3]") so the partition number always shows.
func partitionLabel(topic string, part int32, w int) string {
	num := "[" + strconv.Itoa(int(part)) + "]"
	t := krecord.String(topic)
	if ansi.StringWidth(t)+len(num) <= w || w <= len(num)+1 {
		return t + num
	}
	return ansi.Truncate(t, w-len(num), "…") + num
}

// fitRight is fit with the text aligned right.
func fitRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return fit(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// frameBorders are the plain and the focused frame. The focused one is
// thick so focus shows without colour.
var (
	thinBorder  = [6]string{"╭", "╮", "╰", "╯", "─", "│"}
	thickBorder = [6]string{"┏", "┓", "┗", "┛", "━", "┃"}
)

// frame draws lines inside a box of w×h cells with title in the top edge.
// lines beyond h-2 are dropped, missing ones are blank; each line is fitted
// to the inner width.
func frame(t *theme, title string, lines []string, w, h int, focused bool) string {
	if w < 2 || h < 2 {
		return ""
	}
	b, st, tst := thinBorder, t.frame, t.title
	if focused {
		b, st, tst = thickBorder, t.frameFocused, t.titleFocused
	}
	inner := w - 2
	var sb strings.Builder
	sb.Grow((w + 8) * h)
	title = ansi.Truncate(title, max(0, inner-4), "…")
	used := 2
	sb.WriteString(st.Render(b[0] + b[4]))
	if title != "" {
		sb.WriteString(" " + tst.Render(title) + " ")
		used += ansi.StringWidth(title) + 2
	}
	sb.WriteString(st.Render(strings.Repeat(b[4], max(0, w-1-used)) + b[1]))
	side := st.Render(b[5])
	for i := 0; i < h-2; i++ {
		sb.WriteByte('\n')
		sb.WriteString(side)
		if i < len(lines) {
			sb.WriteString(fit(lines[i], inner))
		} else {
			sb.WriteString(strings.Repeat(" ", inner))
		}
		sb.WriteString(side)
	}
	sb.WriteByte('\n')
	sb.WriteString(st.Render(b[2] + strings.Repeat(b[4], inner) + b[3]))
	return sb.String()
}

// rule is a horizontal separator with a label, inner width w.
func rule(t *theme, label string, w int) string {
	if label == "" {
		return t.frame.Render(strings.Repeat("─", w))
	}
	label = ansi.Truncate(label, max(0, w-4), "…")
	rest := max(0, w-3-ansi.StringWidth(label))
	return t.frame.Render("─ ") + t.dim.Render(label) + " " + t.frame.Render(strings.Repeat("─", rest))
}

// placeBlock pads or cuts a block of text to exactly w×h cells.
func placeBlock(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(out, "\n")
}

// sideBySide joins two blocks of equal height horizontally.
func sideBySide(a, b string) string { return lipgloss.JoinHorizontal(lipgloss.Top, a, b) }

// wrap word-wraps plain text to w columns (w <= 0: as it is).
func wrap(s string, w int) string {
	if w <= 0 {
		return s
	}
	return ansi.Wordwrap(s, w, "")
}
