package tui

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// sparkHistory is how many rate samples (one per progress event, about
// one a second) the trend column keeps per partition; the column shows as
// many of the latest as it is wide.
const sparkHistory = 120

// partitionsPane lists every partition with its start source, offsets,
// lag, rate trend and paused mark.
type partitionsPane struct {
	*common
	rows    []consumer.PartitionStatus
	index   map[offsets.Partition]int
	trend   map[offsets.Partition]*spark
	cur     cursor
	width   int
	height  int
	focused bool
	cols    []column
	// content holds the widest cell seen per column. It only grows, so
	// columns do not jump back and forth as lags and rates change.
	content map[string]int
	// loss marks the partitions with data loss not yet dismissed.
	loss map[offsets.Partition]bool
	// pf is the filter (/, partfilter.go).
	pf partFilter
	// manual (--ack manual) measures LAG from the acked position and
	// shows AHEAD, the records read past it.
	manual bool
	// order is how the rows are sorted (o; partsort.go).
	order int
}

func newPartitionsPane(c *common) *partitionsPane {
	return &partitionsPane{common: c, index: map[offsets.Partition]int{}, trend: map[offsets.Partition]*spark{}, content: map[string]int{}}
}

// partitionColumns are the columns in table order; widths are minimums,
// widened to the content. On narrow screens the highest priority numbers
// go first: the trend, then the start source, log start, high watermark.
var partitionColumns = []column{
	{title: "PARTITION", width: 9, priority: 0},
	{title: "SOURCE", width: 6, priority: 7},
	{title: "NEXT", width: 4, right: true, priority: 1},
	{title: "LOG START", width: 9, right: true, priority: 6},
	{title: "HWM", width: 3, right: true, priority: 5},
	{title: "LAG", width: 3, right: true, priority: 2},
	{title: "AHEAD", width: 5, right: true, priority: 2},
	{title: "REC/S", width: 5, right: true, priority: 4},
	{title: "STATE", width: 6, priority: 3},
	{title: "TREND", width: 5, priority: 8, flex: true, maxWidth: sparkHistory},
}

// wantHeight is the inner height that shows every partition: the column
// header and one line per partition (at least one, for the waiting line).
func (p *partitionsPane) wantHeight() int {
	if p.pf.active() {
		return 2 + max(1, p.rowCount())
	}
	return 1 + max(1, len(p.rows))
}

// start shows where every partition starts, before the first progress.
func (p *partitionsPane) start(starts []offsets.Start) {
	rows := make([]consumer.PartitionStatus, len(starts))
	for i, s := range starts {
		rows[i] = consumer.PartitionStatus{Partition: s.Partition, Source: s.Source, NextOffset: s.NextOffset,
			Stored: -1, Bounds: s.Bounds, Lag: max(0, s.HighWatermark-s.NextOffset), Acked: s.NextOffset}
	}
	p.setRows(rows)
}

// progress replaces every partition's status and extends the trends.
func (p *partitionsPane) progress(pr *consumer.Progress) {
	p.setRows(pr.Partitions)
	for _, s := range pr.Partitions {
		sp := p.trend[s.Partition]
		if sp == nil {
			sp = &spark{}
			p.trend[s.Partition] = sp
		}
		sp.add(s.Rate)
	}
}

// setRows keeps the selection on the same partition.
func (p *partitionsPane) setRows(rows []consumer.PartitionStatus) {
	sel, hadSel := p.selected()
	p.rows = append(p.rows[:0], rows...) // a copy: advance changes rows, not the event's
	p.sortRows()
	clear(p.index)
	for i, r := range p.rows {
		p.index[r.Partition] = i
	}
	p.cur.setLen(len(rows))
	p.refilter()
	grow := func(col string, w int) { p.content[col] = max(p.content[col], w) }
	for _, r := range rows {
		grow("PARTITION", ansi.StringWidth(krecord.String(r.Topic))+2+len(strconv.Itoa(int(r.Partition.Partition))))
		grow("SOURCE", len(r.Source))
		grow("NEXT", len(formatOffset(r.NextOffset)))
		grow("LOG START", len(formatOffset(r.LogStart)))
		grow("HWM", len(formatOffset(r.HighWatermark)))
		grow("LAG", len(strconv.FormatInt(p.lag(r), 10)))
		grow("AHEAD", len(strconv.FormatInt(r.Ahead, 10)))
		grow("REC/S", len(formatCount(r.Rate)))
		if r.Corrupt {
			grow("STATE", len(corruptState))
		}
	}
	p.layout()
	if hadSel {
		for i := 0; i < p.rowCount(); i++ {
			if p.rows[p.rowAt(i)].Partition == sel.Partition {
				p.cur.sel = i
				p.cur.clamp()
				break
			}
		}
	}
}

// advance moves the partitions of a batch to where it ends, so NEXT and
// LAG keep up with the batches between two progress events (about a
// second apart; a catch-up cuts dozens of batches in between). Offsets
// only move forward here: a seek back shows with the next progress.
func (p *partitionsPane) advance(b *consumer.Batch) {
	wide, hwmWide := p.content["NEXT"], p.content["HWM"]
	for _, r := range b.Ranges {
		i, ok := p.index[r.Partition]
		if !ok {
			continue
		}
		row := &p.rows[i]
		row.NextOffset = max(row.NextOffset, r.Until)
		// A record below Until was read, so the high watermark is at
		// least there, whatever the last progress said.
		row.HighWatermark = max(row.HighWatermark, r.Until)
		if b.State == offsets.StateAcked {
			row.Stored = max(row.Stored, r.Until)
			if row.Acked < r.Until {
				row.Acked = r.Until
				row.Ahead = max(0, row.Ahead-r.Records)
			}
		}
		row.Lag = consumer.StatusLag(*row)
		p.content["NEXT"] = max(p.content["NEXT"], len(formatOffset(row.NextOffset)))
		p.content["HWM"] = max(p.content["HWM"], len(formatOffset(row.HighWatermark)))
	}
	if p.content["NEXT"] != wide || p.content["HWM"] != hwmWide {
		p.layout()
	}
}

// setPaused marks one partition (or all, when all is set) paused at once,
// before the next progress confirms it.
func (p *partitionsPane) setPaused(part offsets.Partition, all, paused bool) {
	if all {
		for i := range p.rows {
			p.rows[i].Paused = paused
		}
		return
	}
	if i, ok := p.index[part]; ok {
		p.rows[i].Paused = paused
	}
}

func (p *partitionsPane) selected() (consumer.PartitionStatus, bool) {
	if p.cur.sel < p.rowCount() {
		return p.rows[p.rowAt(p.cur.sel)], true
	}
	return consumer.PartitionStatus{}, false
}

func (p *partitionsPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.layout()
	if p.pf.active() {
		h--
	}
	p.cur.setHeight(h - 1)
}

// layout sizes the columns to their content; PARTITION is as wide as the
// longest name up to 32 columns (longer topics are shortened, the
// partition number always shows).
func (p *partitionsPane) layout() {
	cols := make([]column, 0, len(partitionColumns))
	for _, c := range partitionColumns {
		if c.title != "AHEAD" || p.manual {
			cols = append(cols, c)
		}
	}
	for title, w := range p.content {
		limit := 0
		if title == "PARTITION" {
			limit = 32
		}
		fitContent(cols, title, w, limit)
	}
	p.cols = layoutColumns(cols, p.width-2)
}

func (p *partitionsPane) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if p.pf.editing {
			return p.filterKey(k)
		}
		p.navKeys(k.String(), &p.cur)
	}
	return nil
}

func (p *partitionsPane) title() string {
	var lag, ahead int64
	for _, r := range p.rows {
		lag += p.lag(r)
		ahead += r.Ahead
	}
	s := "Partitions " + strconv.Itoa(len(p.rows)) + " · lag " + strconv.FormatInt(lag, 10)
	if p.manual {
		s += " from acked · " + strconv.FormatInt(ahead, 10) + " read ahead"
	}
	return s + p.orderTitle() + p.filterTitle()
}

// lag is what LAG shows: HWM - NEXT, or with manual acks HWM - the acked
// position, so a batch waiting for its ack and the records read past it
// still count as lag.
func (p *partitionsPane) lag(r consumer.PartitionStatus) int64 {
	if p.manual {
		// r.Lag plus what is read and not acked: HWM - acked, less the
		// offsets read past NEXT that hold no record (a final marker).
		return r.Lag + max(0, r.NextOffset-r.Acked)
	}
	return r.Lag
}

// View draws only the visible rows, so 1000 partitions cost what a screen
// of them costs.
func (p *partitionsPane) View() string {
	lines := make([]string, 0, p.height)
	if p.pf.active() {
		lines = append(lines, p.filterLine())
	}
	lines = append(lines, "  "+headerRow(&p.theme, p.cols))
	if p.pf.query != "" && len(p.pf.shown) == 0 && len(p.rows) > 0 {
		return strings.Join(append(lines, p.theme.dim.Render("  no partition matches the filter")), "\n")
	}
	if len(p.rows) == 0 {
		return strings.Join(append(lines, p.theme.dim.Render("  waiting for the stream to start…")), "\n")
	}
	from, until := p.cur.visible()
	cells := make([]string, len(p.cols))
	styles := make([]*lipgloss.Style, len(p.cols))
	for i := from; i < until; i++ {
		r := p.rows[p.rowAt(i)]
		sel := i == p.cur.sel
		for c, col := range p.cols {
			styles[c] = nil
			switch col.title {
			case "PARTITION":
				cells[c] = partitionLabel(r.Topic, r.Partition.Partition, col.width)
			case "SOURCE":
				cells[c] = string(r.Source)
			case "NEXT":
				cells[c] = formatOffset(r.NextOffset)
			case "LOG START":
				cells[c] = formatOffset(r.LogStart)
			case "HWM":
				cells[c] = formatOffset(r.HighWatermark)
			case "LAG":
				cells[c] = strconv.FormatInt(p.lag(r), 10)
				if p.lag(r) > 0 {
					styles[c] = &p.theme.warn
				}
			case "AHEAD":
				cells[c] = strconv.FormatInt(r.Ahead, 10)
			case "REC/S":
				cells[c] = formatCount(r.Rate)
			case "TREND":
				if sp := p.trend[r.Partition]; sp != nil {
					cells[c] = sp.render(col.width)
				} else {
					cells[c] = ""
				}
				styles[c] = &p.theme.spark
			case "STATE":
				cells[c], styles[c] = p.state(r)
			}
		}
		if sel {
			lines = append(lines, p.selectedRow(cells))
		} else {
			lines = append(lines, markRow(&p.theme, renderRow(p.cols, cells, styles...), false, p.focused))
		}
	}
	return strings.Join(lines, "\n")
}

func (p *partitionsPane) state(r consumer.PartitionStatus) (string, *lipgloss.Style) {
	switch {
	case r.Corrupt:
		return corruptState, &p.theme.bad
	case r.Errored:
		return "error", &p.theme.bad
	case p.loss[r.Partition]:
		return lossState, &p.theme.bad
	case r.Paused:
		return "paused", &p.theme.warn
	}
	return "live", &p.theme.dim
}

// corruptState is the STATE of a partition stopped at a record batch
// that cannot be delivered, until a seek moves it past.
const corruptState = "corrupt"

// lossState is the STATE of a partition with data loss not yet dismissed.
const lossState = "data loss"

// setLoss marks the partitions in loss (nil: none) until the next call.
func (p *partitionsPane) setLoss(loss map[offsets.Partition]bool) {
	p.loss = loss
	if len(loss) > 0 && p.content["STATE"] < len(lossState) {
		p.content["STATE"] = len(lossState)
		p.layout()
	}
}

func (p *partitionsPane) ShortHelp() []key.Binding {
	pause := p.keys.PausePart
	if r, ok := p.selected(); ok && r.Paused {
		pause = withHelp(pause, "resume partition")
	}
	return []key.Binding{p.keys.Seek, p.keys.SeekAll, p.keys.Replay, pause}
}

func (p *partitionsPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{p.navHelp(), p.ShortHelp()}
}

// spark is a ring of recent rates drawn as a block sparkline (the REC/S
// column gives the number).
type spark struct {
	vals [sparkHistory]float64
	next int // where the next value goes
	n    int // values held, up to sparkHistory
}

func (s *spark) add(v float64) {
	s.vals[s.next] = v
	s.next = (s.next + 1) % sparkHistory
	s.n = min(s.n+1, sparkHistory)
}

var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// render draws the latest values that fit in w columns, oldest left: the
// line grows to the right until it fills the column, then scrolls. The
// scale is linear from zero to the 90th percentile of what is shown, so
// one catch-up burst does not flatten everything else (it shows as a full
// block); a zero rate is the lowest block, so an idle partition shows a
// flat line.
func (s *spark) render(w int) string {
	shown := min(w, s.n)
	vals := make([]float64, shown)
	for i := range vals { // vals[0] is the oldest shown
		vals[i] = s.vals[(s.next-shown+i+2*sparkHistory)%sparkHistory]
	}
	top := slices.Clone(vals)
	slices.Sort(top)
	var peak float64
	if shown > 0 {
		peak = top[(9*shown+9)/10-1] // nearest-rank 90th percentile
		if peak == 0 {
			peak = top[shown-1]
		}
	}
	out := make([]rune, 0, shown)
	for _, v := range vals {
		if peak == 0 || v <= 0 {
			out = append(out, sparkBlocks[0])
			continue
		}
		idx := int(min(1, v/peak) * float64(len(sparkBlocks)-1))
		out = append(out, sparkBlocks[max(1, idx)])
	}
	return string(out)
}

func (p *partitionsPane) setFocus(f bool) { p.focused = f }

// status returns a partition's latest status.
func (p *partitionsPane) status(part offsets.Partition) (consumer.PartitionStatus, bool) {
	if i, ok := p.index[part]; ok {
		return p.rows[i], true
	}
	return consumer.PartitionStatus{}, false
}

// setBounds takes bounds listed now (a seek form opened): the log start
// as listed, the high watermark never lower than known.
func (p *partitionsPane) setBounds(bs map[offsets.Partition]offsets.Bounds) {
	for part, b := range bs {
		if i, ok := p.index[part]; ok {
			row := &p.rows[i]
			row.LogStart = b.LogStart
			row.HighWatermark = max(row.HighWatermark, b.HighWatermark)
			row.Lag = consumer.StatusLag(*row)
		}
	}
}

// moved shows a seek at once, before the next progress confirms it: NEXT
// at the target, the bounds it was resolved with (so NEXT never shows
// above HWM), SOURCE explicit.
func (p *partitionsPane) moved(t consumer.SeekTarget) {
	i, ok := p.index[t.Partition]
	if !ok {
		return
	}
	row := &p.rows[i]
	row.NextOffset, row.Source = t.Offset, offsets.SourceExplicit
	if t.Bounds.HighWatermark >= 0 {
		row.LogStart = max(row.LogStart, t.Bounds.LogStart)
		row.HighWatermark = max(row.HighWatermark, t.Bounds.HighWatermark)
	}
	row.HighWatermark = max(row.HighWatermark, row.NextOffset)
	row.Lag = max(0, row.HighWatermark-row.NextOffset)
}

// selectedRow renders the selected row on the selection bar, except the
// trend: block glyphs in reverse video turn into dark blocks on the light
// bar, so the trend keeps its own colour on the plain background.
func (p *partitionsPane) selectedRow(cells []string) string {
	last := len(p.cols) - 1
	if last < 1 || p.cols[last].title != "TREND" {
		return markRow(&p.theme, renderRow(p.cols, cells), true, p.focused)
	}
	head := renderRow(p.cols[:last], cells[:last]) + "  "[:min(2, max(1, p.cols[last].gap))]
	return markRow(&p.theme, head, true, p.focused) + p.theme.spark.Render(fit(cells[last], p.cols[last].width))
}
