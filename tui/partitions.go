package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// sparkLen is how many rate samples (one per progress event, ~1/s) the
// trend column keeps per partition.
const sparkLen = 8

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
	nameW   int // longest "topic[n]"
}

func newPartitionsPane(c *common) *partitionsPane {
	return &partitionsPane{common: c, index: map[offsets.Partition]int{}, trend: map[offsets.Partition]*spark{}}
}

var partitionColumns = []column{
	{title: "PARTITION", width: 10, priority: 0, flex: true},
	{title: "SOURCE", width: 14, priority: 6},
	{title: "NEXT", width: 10, right: true, priority: 1},
	{title: "LOG START", width: 10, right: true, priority: 8},
	{title: "HWM", width: 10, right: true, priority: 5},
	{title: "LAG", width: 7, right: true, priority: 2},
	{title: "REC/S", width: 6, right: true, priority: 4},
	{title: "TREND", width: sparkLen, priority: 7},
	{title: "STATE", width: 6, priority: 3},
}

// start shows where every partition starts, before the first progress.
func (p *partitionsPane) start(starts []offsets.Start) {
	rows := make([]consumer.PartitionStatus, len(starts))
	for i, s := range starts {
		rows[i] = consumer.PartitionStatus{Partition: s.Partition, Source: s.Source, NextOffset: s.NextOffset,
			Stored: -1, Bounds: s.Bounds, Lag: max(0, s.HighWatermark-s.NextOffset)}
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
	p.rows = rows
	clear(p.index)
	for i, r := range rows {
		p.index[r.Partition] = i
	}
	p.cur.setLen(len(rows))
	p.nameW = 0
	for _, r := range rows {
		p.nameW = max(p.nameW, len(r.Topic)+2+len(strconv.Itoa(int(r.Partition.Partition))))
	}
	p.layout()
	if hadSel {
		if i, ok := p.index[sel.Partition]; ok {
			p.cur.sel = i
			p.cur.clamp()
		}
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
	if p.cur.sel < len(p.rows) {
		return p.rows[p.cur.sel], true
	}
	return consumer.PartitionStatus{}, false
}

func (p *partitionsPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.layout()
	p.cur.setHeight(h - 1)
}

// layout sizes the columns; PARTITION is as wide as the longest name,
// within limits, so partition numbers are not cut.
func (p *partitionsPane) layout() {
	cols := append([]column(nil), partitionColumns...)
	cols[0].width = min(max(cols[0].width, p.nameW), 32)
	p.cols = layoutColumns(cols, p.width-2)
}

func (p *partitionsPane) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		p.navKeys(k.String(), &p.cur)
	}
	return nil
}

func (p *partitionsPane) title() string {
	var lag int64
	for _, r := range p.rows {
		lag += r.Lag
	}
	return "Partitions " + strconv.Itoa(len(p.rows)) + " · lag " + strconv.FormatInt(lag, 10)
}

// View draws only the visible rows, so 1000 partitions cost what a screen
// of them costs.
func (p *partitionsPane) View() string {
	lines := make([]string, 0, p.height)
	lines = append(lines, "  "+headerRow(&p.theme, p.cols))
	if len(p.rows) == 0 {
		return strings.Join(append(lines, p.theme.dim.Render("  waiting for the stream to start…")), "\n")
	}
	from, until := p.cur.visible()
	cells := make([]string, len(p.cols))
	styles := make([]*lipgloss.Style, len(p.cols))
	for i := from; i < until; i++ {
		r := p.rows[i]
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
				cells[c] = strconv.FormatInt(r.Lag, 10)
				if r.Lag > 0 {
					styles[c] = &p.theme.warn
				}
			case "REC/S":
				cells[c] = formatCount(r.Rate)
			case "TREND":
				if sp := p.trend[r.Partition]; sp != nil {
					cells[c] = sp.String()
				} else {
					cells[c] = ""
				}
				styles[c] = &p.theme.spark
			case "STATE":
				cells[c], styles[c] = p.state(r)
			}
		}
		if sel {
			lines = append(lines, markRow(&p.theme, renderRow(p.cols, cells), true, p.focused))
		} else {
			lines = append(lines, markRow(&p.theme, renderRow(p.cols, cells, styles...), false, p.focused))
		}
	}
	return strings.Join(lines, "\n")
}

func (p *partitionsPane) state(r consumer.PartitionStatus) (string, *lipgloss.Style) {
	switch {
	case r.Errored:
		return "error", &p.theme.bad
	case r.Paused:
		return "paused", &p.theme.warn
	}
	return "", nil
}

func (p *partitionsPane) ShortHelp() []key.Binding {
	return []key.Binding{p.keys.PausePart, p.keys.Seek, p.keys.Replay}
}

func (p *partitionsPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{p.navHelp(), p.ShortHelp()}
}

// spark is a ring of recent rates drawn as a block sparkline, scaled to its
// own maximum (the REC/S column gives the absolute number).
type spark struct {
	vals [sparkLen]float64
	n    int
}

func (s *spark) add(v float64) {
	copy(s.vals[:], s.vals[1:])
	s.vals[sparkLen-1] = v
	s.n = min(s.n+1, sparkLen)
}

var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

func (s *spark) String() string {
	var peak float64
	for _, v := range s.vals {
		peak = max(peak, v)
	}
	out := make([]rune, 0, sparkLen)
	for i, v := range s.vals {
		switch {
		case i < sparkLen-s.n:
			out = append(out, ' ')
		case peak == 0 || v <= 0:
			out = append(out, '▁')
		default:
			idx := int(v / peak * float64(len(sparkBlocks)-1))
			out = append(out, sparkBlocks[max(1, idx)])
		}
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
