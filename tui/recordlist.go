package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// recordList is a filterable list of records: the records pane shows the
// selected batch's samples in one, the replay view its records.
type recordList struct {
	// empty is what an empty list says.
	empty string
	*common
	all      []*record
	shown    []int // indexes into all that match the filter
	filter   textinput.Model
	query    string
	editing  bool
	cur      cursor
	width    int
	height   int
	focused  bool
	cols     []column
	multiTop bool // records of more than one topic: show topic names
	// topics is set for a stream of several topics: PARTITION always
	// shows topic[p], whatever topics one batch's samples hold.
	topics bool
	// content holds the widest OFFSET, PARTITION and KEY cell seen. It
	// only grows, so columns stay put when another batch is shown.
	content map[string]int
	// How values show (recordview.go): wrapped (wtop is the first record
	// on screen then), the VALUE column alone, scrolled xoff columns.
	wrap, valueOnly bool
	wtop, xoff      int
	// mark is marked in KEY and VALUE like a filter's query, without
	// filtering (the search view's records all match it).
	mark string
	// An expression query is evaluated off the screen's goroutine
	// (whereJob): job is the evaluation in flight (nil: none), evaluated
	// the records at the front of all whose matches are in shown, and
	// dropped the records trimmed from all's front since the query was
	// set, so a job's indexes still find their records.
	job       *whereJob
	evaluated int
	dropped   int
	// keepSel is the selection to put back when the evaluation of a list
	// set anew answers (set with keepSel, schemasChanged); -1: none.
	keepSel int
}

func newRecordList(c *common) *recordList {
	in := newLineInput("/ ", "key or value substring, or ?expression (value.amount > 90.0)")
	return &recordList{common: c, filter: in, content: map[string]int{}, empty: "no sample records in this batch", keepSel: -1}
}

// recordColumns are the columns in table order; OFFSET, PARTITION and KEY
// are widened to their content (KEY up to keyWidth).
var recordColumns = []column{
	{title: "OFFSET", width: 6, right: true, priority: 0},
	{title: "PARTITION", width: 9, priority: 3},
	{title: "TIMESTAMP", width: 12, priority: 4},
	{title: "KEY", width: 6, priority: 2},
	{title: "SIZE", width: 8, right: true, priority: 5},
	{title: "VALUE", width: 24, priority: 1, flex: true},
}

// On a list at least wideValueList wide, VALUE takes wideValueWidth
// columns before SIZE gets any (SIZE is in the detail).
const wideValueList, wideValueWidth = 84, 32

// keyWidth is how wide the KEY column may grow: wider on wide lists.
func (l *recordList) keyWidth() int {
	if l.width >= 100 {
		return 24
	}
	return 14
}

// measure widens the content-sized columns for recs.
func (l *recordList) measure(recs []*record) {
	grow := func(col string, w int) { l.content[col] = max(l.content[col], w) }
	for _, r := range recs {
		grow("OFFSET", len(strconv.FormatInt(r.Offset, 10)))
		if l.multiTop {
			grow("PARTITION", ansi.StringWidth(krecord.String(r.Topic))+2+len(strconv.Itoa(int(r.Partition.Partition))))
		}
		grow("KEY", ansi.StringWidth(previewField(r.Key, 25)))
	}
}

// set replaces the records; keepSel keeps the cursor where it was (a list
// that grows while a replay runs).
func (l *recordList) set(recs []*record, keepSel bool) {
	l.all = recs
	l.multiTop = l.topics || l.multiTopic
	for _, r := range recs {
		if r.Topic != recs[0].Topic {
			l.multiTop = true
			break
		}
	}
	l.measure(recs)
	l.layout()
	sel := l.cur.sel
	l.refilter()
	if keepSel {
		l.restoreSel(sel)
	} else {
		l.cur.home()
	}
}

// appended is set for a list whose records only grew.
func (l *recordList) appended(recs []*record) {
	from := len(l.all)
	l.all = recs
	wasMulti := l.multiTop
	l.multiTop = l.multiTop || l.multiTopic
	for i := from; i < len(recs) && !l.multiTop; i++ {
		l.multiTop = recs[i].Topic != recs[0].Topic
	}
	if l.multiTop && !wasMulti {
		l.measure(recs) // PARTITION now shows topics: measure every label
	} else {
		l.measure(recs[from:])
	}
	if l.expression() {
		l.evaluateRest()
	} else {
		for i := from; i < len(recs); i++ {
			if l.matches(recs[i], l.query) {
				l.shown = append(l.shown, i)
			}
		}
	}
	l.cur.setLen(len(l.shown))
	l.layout()
}

// expression reports whether the query is an expression that compiles:
// one evaluated off the screen's goroutine.
func (l *recordList) expression() bool {
	return isExpr(l.query) && l.queryProblem(l.query) == ""
}

func (l *recordList) refilter() {
	l.shown = l.shown[:0]
	l.keepSel = -1
	l.job.stop()
	l.job, l.evaluated, l.dropped = nil, 0, 0
	if l.expression() {
		l.evaluateRest()
	} else {
		for i, r := range l.all {
			if l.matches(r, l.query) {
				l.shown = append(l.shown, i)
			}
		}
	}
	l.cur.setLen(len(l.shown))
}

// evaluateRest starts evaluating the records not evaluated yet, unless an
// evaluation is in flight (its end starts the next).
func (l *recordList) evaluateRest() {
	if l.job != nil || l.evaluated >= len(l.all) {
		return
	}
	from := l.dropped + l.evaluated
	var j *whereJob
	j = l.evaluate(l.query, l.all[l.evaluated:], func(hits []int) {
		if l.job != j {
			return // the query changed, or the list was set anew
		}
		l.job = nil
		for _, h := range hits {
			if i := from + h - l.dropped; i >= 0 {
				l.shown = append(l.shown, i)
			}
		}
		l.evaluated = max(0, from+len(j.recs)-l.dropped)
		l.cur.setLen(len(l.shown))
		if l.keepSel >= 0 {
			l.cur.sel, l.keepSel = l.keepSel, -1
			l.cur.clamp()
		}
		l.evaluateRest()
	})
	l.job = j
}

// restoreSel puts the selection back at sel after a refilter: now, or,
// while an expression is evaluated, when it answers.
func (l *recordList) restoreSel(sel int) {
	if l.filtering() {
		l.keepSel = sel
		return
	}
	l.cur.sel = sel
	l.cur.clamp()
}

// filtering reports whether matches are still being looked for.
func (l *recordList) filtering() bool { return l.job != nil }

func (l *recordList) selected() *record {
	if l.cur.sel < len(l.shown) {
		return l.all[l.shown[l.cur.sel]]
	}
	return nil
}

func (l *recordList) SetSize(w, h int) {
	l.width, l.height = w, h
	l.filter.SetWidth(max(10, w-4))
	l.layout()
}

func (l *recordList) layout() {
	cols := append([]column(nil), recordColumns...)
	if l.width >= wideValueList {
		// A wide list gives VALUE a useful width before SIZE.
		cols[len(cols)-1].width = wideValueWidth
	}
	if l.valueOnly {
		cols = append([]column(nil), valueOnlyColumns...)
	}
	for title, w := range l.content {
		limit := 0
		switch title {
		case "KEY":
			limit = l.keyWidth()
		case "PARTITION":
			limit = 32
		}
		fitContent(cols, title, w, limit)
	}
	l.cols = layoutColumns(cols, l.width-2)
	h := l.height - 1
	if l.editing || l.query != "" {
		h--
	}
	l.cur.setHeight(h)
}

// capturing reports whether keys go to the filter input.
func (l *recordList) capturing() bool { return l.editing }

// paste types pasted text into the search while it is edited.
func (l *recordList) paste(p tea.PasteMsg) tea.Cmd {
	if !l.editing {
		return nil
	}
	cmd := typeInto(&l.filter, p)
	l.apply()
	return cmd
}

func (l *recordList) Update(msg tea.Msg) tea.Cmd {
	ks, ok := pressedKey(msg)
	if !ok {
		return nil
	}
	if l.editing {
		switch ks {
		case "enter":
			l.editing = false
			l.filter.Blur()
		case "esc":
			l.editing = false
			l.filter.Blur()
			l.filter.SetValue("")
		default:
			cmd := typeInto(&l.filter, msg)
			l.apply()
			return cmd
		}
		l.apply()
		l.layout()
		return nil
	}
	switch {
	case keyIs(ks, l.keys.Filter):
		l.editing = true
		l.layout()
		return l.filter.Focus()
	case keyIs(ks, l.keys.Back) && l.query != "":
		l.filter.SetValue("")
		l.apply()
		l.layout()
	case l.modeKey(ks):
	default:
		l.navKeys(ks, &l.cur)
	}
	return nil
}

func (l *recordList) apply() {
	if q := l.filter.Value(); q != l.query {
		l.query = q
		l.refilter()
		l.cur.home()
	}
}

// filterStatus is `filter "q" 3 of 25 records` or "", escaped for the
// terminal (the query and a compile error's text are the user's).
func (l *recordList) filterStatus() string {
	if l.query == "" {
		return ""
	}
	s := "filter \"" + l.query + "\""
	switch p := l.queryProblem(l.query); {
	case p != "":
		s += ": " + p
	case l.filtering():
		s += " filtering… " + strconv.Itoa(len(l.shown)) + " so far in " + plural(int64(len(l.all)), "record", "records")
	default:
		s += " " + strconv.Itoa(len(l.shown)) + " of " + plural(int64(len(l.all)), "record", "records")
	}
	return krecord.String(s)
}

func (l *recordList) View() string {
	lines := make([]string, 0, l.height)
	if l.editing {
		lines = append(lines, l.filter.View())
	} else if l.query != "" {
		count := strconv.Itoa(len(l.shown)) + " of " + plural(int64(len(l.all)), "record", "records")
		if l.filtering() {
			count = "filtering… " + strconv.Itoa(len(l.shown)) + " so far in " + plural(int64(len(l.all)), "record", "records")
		}
		lines = append(lines, l.theme.info.Render("/ "+krecord.String(l.query))+l.theme.dim.Render("  ("+count+"; esc clears)"))
	}
	lines = append(lines, "  "+headerRow(&l.theme, l.cols))
	if len(l.shown) == 0 {
		msg := "  " + l.empty
		if l.query != "" {
			msg = "  no record matches the filter"
			if l.filtering() {
				msg = "  filtering…"
			}
			if p := l.queryProblem(l.query); p != "" {
				msg = "  not an expression kbatch can run: " + krecord.String(p)
			}
		}
		return strings.Join(append(lines, l.theme.dim.Render(msg)), "\n")
	}
	if l.wrap {
		return strings.Join(l.viewWrapped(lines), "\n")
	}
	from, until := l.cur.visible()
	cells := make([]string, len(l.cols))
	styles := make([]*lipgloss.Style, len(l.cols))
	for i := from; i < until; i++ {
		r := l.all[l.shown[i]]
		for c, col := range l.cols {
			cells[c], styles[c] = l.cell(r, col)
		}
		sel := i == l.cur.sel
		st := styles
		if sel {
			st = nil
		}
		lines = append(lines, markRow(&l.theme, renderRow(l.cols, cells, st...), sel, l.focused))
	}
	return strings.Join(lines, "\n")
}

func (l *recordList) cell(r *record, col column) (string, *lipgloss.Style) {
	switch col.title {
	case "OFFSET":
		return strconv.FormatInt(r.Offset, 10), nil
	case "PARTITION":
		if l.multiTop {
			return partitionLabel(r.Topic, r.Partition.Partition, col.width), nil
		}
		return strconv.Itoa(int(r.Partition.Partition)), nil
	case "TIMESTAMP":
		return r.Timestamp.In(l.loc).Format("15:04:05.000"), &l.theme.dim
	case "KEY":
		s, pending := l.schemas.preview(r, true, col.width+1)
		if pending {
			return highlight(s, l.marked()), &l.theme.dim
		}
		return highlight(s, l.marked()), nil
	case "SIZE":
		if r.Value.null() {
			return "", nil
		}
		return formatBytes(int64(r.Value.Size)), &l.theme.dim
	case "VALUE":
		s, pending := l.valueText(r, col.width)
		s = highlight(s, l.marked())
		switch {
		case r.Aborted:
			return s, &l.theme.warn
		case pending:
			return s, &l.theme.dim
		}
		return s, nil
	}
	return "", nil
}

// abortedMark starts the value of a record of an aborted transaction in
// the list (read uncommitted); its detail says it in full.
const abortedMark = "[aborted] "

// previewField is the one-line, escaped start of a key or value.
func previewField(f field, width int) string {
	if f.null() {
		return "(null)"
	}
	if looksBinary(f.Data) {
		return krecord.EscapeBinary(f.Data, width)
	}
	return krecord.EscapeLine(f.Data, width)
}

func (l *recordList) ShortHelp() []key.Binding {
	if l.editing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		}
	}
	return []key.Binding{l.keys.Enter, l.keys.Filter, l.keys.Copy}
}

func (l *recordList) FullHelp() [][]key.Binding {
	return [][]key.Binding{l.navHelp(), {l.keys.Enter, l.keys.Filter, l.keys.Copy, l.keys.Back}, l.modeHelp()}
}
