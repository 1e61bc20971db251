package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// GroupSetter plans and writes a consumer group's committed offsets for
// O ("set group …"), the way offsets export --to-group does: the group is
// never joined, and one with live members is never moved. It is called
// from tea.Cmds.
type GroupSetter interface {
	// PlanGroup reads group's state and its committed offsets on next's
	// partitions.
	PlanGroup(ctx context.Context, group string, next map[offsets.Partition]int64) (GroupPlan, error)
	// SetGroup writes next as group's committed offsets; it refuses a
	// group with live members.
	SetGroup(ctx context.Context, group string, next map[offsets.Partition]int64) error
}

// GroupPlan is what writing offsets to a group would change.
type GroupPlan struct {
	State   string // Empty, Stable…; "" for a group that does not exist yet
	Members int
	// Refusal, when set, is why the group cannot be written (it has live
	// members): the form shows it and offers no confirmation.
	Refusal string
	Moves   []offsets.GroupMove
}

// The ends of a batch the group can be put at.
const (
	setGroupFrom  = "from"  // the batch's start: the group reads it again
	setGroupUntil = "until" // its end: the group goes on after it
)

// setGroupPlanMsg is the plan answered to request id.
type setGroupPlanMsg struct {
	id   int
	plan GroupPlan
	err  error
}

// setGroupDoneMsg is the answer to the write of request id; the root
// closes the form and opens the groups view on success.
type setGroupDoneMsg struct {
	id    int
	group string
	n     int
	err   error
}

// setGroupForm is O: put a consumer group at a batch's start or end (the
// batch selected or open) or at a partition's acked offset. It asks for
// the group's name, shows the plan (per partition the committed offset,
// the new one, the difference) and writes it on a second enter.
type setGroupForm struct {
	*common
	setter GroupSetter
	ctx    context.Context
	nextID *int
	// source describes where the offsets come from; at picks a batch's
	// end (tab toggles it when targets has two).
	source  string
	at      string
	targets map[string]map[offsets.Partition]int64
	input   textinput.Model
	pending int // id of the request in flight
	plan    *GroupPlan
	planFor string // the group and end the plan was read for
	problem string
	width   int
	height  int
}

func newSetGroupForm(c *common, setter GroupSetter, ctx context.Context, nextID *int, source string, targets map[string]map[offsets.Partition]int64) *setGroupForm {
	in := newLineInput("group> ", "consumer group name")
	in.Focus()
	f := &setGroupForm{common: c, setter: setter, ctx: ctx, nextID: nextID, source: source, targets: targets, input: in, at: setGroupFrom}
	if _, ok := targets[setGroupFrom]; !ok {
		f.at = setGroupUntil
	}
	return f
}

func (f *setGroupForm) next() map[offsets.Partition]int64 { return f.targets[f.at] }

func (f *setGroupForm) SetSize(w, h int) {
	f.width, f.height = w, h
	f.input.SetWidth(max(10, w-len(f.input.Prompt)-2))
}

func (f *setGroupForm) capturing() bool { return true }
func (f *setGroupForm) dialog() bool    { return true }
func (f *setGroupForm) title() string {
	return "Set consumer group offsets · " + krecord.String(f.source)
}

func (f *setGroupForm) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case setGroupPlanMsg:
		if !answered(&f.pending, msg.id) {
			return nil
		}
		if msg.err != nil {
			f.problem = msg.err.Error()
			return nil
		}
		f.plan, f.planFor, f.problem = &msg.plan, f.planKey(), ""
		return nil
	case setGroupDoneMsg:
		if answered(&f.pending, msg.id) { // success closes the form (the root)
			f.problem = msg.err.Error()
		}
		return nil
	case tea.KeyPressMsg:
		return f.press(msg)
	}
	return nil
}

// planKey names what a plan was read for: the group and the batch's end.
func (f *setGroupForm) planKey() string { return f.group() + "\x00" + f.at }

func (f *setGroupForm) group() string { return strings.TrimSpace(f.input.Value()) }

// planned is the plan read for what the form says now; nil when there is
// none (yet, or the name or the end changed since).
func (f *setGroupForm) planned() *GroupPlan {
	if f.plan == nil || f.planFor != f.planKey() {
		return nil
	}
	return f.plan
}

func (f *setGroupForm) press(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		return closeView
	case "tab":
		if len(f.targets) == 2 {
			f.at = map[string]string{setGroupFrom: setGroupUntil, setGroupUntil: setGroupFrom}[f.at]
			f.problem = ""
		}
		return nil
	case "enter":
		if f.pending != 0 {
			return nil
		}
		if f.group() == "" {
			f.problem = "type the consumer group's name"
			return nil
		}
		p := f.planned()
		switch {
		case p == nil:
			return f.request(false)
		case p.Refusal != "" || offsets.GroupPlanChanges(p.Moves) == 0:
			return nil
		}
		return f.request(true)
	}
	cmd := typeInto(&f.input, k)
	f.problem = ""
	return cmd
}

// request reads the plan, or (write) writes it.
func (f *setGroupForm) request(write bool) tea.Cmd {
	*f.nextID++
	f.pending = *f.nextID
	id, s, ctx, group := f.pending, f.setter, f.ctx, f.group()
	next := f.next()
	if write {
		return func() tea.Msg {
			err := s.SetGroup(ctx, group, next)
			return setGroupDoneMsg{id: id, group: group, n: len(next), err: err}
		}
	}
	return func() tea.Msg {
		plan, err := s.PlanGroup(ctx, group, next)
		return setGroupPlanMsg{id: id, plan: plan, err: err}
	}
}

func (f *setGroupForm) View() string {
	th := &f.theme
	lines := []string{f.input.View()}
	if len(f.targets) == 2 {
		lines = append(lines, th.dim.Render(fit("  tab: at the batch's "+map[string]string{
			setGroupFrom:  "start (now: from, the group reads the batch again)",
			setGroupUntil: "end (now: until, the group goes on after it)"}[f.at], f.width)))
	}
	p := f.planned()
	switch {
	case f.pending != 0 && p == nil:
		lines = append(lines, th.dim.Render("  reading the group…"))
	case f.pending != 0:
		lines = append(lines, th.dim.Render("  writing…"))
	}
	if f.problem != "" {
		lines = append(lines, th.bad.Render(fit("  "+krecord.String(f.problem), f.width)))
	}
	if p == nil {
		if f.pending == 0 {
			lines = append(lines, th.dim.Render(fit("  enter shows the plan; nothing is written before a second enter. The group is never joined.", f.width)))
		}
		return strings.Join(lines, "\n")
	}
	state := p.State
	if state == "" {
		state = "new group"
	}
	if p.Members > 0 {
		state += " · " + plural(int64(p.Members), "member", "members")
	}
	lines = append(lines, th.dim.Render(fit("  "+krecord.String(f.group()+" ("+state+")"), f.width)),
		"  "+fmt.Sprintf("%-28s %12s %12s %10s", "PARTITION", "COMMITTED", "NEW", "DIFF"))
	room := max(1, f.height-len(lines)-3)
	for i, m := range p.Moves {
		if i == room && len(p.Moves) > room+1 {
			lines = append(lines, th.dim.Render(fmt.Sprintf("  … and %d more partitions", len(p.Moves)-room)))
			break
		}
		diff := "-"
		if d, ok := m.Diff(); ok {
			diff = fmt.Sprintf("%+d", d)
		}
		lines = append(lines, "  "+fmt.Sprintf("%-28s %12s %12s %10s", partitionLabel(m.Topic, m.Partition.Partition, 28),
			formatOffset(m.Committed), strconv.FormatInt(m.NextOffset, 10), diff))
	}
	switch n := offsets.GroupPlanChanges(p.Moves); {
	case p.Refusal != "":
		lines = append(lines, th.bad.Render(fit("  "+krecord.String(p.Refusal), f.width)))
	case n == 0:
		lines = append(lines, th.ok.Render("  the group is already at these offsets"))
	case f.pending == 0:
		lines = append(lines, th.warn.Render(fmt.Sprintf("  enter writes %s to the group · esc cancels", plural(int64(n), "partition", "partitions"))))
	}
	return strings.Join(lines, "\n")
}

func (f *setGroupForm) ShortHelp() []key.Binding {
	out := []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "plan, then write"))}
	if len(f.targets) == 2 {
		out = append(out, key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "batch start/end")))
	}
	return append(out, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")))
}
func (f *setGroupForm) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// openSetGroup is O: from the batch open or selected (batches and
// records panes) the group can be put at the batch's start or end
// (offsets.BatchSpan over the kept batches, the other partitions at their
// acked offsets); from the partitions pane, the selected partition at its
// acked offset.
func (m *Model) openSetGroup() tea.Cmd {
	t := &m.c.theme
	if m.opts.GroupSetter == nil {
		m.setStatus("setting a consumer group is not available in this session", t.dim)
		return nil
	}
	batch := m.batchOnTop()
	if batch == nil && m.top() == nil && (m.focus == focusBatches || m.focus == focusRecords) {
		batch = m.batches.selected()
	}
	var source string
	targets := map[string]map[offsets.Partition]int64{}
	switch {
	case batch != nil:
		log := make([]offsets.Batch, 0, m.hist.len())
		for i := 0; i < m.hist.len(); i++ {
			log = append(log, m.hist.newest(i).Batch.Batch)
		}
		acked := map[offsets.Partition]int64{}
		for _, r := range m.parts.rows {
			if r.Stored >= 0 {
				acked[r.Partition] = r.Stored
			}
		}
		start, end, ok := offsets.BatchSpan(log, batch.ID, acked)
		if !ok {
			m.setStatus(fmt.Sprintf("batch %d is no longer kept on screen", batch.ID), t.warn)
			return nil
		}
		source = fmt.Sprintf("batch %d", batch.ID)
		targets[setGroupFrom], targets[setGroupUntil] = start, end
	case m.top() == nil && m.focus == focusPartitions:
		p, ok := m.parts.selected()
		if !ok {
			return nil
		}
		if p.Stored < 0 {
			m.setStatus(krecord.String(p.Partition.String())+" has no acked offset yet: O sets a group once a batch is acked", t.dim)
			return nil
		}
		source = fmt.Sprintf("%s at its acked offset %d", p.Partition, p.Stored)
		targets[setGroupUntil] = map[offsets.Partition]int64{p.Partition: p.Stored}
	default:
		m.setStatus("O sets a consumer group at the selected batch (batches pane) or partition (partitions pane)", t.dim)
		return nil
	}
	m.pushView(newSetGroupForm(m.c, m.opts.GroupSetter, m.ctx, &m.nextID, source, targets))
	return nil
}

// groupSet closes the form after a write and opens the groups view, which
// reads the groups again and shows the new offsets.
func (m *Model) groupSet(msg setGroupDoneMsg) tea.Cmd {
	f, ok := m.top().(*setGroupForm)
	if !ok || f.pending != msg.id {
		return nil
	}
	if msg.err != nil {
		return f.Update(msg)
	}
	m.popView()
	m.setStatus(fmt.Sprintf("consumer group %s set: %s written", krecord.String(msg.group), plural(int64(msg.n), "partition", "partitions")), m.c.theme.ok)
	return m.openGroups()
}
