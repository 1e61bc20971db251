package tui

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// GroupReader reads the consumer groups that committed offsets on some of
// the stream's partitions, for C. It only reads (kbatch never joins a
// group). It is called from a tea.Cmd, again every groupsRefresh while
// the view is open.
type GroupReader interface {
	// TopicGroups returns the groups with commits on parts, and how many
	// groups the cluster lists in all.
	TopicGroups(ctx context.Context, parts []offsets.Partition) ([]ConsumerGroup, int, error)
}

// ConsumerGroup is one group and its committed offsets.
type ConsumerGroup struct {
	Name    string
	State   string // Stable, Empty…; "" when unknown
	Members int
	// Offsets are committed next offsets, by partition.
	Offsets map[offsets.Partition]int64
	// Err is why the group's offsets could not be read (permissions).
	Err error
}

// groupsRefresh is how often the open groups view reads the groups again.
const groupsRefresh = 5 * time.Second

// groupsMsg is an answer of the GroupReader to request id.
type groupsMsg struct {
	id     int
	groups []ConsumerGroup
	total  int
	err    error
	at     time.Time
}

// groupsTickMsg asks for the next refresh of view id.
type groupsTickMsg struct{ id int }

// groupRow is one line of the table: a partition of a group, or a
// group that could not be read.
type groupRow struct {
	group, state string
	first        bool // the group's first row: its name shows
	part         offsets.Partition
	committed    int64
	err          string
}

// groupsView is C: the consumer groups that read the stream's topics,
// each partition's committed offset and lag beside the stream's own
// position and the kept batch whose range holds the group's offset.
type groupsView struct {
	*common
	id      int
	status  func(offsets.Partition) (consumer.PartitionStatus, bool)
	hist    *history
	parts   []offsets.Partition
	rows    []groupRow
	groups  int // groups shown
	total   int
	err     error
	loaded  bool
	pending bool
	at      time.Time
	cur     cursor
	cols    []column
	width   int
	height  int
	// timer is groupsTimer; tests stop the refresh loop with their own.
	timer func(id int) tea.Cmd
}

var groupColumns = []column{
	{title: "GROUP", width: 10, priority: 0},
	{title: "PARTITION", width: 9, priority: 0},
	{title: "COMMITTED", width: 9, right: true, priority: 1},
	{title: "LAG", width: 6, right: true, priority: 2},
	{title: "STREAM NEXT", width: 11, right: true, priority: 3},
	{title: "VS STREAM", width: 13, right: true, priority: 5},
	{title: "IN BATCH", width: 16, priority: 4},
	{title: "STATE", width: 11, priority: 6, flex: true, maxWidth: 24},
}

func (v *groupsView) SetSize(w, h int) {
	v.width, v.height = w, h
	cols := append([]column(nil), groupColumns...)
	for _, r := range v.rows {
		fitContent(cols, "GROUP", len(krecord.String(r.group)), 40)
		fitContent(cols, "PARTITION", len(krecord.String(r.part.Topic))+2+len(strconv.Itoa(int(r.part.Partition))), 32)
	}
	v.cols = layoutColumns(cols, w-2)
	v.cur.setHeight(h - 2)
}

func (v *groupsView) capturing() bool { return false }

func (v *groupsView) title() string {
	s := "Consumer groups on " + strings.Join(v.topics(), ",")
	if v.loaded && v.err == nil {
		s += fmt.Sprintf(" · %d of %d groups", v.groups, v.total)
	}
	if !v.at.IsZero() {
		s += " · read " + v.at.In(v.loc).Format("15:04:05") + ", every " + groupsRefresh.String()
	}
	return krecord.String(s)
}

func (v *groupsView) topics() []string {
	var ts []string
	seen := map[string]bool{}
	for _, p := range v.parts {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			ts = append(ts, p.Topic)
		}
	}
	return ts
}

func (v *groupsView) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		v.navKeys(k.String(), &v.cur)
	}
	return nil
}

// answered keeps an answer; an error keeps the rows of the last good one.
func (v *groupsView) answered(msg groupsMsg) {
	v.pending, v.loaded, v.at, v.err = false, true, msg.at, msg.err
	if msg.err != nil {
		return
	}
	v.total, v.groups = msg.total, len(msg.groups)
	v.rows = v.rows[:0]
	for _, g := range msg.groups {
		if g.Err != nil && len(g.Offsets) == 0 {
			v.rows = append(v.rows, groupRow{group: g.Name, state: g.State, first: true, err: g.Err.Error()})
			continue
		}
		ps := make([]offsets.Partition, 0, len(g.Offsets))
		for p := range g.Offsets {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].Less(ps[j]) })
		for i, p := range ps {
			v.rows = append(v.rows, groupRow{group: g.Name, state: groupState(g), first: i == 0, part: p, committed: g.Offsets[p]})
		}
	}
	v.cur.setLen(len(v.rows))
	v.SetSize(v.width, v.height)
}

func groupState(g ConsumerGroup) string {
	switch {
	case g.State == "":
		return ""
	case g.Members > 0:
		return g.State + " · " + plural(int64(g.Members), "member", "members")
	}
	return g.State
}

func (v *groupsView) View() string {
	th := &v.theme
	lines := []string{th.dim.Render(fit("Read-only, kbatch never joins. LAG: high watermark − committed. VS STREAM: committed − this stream's NEXT.", v.width)),
		"  " + headerRow(th, v.cols)}
	switch {
	case !v.loaded:
		return strings.Join(append(lines, th.dim.Render("  reading consumer groups…")), "\n")
	case v.err != nil && len(v.rows) == 0:
		return strings.Join(append(lines, th.bad.Render(fit("  cannot read consumer groups: "+krecord.String(v.err.Error()), v.width))), "\n")
	case len(v.rows) == 0 && v.total == 0:
		return strings.Join(append(lines, th.dim.Render(fit("  no consumer group to show: the cluster lists none this user may describe "+
			"(Kafka lists only the groups a user has DESCRIBE on)", v.width))), "\n")
	case len(v.rows) == 0:
		return strings.Join(append(lines, th.dim.Render(fit(fmt.Sprintf("  none of the %d groups this user may describe has committed offsets on these topics "+
			"(Kafka lists only the groups a user has DESCRIBE on)", v.total), v.width))), "\n")
	}
	from, until := v.cur.visible()
	cells := make([]string, len(v.cols))
	styles := make([]*lipgloss.Style, len(v.cols))
	for i := from; i < until; i++ {
		r := v.rows[i]
		sel := i == v.cur.sel
		if r.err != "" {
			line := fit(krecord.String(r.group), 20) + " " + th.bad.Render(krecord.String(r.err))
			lines = append(lines, markRow(th, line, sel, true))
			continue
		}
		st, ok := v.status(r.part)
		for c, col := range v.cols {
			styles[c] = nil
			cells[c] = ""
			switch col.title {
			case "GROUP":
				if r.first || i == from {
					cells[c] = krecord.String(r.group)
				}
			case "STATE":
				if r.first || i == from {
					cells[c], styles[c] = r.state, &th.dim
				}
			case "PARTITION":
				cells[c] = partitionLabel(r.part.Topic, r.part.Partition, col.width)
			case "COMMITTED":
				cells[c] = strconv.FormatInt(r.committed, 10)
			case "LAG":
				if ok {
					lag := max(0, st.HighWatermark-r.committed)
					cells[c] = strconv.FormatInt(lag, 10)
					if lag > 0 {
						styles[c] = &th.warn
					}
				}
			case "STREAM NEXT":
				if ok {
					cells[c] = formatOffset(st.NextOffset)
				}
			case "VS STREAM":
				if ok {
					d := r.committed - st.NextOffset
					switch {
					case d > 0:
						cells[c] = "+" + strconv.FormatInt(d, 10) + " ahead"
					case d < 0:
						cells[c] = strconv.FormatInt(-d, 10) + " behind"
					default:
						cells[c] = "level"
					}
				}
			case "IN BATCH":
				cells[c] = batchHolding(v.hist, r.part, r.committed)
				styles[c] = &th.info
			}
		}
		if sel {
			lines = append(lines, markRow(th, renderRow(v.cols, cells), true, true))
		} else {
			lines = append(lines, markRow(th, renderRow(v.cols, cells, styles...), false, true))
		}
	}
	if v.err != nil {
		lines = append(lines, th.bad.Render(fit("  the last refresh failed: "+krecord.String(v.err.Error()), v.width)))
	}
	return strings.Join(lines, "\n")
}

// batchHolding names the kept batch whose range on p holds offset off
// (the next record the group reads), or the batch it ends: "12 [100,200)",
// "end of 12"; "" when no kept batch is near it.
func batchHolding(h *history, p offsets.Partition, off int64) string {
	for i := 0; i < h.len(); i++ {
		e := h.newest(i)
		for _, r := range e.Ranges {
			if r.Partition != p {
				continue
			}
			switch {
			case off >= r.From && off < r.Until:
				return fmt.Sprintf("%d [%d,%d)", e.ID, r.From, r.Until)
			case off == r.Until && r.Until > r.From:
				return fmt.Sprintf("end of %d", e.ID)
			}
		}
	}
	return ""
}

func (v *groupsView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Down, v.keys.Back}
}
func (v *groupsView) FullHelp() [][]key.Binding { return [][]key.Binding{v.ShortHelp()} }

// openGroups is C.
func (m *Model) openGroups() tea.Cmd {
	if m.opts.Groups == nil {
		m.setStatus("the consumer groups view is not available in this session", m.c.theme.dim)
		return nil
	}
	parts := make([]offsets.Partition, 0, len(m.parts.rows))
	for _, r := range m.parts.rows {
		parts = append(parts, r.Partition)
	}
	if len(parts) == 0 {
		m.setStatus("the stream has not started yet: C shows the groups once its partitions are known", m.c.theme.dim)
		return nil
	}
	m.nextID++
	v := &groupsView{common: m.c, id: m.nextID, status: m.parts.status, hist: m.hist, parts: parts, timer: groupsTimer}
	m.pushView(v)
	return m.readGroups(v)
}

func (m *Model) readGroups(v *groupsView) tea.Cmd {
	if v.pending {
		return nil
	}
	v.pending = true
	// Not waited for on quit (m.bg): a read has nothing to finish, and a
	// broker that does not answer would hold the quit for its timeout.
	g, ctx, id, parts, now := m.opts.Groups, m.ctx, v.id, v.parts, m.now
	return func() tea.Msg {
		groups, total, err := g.TopicGroups(ctx, parts)
		return groupsMsg{id: id, groups: groups, total: total, err: err, at: now()}
	}
}

// groupsView returns the open groups view with id, if any.
func (m *Model) groupsView(id int) *groupsView {
	for _, v := range m.views {
		if g, ok := v.(*groupsView); ok && g.id == id {
			return g
		}
	}
	return nil
}

func (m *Model) groupsAnswered(msg groupsMsg) tea.Cmd {
	v := m.groupsView(msg.id)
	if v == nil {
		return nil // closed
	}
	v.answered(msg)
	return v.timer(msg.id)
}

// groupsTimer waits groupsRefresh, then asks for view id's next refresh.
func groupsTimer(id int) tea.Cmd {
	return tea.Tick(groupsRefresh, func(time.Time) tea.Msg { return groupsTickMsg{id: id} })
}

func (m *Model) groupsTick(msg groupsTickMsg) tea.Cmd {
	if v := m.groupsView(msg.id); v != nil {
		return m.readGroups(v)
	}
	return nil
}
