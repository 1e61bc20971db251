package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// batchesPane lists the kept batches newest first and, beneath, the
// selected batch's ranges the way Spark's batch page shows them. While the
// newest batch is selected the selection follows new batches.
type batchesPane struct {
	*common
	hist *history
	cur  cursor
	// selID is the selected batch's id when hasSel is set; ids start at
	// 0 for Spark batches, so 0 cannot mean "none".
	selID  uint64
	hasSel bool
	// holding is set once the user moves the selection off the newest
	// batch; then it stays on its batch until g.
	holding bool
	width   int
	height  int
	listH   int
	focused bool
	// maxRanges is the most ranges a batch has had, for the split.
	maxRanges int
	cols      []column
	// content holds the widest cell seen per column; it only grows, so
	// the table (and the records pane beside it) does not jitter.
	content map[string]int
	// idle says why there is no batch yet (nil: "no batch yet").
	idle func() []string
}

func newBatchesPane(c *common, h *history) *batchesPane {
	return &batchesPane{common: c, hist: h, content: map[string]int{}}
}

// batchColumns are the columns in table order; widths are minimums,
// widened to the content (BATCH, RECORDS, TOOK, STATE).
var batchColumns = []column{
	{title: "BATCH", width: 5, right: true, priority: 0},
	{title: "TIME", width: 8, priority: 1},
	{title: "RECORDS", width: 7, right: true, priority: 2},
	{title: "BYTES", width: 8, right: true, priority: 5},
	{title: "TOOK", width: 6, right: true, priority: 6},
	{title: "PARTS", width: 5, right: true, priority: 4},
	{title: "STATE", width: 7, priority: 3},
	{title: "NOTE", width: 4, priority: 7, flex: true},
}

// batchesMinWidth is the least outer width naturalWidth gives: the ranges
// beneath the list need about that much.
const batchesMinWidth = 50

// naturalWidth is the outer width (frame included) that shows every
// column but TOOK and NOTE one space apart: the wide layout gives the
// batches pane that much and the records pane, whose VALUE column grows,
// the rest. (TOOK and NOTE are in the batch's detail.)
func (b *batchesPane) naturalWidth() int {
	w := 2 + 1 + 2 // the selection mark, the blank last cell, the frame
	for _, c := range b.columns() {
		if c.title != "NOTE" && c.title != "TOOK" {
			w += c.width + 1
		}
	}
	return max(batchesMinWidth, w-1)
}

// columns are batchColumns widened to the content seen.
func (b *batchesPane) columns() []column {
	cols := append([]column(nil), batchColumns...)
	for title, w := range b.content {
		fitContent(cols, title, w, 0)
	}
	return cols
}

// measure widens the content-sized columns for e.
func (b *batchesPane) measure(e *batchEntry) {
	grow := func(col string, w int) { b.content[col] = max(b.content[col], w) }
	id := len(strconv.FormatUint(e.ID, 10))
	if e.Jumped() {
		id++
	}
	grow("BATCH", id)
	grow("RECORDS", len(strconv.FormatInt(e.Records, 10)))
	grow("BYTES", len(formatBytes(e.Bytes)))
	grow("TOOK", len([]rune(formatDuration(e.Duration))))
	grow("STATE", len(batchState(e)))
}

// added is called after batches were added to the history. With follow
// set and the user not holding a batch, the selection moves to the new
// newest batch; otherwise (the user holds one, or reads the selected
// batch's records: follow unset) it stays on the batch it was on.
func (b *batchesPane) added(follow bool) {
	if n := len(b.hist.newest(0).Ranges); n > b.maxRanges {
		b.maxRanges = n
		b.split()
	}
	b.measure(b.hist.newest(0))
	b.cur.setLen(b.hist.len())
	if follow || !b.hasSel {
		b.cur.sel = 0
	} else if i := b.hist.indexOf(b.selID); i >= 0 {
		b.cur.sel = i
	} else {
		b.cur.sel = b.hist.len() - 1
	}
	b.cur.clamp()
	b.remember()
}

// remember notes which batch is selected, so the selection stays on it
// when batches arrive.
func (b *batchesPane) remember() {
	e := b.selected()
	b.hasSel = e != nil
	if e != nil {
		b.selID = e.ID
	}
}

func (b *batchesPane) selectedID() uint64 {
	if e := b.selected(); e != nil {
		return e.ID
	}
	return 0
}

func (b *batchesPane) selected() *batchEntry {
	if b.cur.sel < b.hist.len() {
		return b.hist.newest(b.cur.sel)
	}
	return nil
}

func (b *batchesPane) SetSize(w, h int) {
	b.width, b.height = w, h
	b.cols = layoutColumns(b.columns(), w-2)
	b.split()
}

// split divides the height between the list and the ranges beneath: the
// ranges get a line each for as many partitions as a batch has had (so the
// split does not move with the selection), at most half the pane.
func (b *batchesPane) split() {
	ranges := min(max(3, b.maxRanges+1), b.height/2)
	b.listH = max(2, b.height-ranges)
	b.cur.setHeight(b.listH - 1)
}

func (b *batchesPane) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if b.navKeys(k.String(), &b.cur) {
			b.remember()
			b.holding = b.cur.sel > 0
		}
	}
	return nil
}

// title says how many batches are kept and whether the selection follows
// new batches or holds one (g goes back to following).
func (b *batchesPane) title() string {
	if b.hist.len() == 0 {
		return "Batches"
	}
	var state string
	switch {
	case b.holding:
		state = fmt.Sprintf(" · holding %d (g: follow)", b.selectedID())
	case b.cur.sel > 0:
		state = fmt.Sprintf(" · on %d while its records are read", b.selectedID())
	}
	s := fmt.Sprintf("Batches %d · latest %d", b.hist.len(), b.hist.newest(0).ID) + state
	if len([]rune(s)) > b.width-4 && state != "" {
		// The pane is as narrow as its table: the newest batch is the
		// list's first row anyway; what the selection does matters more.
		s = fmt.Sprintf("Batches %d", b.hist.len()) + state
	}
	return s
}

func (b *batchesPane) View() string {
	lines := make([]string, 0, b.height)
	lines = append(lines, "  "+headerRow(&b.theme, b.cols))
	if b.hist.len() == 0 {
		why := []string{"no batch yet"}
		if b.idle != nil {
			why = b.idle()
		}
		for _, w := range why {
			for _, l := range strings.Split(wrap(w, max(10, b.width-4)), "\n") {
				lines = append(lines, b.theme.dim.Render("  "+l))
			}
		}
	}
	from, until := b.cur.visible()
	cells := make([]string, len(b.cols))
	styles := make([]*lipgloss.Style, len(b.cols))
	for i := from; i < until; i++ {
		e := b.hist.newest(i)
		for c, col := range b.cols {
			cells[c], styles[c] = b.cell(e, col.title)
		}
		sel := i == b.cur.sel
		if sel {
			styles = styles[:0]
		}
		lines = append(lines, markRow(&b.theme, renderRow(b.cols, cells, styles...), sel, b.focused))
		styles = styles[:len(b.cols)]
	}
	for len(lines) < b.listH {
		lines = append(lines, "")
	}
	return strings.Join(append(lines, b.rangeLines(b.height-len(lines))...), "\n")
}

func (b *batchesPane) cell(e *batchEntry, col string) (string, *lipgloss.Style) {
	switch col {
	case "BATCH":
		if e.Jumped() {
			return "*" + strconv.FormatUint(e.ID, 10), &b.theme.warn
		}
		return strconv.FormatUint(e.ID, 10), nil
	case "TIME":
		return e.Time.In(b.loc).Format("15:04:05"), nil
	case "RECORDS":
		return strconv.FormatInt(e.Records, 10), nil
	case "BYTES":
		return formatBytes(e.Bytes), nil
	case "TOOK":
		return formatDuration(e.Duration), nil
	case "PARTS":
		return strconv.Itoa(len(e.Ranges)), nil
	case "STATE":
		return batchState(e), b.stateStyle(e)
	case "NOTE":
		return batchNote(e), &b.theme.dim
	}
	return "", nil
}

// batchState is planned, acked or redelivered (acked after a restart
// re-delivered it); a re-delivered batch still waiting is "redeliv.".
func batchState(e *batchEntry) string {
	switch {
	case e.Redelivered && e.State == offsets.StatePlanned:
		return "redeliv."
	case e.Redelivered:
		return "redelivered"
	}
	return string(e.State)
}

func (b *batchesPane) stateStyle(e *batchEntry) *lipgloss.Style {
	if e.State == offsets.StatePlanned {
		return &b.theme.warn
	}
	return &b.theme.ok
}

// batchNote says what is special about a batch: re-delivered, jumped.
func batchNote(e *batchEntry) string {
	var notes []string
	if e.logged {
		notes = append(notes, "earlier run")
	}
	if e.Redelivered {
		notes = append(notes, "redelivered")
	}
	seen := map[string]bool{}
	for _, r := range e.Ranges {
		if r.Jump != "" && !seen[r.Jump] {
			seen[r.Jump] = true
			notes = append(notes, "jump: "+r.Jump)
		}
	}
	return strings.Join(notes, ", ")
}

// rangeLines renders the selected batch's ranges in n lines.
func (b *batchesPane) rangeLines(n int) []string {
	e := b.selected()
	if e == nil || n <= 0 {
		return nil
	}
	lines := []string{rule(&b.theme, fmt.Sprintf("batch %d ranges [from, until)", e.ID), b.width)}
	for i, r := range e.Ranges {
		if len(lines) == n-1 && i < len(e.Ranges)-1 {
			lines = append(lines, b.theme.dim.Render(fmt.Sprintf("  … %d more (enter: all ranges)", len(e.Ranges)-i)))
			break
		}
		if len(lines) >= n {
			break
		}
		lines = append(lines, b.rangeLine(r))
	}
	return lines
}

// rangeLine renders one range; a jumped range that does not fit the pane
// drops the words "records" and "jump:" before the jump's reason is cut.
func (b *batchesPane) rangeLine(r offsets.BatchRange) string {
	part := krecord.String(r.Partition.String())
	s := fmt.Sprintf("  %s %d → %d · %s", part, r.From, r.Until, plural(r.Records, "record", "records"))
	if r.Jump == "" {
		return s
	}
	jump := "  * jump: " + krecord.String(r.Jump)
	if lipgloss.Width(s+jump) > b.width {
		s = fmt.Sprintf("  %s %d → %d · %d", part, r.From, r.Until, r.Records)
		jump = "  * " + krecord.String(r.Jump)
	}
	return s + b.theme.warn.Render(jump)
}

func (b *batchesPane) ShortHelp() []key.Binding {
	return []key.Binding{withHelp(b.keys.Enter, "all records"), b.keys.Replay, b.keys.SparkExport, b.keys.Seek}
}

func (b *batchesPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{b.navHelp(), b.ShortHelp()}
}

func (b *batchesPane) setFocus(f bool) { b.focused = f }
