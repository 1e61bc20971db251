package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// The records view reads pageRecords records at a time and keeps at most
// windowPages pages around the cursor; a read starts when the cursor comes
// within prefetchRows rows of either end of what is kept.
const (
	pageRecords  = 200
	windowPages  = 3
	prefetchRows = 50
)

// pageDir says what a page read is for.
type pageDir int

const (
	pageNext  pageDir = iota // the records after the window
	pagePrev                 // the records before it
	pageFirst                // the first page: the window starts again there
	pageLast                 // the last page
)

// pageMsg is a page read for the records view with id.
type pageMsg struct {
	id, req int
	dir     pageDir
	recs    []*krecord.Record
	pos     pagePos // after the records (next, first) or at the first of them (prev, last)
	err     error
}

// recordsView lists every record of ranges — a batch's, or a partition's
// from its log start to its high watermark — in offset order per range,
// ranges one after the other. It reads them from the broker page by page
// as the cursor moves, through the Replayer (which never moves a stored
// position), and keeps at most windowPages pages in memory.
type recordsView struct {
	*common
	id     int
	name   string
	batch  *batchEntry // the batch whose ranges these are; nil for a partition
	ranges []offsets.Range
	index  map[offsets.Partition]int   // range of each partition
	counts map[offsets.Partition]int64 // the batch's record count per range
	list   *recordList
	// The window: list.all holds the records of [start, end).
	start, end pagePos
	// pending is the read in flight (its request number), 0 for none.
	pending int
	reqs    int
	dir     pageDir
	err     error
	width   int
	height  int
	read    func(id, req int, dir pageDir, pos pagePos) tea.Cmd
	// about describes a partition's replicas and settings (enter on a
	// partition); "" until known.
	about string
}

func newRecordsView(c *common, id int, name string, batch *batchEntry, ranges []offsets.Range, read func(id, req int, dir pageDir, pos pagePos) tea.Cmd) *recordsView {
	v := &recordsView{common: c, id: id, name: name, batch: batch, ranges: ranges, index: map[offsets.Partition]int{},
		list: newRecordList(c), read: read}
	for i, r := range ranges {
		v.index[r.Partition] = i
	}
	if batch != nil {
		v.counts = map[offsets.Partition]int64{}
		for _, r := range batch.Ranges {
			v.counts[r.Partition] = r.Records
		}
	}
	topics := map[string]bool{}
	for _, r := range ranges {
		topics[r.Topic] = true
	}
	v.list.topics = len(topics) > 1
	v.list.focused = true
	v.list.empty = "reading…"
	v.start, v.end = pageStart(ranges), pageStart(ranges)
	return v
}

// first reads the first page.
func (v *recordsView) first() tea.Cmd { return v.fetch(pageFirst, pageStart(v.ranges)) }

func (v *recordsView) fetch(dir pageDir, pos pagePos) tea.Cmd {
	v.reqs++
	v.pending, v.dir, v.err = v.reqs, dir, nil
	return v.read(v.id, v.reqs, dir, pos)
}

func (v *recordsView) atStart() bool { return !pageStart(v.ranges).before(v.start) }
func (v *recordsView) atEnd() bool   { return v.end.r >= len(v.ranges) }

// take puts a page into the window and trims the window's other end to
// windowPages pages, keeping the selected record selected.
func (v *recordsView) take(msg pageMsg) {
	if msg.req != v.pending {
		return
	}
	v.pending = 0
	if msg.err != nil {
		v.err = msg.err
	}
	sel := v.list.selected()
	recs := make([]*record, len(msg.recs))
	for i, m := range msg.recs {
		recs[i] = newRecord(m, v.batchID())
	}
	all := v.list.all
	switch msg.dir {
	case pageFirst:
		all, v.start, v.end, sel = recs, pageStart(v.ranges), msg.pos, nil
	case pageLast:
		all, v.start, v.end, sel = recs, msg.pos, pageEnd(v.ranges), nil
		if len(recs) > 0 {
			sel = recs[len(recs)-1]
		}
	case pageNext:
		all, v.end = append(all[:len(all):len(all)], recs...), msg.pos
		if over := len(all) - windowPages*pageRecords; over > 0 {
			all = all[over:]
			v.start = v.posOf(all[0])
		}
	case pagePrev:
		all, v.start = append(recs, all...), msg.pos
		if over := len(all) - windowPages*pageRecords; over > 0 {
			all = all[:len(all)-over]
			last := all[len(all)-1]
			v.end = normalize(v.ranges, pagePos{v.index[last.Partition], offsets.Next(last.Offset)})
		}
	}
	v.list.empty = "no records in these ranges"
	if v.err != nil && len(all) == 0 {
		v.list.empty = "could not read: " + krecord.String(v.err.Error())
	}
	v.list.set(all, false)
	v.selectRecord(sel, msg.dir == pageNext || msg.dir == pagePrev)
}

func (v *recordsView) batchID() uint64 {
	if v.batch != nil {
		return v.batch.ID
	}
	return 0
}

func (v *recordsView) posOf(r *record) pagePos {
	return pagePos{v.index[r.Partition], r.Offset}
}

// selectRecord moves the cursor to r if the list shows it; keepRow keeps
// r on the screen row it was on (a page added above or below).
func (v *recordsView) selectRecord(r *record, keepRow bool) {
	if r == nil {
		return
	}
	row := 0
	for i, j := range v.list.shown {
		if v.list.all[j] == r {
			row = i
			break
		}
	}
	l := &v.list.cur
	onScreen := l.sel - l.top
	l.sel = row
	if keepRow {
		l.top = row - onScreen
	}
	l.clamp()
}

// more starts the read the cursor's place asks for, if none runs.
func (v *recordsView) more() tea.Cmd {
	if v.pending != 0 || len(v.list.shown) == 0 {
		return nil
	}
	switch sel := v.list.cur.sel; {
	case sel >= len(v.list.shown)-prefetchRows && !v.atEnd():
		return v.fetch(pageNext, v.end)
	case sel < prefetchRows && !v.atStart():
		return v.fetch(pagePrev, v.start)
	}
	return nil
}

func (v *recordsView) Update(msg tea.Msg) tea.Cmd {
	ks, ok := pressedKey(msg)
	if !ok {
		return nil
	}
	if !v.list.capturing() {
		switch {
		case keyIs(ks, v.keys.Top) && !v.atStart():
			return v.fetch(pageFirst, pageStart(v.ranges))
		case keyIs(ks, v.keys.Bottom) && !v.atEnd():
			return v.fetch(pageLast, pageEnd(v.ranges))
		}
	}
	cmd := v.list.Update(msg)
	return tea.Batch(cmd, v.more())
}

func (v *recordsView) back() bool      { return v.list.back() }
func (v *recordsView) capturing() bool { return v.list.capturing() }

func (v *recordsView) paste(p tea.PasteMsg) tea.Cmd { return v.list.paste(p) }

func (v *recordsView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.list.SetSize(w, max(3, h-len(v.headLines())))
}

// title names what is listed and where the cursor is:
// "Batch 4 · all records · orders[0] @ 1234".
func (v *recordsView) title() string {
	s := v.name + " · all records"
	if r := v.list.selected(); r != nil {
		s += fmt.Sprintf(" · %s @ %d", krecord.String(r.Partition.String()), r.Offset)
	}
	if f := v.list.filterStatus(); f != "" {
		s += " · " + f + " in memory"
	}
	if ms := v.list.modeStatus(); ms != "" {
		s += " · " + ms
	}
	return s
}

// rangeRows is how many lines the ranges may take: a quarter of the
// view, at least 2; more are summed up in the last line.
func (v *recordsView) rangeRows() int { return max(2, v.height/4) }

func (v *recordsView) headLines() []string {
	var out []string
	cur := -1
	if r := v.list.selected(); r != nil {
		cur = v.index[r.Partition]
	}
	for i, r := range v.ranges {
		mark := "  "
		if i == cur {
			mark = "▸ "
		}
		line := mark + krecord.String(r.String())
		if n, ok := v.counts[r.Partition]; ok {
			line += " · " + plural(n, "record", "records")
		}
		if v.about != "" {
			line += v.theme.dim.Render(" · " + v.about)
		}
		out = append(out, line)
	}
	if n := v.rangeRows(); len(out) > n {
		// Keep the line of the cursor's range in sight.
		from := min(max(0, cur-n/2), len(out)-n+1)
		more := len(out) - (n - 1)
		out = append(out[from:from+n-1], v.theme.dim.Render(fmt.Sprintf("  … %d more ranges", more)))
	}
	state := v.theme.dim.Render(fmt.Sprintf("%d records in memory, read %d at a time as you scroll",
		len(v.list.all), pageRecords))
	switch {
	case v.err != nil:
		state = v.theme.bad.Render("could not read: " + krecord.String(v.err.Error()))
	case v.pending != 0:
		state = v.theme.info.Render("reading…")
	}
	return append(out, state, "")
}

func (v *recordsView) View() string {
	return strings.Join(v.headLines(), "\n") + "\n" + v.list.View()
}

func (v *recordsView) ShortHelp() []key.Binding {
	if v.list.capturing() {
		return v.list.ShortHelp()
	}
	bs := []key.Binding{v.keys.Enter, withHelp(v.keys.Top, "first"), withHelp(v.keys.Bottom, "last"), v.keys.Filter, v.keys.Copy}
	if v.batch != nil {
		bs = append(bs, withHelp(v.keys.Info, "batch details"), v.keys.Replay, v.keys.SparkExport)
	}
	return append(bs, v.keys.Back)
}

func (v *recordsView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.navHelp(), {v.keys.Enter, v.keys.Filter, v.keys.Copy, v.keys.Info, v.keys.Back}, v.list.modeHelp()}
}

// readPage is the tea.Cmd of one page read for the records view with id.
func (m *Model) readPage(ranges []offsets.Range) func(id, req int, dir pageDir, pos pagePos) tea.Cmd {
	rd, ctx := m.opts.Replayer, m.ctx
	return func(id, req int, dir pageDir, pos pagePos) tea.Cmd {
		// Nothing waits for a page read (m.bg): it writes nothing, and
		// Close cancels ctx, which ends it.
		return func() tea.Msg {
			var recs []*krecord.Record
			var at pagePos
			var err error
			switch dir {
			case pageFirst, pageNext:
				recs, at, err = readForward(ctx, rd, ranges, pos, pageRecords)
			default:
				recs, at, err = readBackward(ctx, rd, ranges, pos, pageRecords)
			}
			return pageMsg{id: id, req: req, dir: dir, recs: recs, pos: at, err: err}
		}
	}
}

// openRecords opens the records view over ranges.
func (m *Model) openRecords(name string, batch *batchEntry, ranges []offsets.Range) tea.Cmd {
	m.nextID++
	v := newRecordsView(m.c, m.nextID, name, batch, ranges, m.readPage(ranges))
	m.pushView(v)
	return v.first()
}

// openBatchRecords is enter on a batch: every record of its ranges.
func (m *Model) openBatchRecords(e *batchEntry) tea.Cmd {
	ranges := make([]offsets.Range, 0, len(e.Ranges))
	for _, r := range e.Ranges {
		if r.Span() > 0 {
			ranges = append(ranges, r.Range)
		}
	}
	return m.openRecords(fmt.Sprintf("Batch %d", e.ID), e, ranges)
}

// pageIn hands a page to the records view it was read for, if still open.
func (m *Model) pageIn(msg pageMsg) tea.Cmd {
	for _, v := range m.views {
		if rv, ok := v.(*recordsView); ok && rv.id == msg.id {
			rv.take(msg)
			rv.SetSize(rv.width, rv.height)
			return rv.more()
		}
	}
	return nil
}

// recordsKey handles the keys that open or leave the records view: b on
// the batches or records pane opens the selected batch's, i in the view
// opens the batch's details, enter opens the selected record. It reports
// whether k was one of them.
func (m *Model) recordsKey(ks string) (tea.Cmd, bool) {
	km := m.c.keys
	switch v := m.top().(type) {
	case nil:
		if !keyIs(ks, km.AllRecords) || (m.focus != focusBatches && m.focus != focusRecords) {
			return nil, false
		}
		return m.enterBatch(m.batches.selected()), true
	case *recordsView:
		if v.capturing() {
			return nil, false
		}
		switch {
		case keyIs(ks, km.Enter):
			if r := v.list.selected(); r != nil {
				m.openRecord(r)
			}
			return nil, true
		case keyIs(ks, km.Info) && v.batch != nil:
			m.openBatch(v.batch)
			return nil, true
		}
	}
	return nil, false
}

// enterBatch opens every record of batch e when ranges can be read (the
// batch's details otherwise: kbatch spark without brokers).
func (m *Model) enterBatch(e *batchEntry) tea.Cmd {
	switch {
	case e == nil:
		m.setStatus("no batch selected", m.c.theme.dim)
		return nil
	case m.opts.Replayer == nil:
		m.openBatch(e)
		return nil
	}
	return m.openBatchRecords(e)
}

// enterPartition is enter on a partition: its records from the log start
// to the high watermark.
func (m *Model) enterPartition() tea.Cmd {
	st, ok := m.parts.selected()
	switch {
	case !ok:
		return nil
	case m.opts.Replayer == nil:
		m.setStatus("s seeks the selected partition, P pauses it", m.c.theme.dim)
		return nil
	case st.HighWatermark <= st.LogStart:
		m.setStatus(fmt.Sprintf("%s holds no record: its log start and high watermark are both %d", krecord.String(st.Partition.String()), st.HighWatermark), m.c.theme.dim)
		return nil
	}
	rg := offsets.Range{Partition: st.Partition, From: st.LogStart, Until: st.HighWatermark}
	cmd := m.openRecords(krecord.String(st.Partition.String()), nil, []offsets.Range{rg})
	describe, ctx, id := m.opts.DescribePartition, m.ctx, m.nextID
	if describe == nil {
		return cmd
	}
	return tea.Batch(cmd, func() tea.Msg {
		text, err := describe(ctx, st.Partition)
		return describedMsg{id: id, text: text, err: err}
	})
}

// describedMsg is a partition's description for the records view id.
type describedMsg struct {
	id   int
	text string
	err  error
}

// described puts a partition's description in its records view's head.
func (m *Model) described(msg describedMsg) {
	for _, v := range m.views {
		if rv, ok := v.(*recordsView); ok && rv.id == msg.id {
			rv.about = krecord.String(msg.text)
			if msg.err != nil {
				rv.about = "replicas and settings unknown: " + krecord.String(msg.err.Error())
			}
			rv.SetSize(rv.width, rv.height)
		}
	}
}
