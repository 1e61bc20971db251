package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// seekRule is the one rule of every seek, stated in the form and applied
// by the stream (consumer.SeekTarget).
const seekRule = "A seek lands between the log start and the high watermark: a target outside them " +
	"(an offset, -N or a time past either end) moves to the nearest end, and the status line and the events pane say so."

// seekRequestMsg asks the root to seek parts (the form validated the text).
type seekRequestMsg struct {
	id    int
	parts []offsets.Partition
	spec  offsets.Spec
}

// seekDoneMsg is the stream's answer to a seek; id names the request.
// moved holds the targets the stream moved to, in request order.
type seekDoneMsg struct {
	id    int
	parts []offsets.Partition
	moved []consumer.SeekTarget
	err   error
}

// boundsMsg carries the bounds a seek form listed when it opened.
type boundsMsg struct {
	id     int
	bounds map[offsets.Partition]offsets.Bounds
	at     time.Time
	err    error
}

// seekForm asks where to move one partition (s) or many (S: every
// partition of the stream, or of one topic with TOPIC=). The bounds are
// listed again when the form opens and at the seek itself, so the figures
// shown are those the rule is applied with. Invalid input is explained
// in the form and changes nothing.
type seekForm struct {
	*common
	// parts are the partitions a target without TOPIC= moves; many is
	// set for S.
	parts []offsets.Partition
	many  bool
	// live returns a partition's status now, so the figures follow the
	// stream while the form is open.
	live    func(offsets.Partition) (consumer.PartitionStatus, bool)
	input   textinput.Model
	problem string
	pending int // id of the seek in flight, 0 when none
	nextID  *int
	now     func() time.Time
	width   int
	height  int
	// listed are the bounds listed when the form opened (listedAt);
	// boundsID names that request.
	listed    map[offsets.Partition]offsets.Bounds
	listedAt  time.Time
	listErr   error
	boundsID  int
	refreshed func(map[offsets.Partition]offsets.Bounds)
	// lag is LAG as the partitions pane computes it (from the acked
	// position with manual acks), so the form and the pane agree.
	lag     func(consumer.PartitionStatus) int64
	lagFrom string
}

func newSeekForm(c *common, parts []offsets.Partition, many bool, prefill string, nextID *int, now func() time.Time) *seekForm {
	in := newLineInput("offset> ", "1234, earliest, latest, -100, @-15m, @2026-11-29T10:00:00Z")
	if many {
		in.Placeholder = "earliest, latest, -100, @-15m, 1234, or TOPIC=…, TOPIC:P=… as -o"
	}
	in.SetValue(prefill)
	in.CursorEnd()
	in.Focus()
	return &seekForm{common: c, parts: parts, many: many, input: in, nextID: nextID, now: now}
}

// listBounds is the Cmd that lists the form's partitions' bounds.
func (f *seekForm) listBounds(ctl Controls) tea.Cmd {
	sc, ok := ctl.(seekControls)
	if !ok {
		return nil
	}
	*f.nextID++
	f.boundsID = *f.nextID
	id, parts, now := f.boundsID, f.parts, f.now
	return func() tea.Msg {
		b, err := sc.Bounds(parts)
		return boundsMsg{id: id, bounds: b, at: now(), err: err}
	}
}

func (f *seekForm) SetSize(w, h int) {
	f.width, f.height = w, h
	f.input.SetWidth(max(10, w-len(f.input.Prompt)-2))
}

func (f *seekForm) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case boundsMsg:
		if msg.id == f.boundsID {
			f.listed, f.listedAt, f.listErr = msg.bounds, msg.at, msg.err
			if msg.err == nil && f.refreshed != nil {
				f.refreshed(msg.bounds)
			}
		}
		return nil
	case seekDoneMsg:
		if !answered(&f.pending, msg.id) {
			return nil // a stale answer; the root reports it in the status line
		}
		if msg.err != nil {
			f.problem = msg.err.Error()
			if len(msg.moved) > 0 {
				f.problem = fmt.Sprintf("%d of %d partitions moved, then: %s", len(msg.moved), len(msg.parts), f.problem)
			}
			return nil
		}
		return func() tea.Msg { return closeViewMsg{} }
	case tea.KeyPressMsg:
		if msg.String() == "enter" {
			return f.submit()
		}
		return typeInto(&f.input, msg)
	}
	return nil
}

// paste types pasted text into the form's field.
func (f *seekForm) paste(p tea.PasteMsg) tea.Cmd {
	return typeInto(&f.input, p)
}

func (f *seekForm) submit() tea.Cmd {
	if f.pending != 0 {
		return nil
	}
	text := strings.TrimSpace(f.input.Value())
	if text == "" {
		f.problem = "type where to go: an offset, earliest, latest, -N or @TIME"
		return nil
	}
	parts, spec, problem := f.parse(text)
	if problem != "" {
		f.problem = problem
		return nil
	}
	*f.nextID++
	f.pending = *f.nextID
	f.problem = ""
	req := seekRequestMsg{id: f.pending, parts: parts, spec: spec}
	return func() tea.Msg { return req }
}

// parse reads the form's text: a target for the form's partitions, or
// for S also -o's TOPIC=TARGET and TOPIC:PARTITION=TARGET, which pick
// among them.
func (f *seekForm) parse(text string) ([]offsets.Partition, offsets.Spec, string) {
	if !f.many || !strings.Contains(text, "=") {
		spec, err := offsets.ParseTarget(text, f.now())
		if err != nil {
			return nil, spec, err.Error()
		}
		return f.parts, spec, ""
	}
	spec, err := offsets.ParseSpec(text, f.now())
	if err != nil {
		return nil, spec, err.Error()
	}
	var parts []offsets.Partition
	for _, p := range f.parts {
		if p.Topic == spec.Topic && (spec.AllPartitions || p.Partition == spec.Partition) {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		if spec.AllPartitions {
			return nil, spec, fmt.Sprintf("%s is not a topic of this stream (%s)", spec.Topic, strings.Join(topicsOf(f.parts), ", "))
		}
		return nil, spec, fmt.Sprintf("%s is not a partition of this stream", offsets.Partition{Topic: spec.Topic, Partition: spec.Partition}.String())
	}
	return parts, spec, ""
}

func topicsOf(parts []offsets.Partition) []string {
	var out []string
	for _, p := range parts {
		if !slices.Contains(out, p.Topic) {
			out = append(out, p.Topic)
		}
	}
	return out
}

func (f *seekForm) capturing() bool { return true }

func (f *seekForm) title() string {
	if f.many {
		return "Seek " + plural(int64(len(f.parts)), "partition", "partitions")
	}
	return "Seek " + krecord.String(f.parts[0].String())
}

// status returns p's figures: the live status with the bounds listed
// when the form opened, when they are fresher.
func (f *seekForm) status(p offsets.Partition) consumer.PartitionStatus {
	st := consumer.PartitionStatus{Partition: p, Stored: -1}
	if f.live != nil {
		if now, ok := f.live(p); ok {
			st = now
		}
	}
	if b, ok := f.listed[p]; ok {
		st.LogStart = b.LogStart
		st.HighWatermark = max(st.HighWatermark, b.HighWatermark)
		st.Lag = consumer.StatusLag(st)
	}
	return st
}

// listedNote says where the bounds come from.
func (f *seekForm) listedNote() string {
	switch {
	case f.listErr != nil:
		return "listing the bounds failed (" + krecord.String(f.listErr.Error()) + "); shown as last known, listed again at the seek"
	case f.listedAt.IsZero():
		return "listing the bounds…; listed again at the seek"
	}
	return "bounds listed " + f.listedAt.In(f.loc).Format("15:04:05") + ", and again at the seek"
}

func (f *seekForm) figures() string {
	if !f.many {
		p := f.status(f.parts[0])
		lag := p.Lag
		if f.lag != nil {
			lag = f.lag(p)
		}
		return fmt.Sprintf("next %d · log start %d · high watermark %d · lag %d%s · stored %s\n%s",
			p.NextOffset, p.LogStart, p.HighWatermark, lag, f.lagFrom, formatOffset(p.Stored), f.listedNote())
	}
	var lines []string
	for _, t := range topicsOf(f.parts) {
		var n int
		var ls, hwm [2]int64
		for _, p := range f.parts {
			if p.Topic != t {
				continue
			}
			st := f.status(p)
			if n == 0 {
				ls, hwm = [2]int64{st.LogStart, st.LogStart}, [2]int64{st.HighWatermark, st.HighWatermark}
			}
			ls = [2]int64{min(ls[0], st.LogStart), max(ls[1], st.LogStart)}
			hwm = [2]int64{min(hwm[0], st.HighWatermark), max(hwm[1], st.HighWatermark)}
			n++
		}
		lines = append(lines, fmt.Sprintf("%s: %s · log start %s · high watermark %s", krecord.String(t),
			plural(int64(n), "partition", "partitions"), span(ls), span(hwm)))
	}
	return strings.Join(append(lines, f.listedNote()), "\n")
}

// span renders a min…max pair, one number when they agree.
func span(v [2]int64) string {
	if v[0] == v[1] {
		return fmt.Sprint(v[0])
	}
	return fmt.Sprintf("%d to %d", v[0], v[1])
}

func (f *seekForm) View() string {
	var about string
	if f.many {
		about = fmt.Sprintf("Move %s to a new next offset each: a target moves every partition; TOPIC=TARGET one topic's, "+
			"TOPIC:P=TARGET one (as -o). Records read but not yet in a batch are dropped; each next range starts there and is marked as a jump. ",
			plural(int64(len(f.parts)), "partition", "partitions")) + seekRule
	} else {
		about = fmt.Sprintf("Move %s to a new next offset. Records read but not yet in a batch are dropped; "+
			"the next range starts there and is marked as a jump. ", krecord.String(f.parts[0].String())) + seekRule
	}
	about = wrap(about, f.width)
	figures := wrap(f.figures(), f.width)
	var status string
	switch {
	case f.pending != 0:
		status = f.theme.info.Render("seeking…")
	case f.problem != "":
		status = f.theme.bad.Render(wrap(krecord.String(f.problem), f.width))
	default:
		status = f.theme.dim.Render(wrap("an offset, earliest, latest, -N (N before the high watermark), @TIME (RFC 3339 or @-15m); "+
			"outside log start to high watermark it moves to the nearest end", f.width))
	}
	lines := []string{about, "", figures, "", f.input.View(), "", status}
	// On a short screen the explanation goes first, then the blank
	// lines: the figures, the input and what is wrong with it stay.
	count := func() int { return strings.Count(strings.Join(lines, "\n"), "\n") + 1 }
	if f.height > 0 && count() > f.height {
		lines = []string{figures, "", f.input.View(), "", status}
	}
	if f.height > 0 && count() > f.height {
		lines = []string{figures, f.input.View(), status}
	}
	return strings.Join(lines, "\n")
}

func (f *seekForm) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "seek")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

func (f *seekForm) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

func (f *seekForm) dialog() bool { return true }

// seekControls is what s and S need of the stream beyond Controls:
// bounds listed now, and seeks resolved by the one rule
// (consumer.SeekTarget). *consumer.Stream implements it; a source
// without it seeks through Controls.Seek.
type seekControls interface {
	Bounds(parts []offsets.Partition) (map[offsets.Partition]offsets.Bounds, error)
	ResolveSeek(parts []offsets.Partition, spec offsets.Spec) ([]consumer.SeekTarget, error)
	SeekTargets(ts []consumer.SeekTarget) (int, error)
}

// openSeek opens the seek form for the selected partition (partitions
// pane), the selected record's partition at its offset (records pane), or
// the selected batch's first range at its start (batches pane).
func (m *Model) openSeek() tea.Cmd {
	var part offsets.Partition
	prefill := ""
	switch m.focus {
	case focusPartitions:
		p, ok := m.parts.selected()
		if !ok {
			return nil
		}
		part = p.Partition
	case focusRecords:
		r := m.records.list.selected()
		if r == nil {
			return nil
		}
		part, prefill = r.Partition, fmt.Sprint(r.Offset)
	case focusBatches:
		e := m.batches.selected()
		if e == nil || len(e.Ranges) == 0 {
			return nil
		}
		part, prefill = e.Ranges[0].Partition, fmt.Sprint(e.Ranges[0].From)
	default:
		m.setStatus("s seeks the partition selected in the partitions pane; S seeks them all", m.c.theme.dim)
		return nil
	}
	return m.pushSeek(newSeekForm(m.c, []offsets.Partition{part}, false, prefill, &m.nextID, m.now))
}

// openSeekAll is S: one form for every partition of the stream (TOPIC=
// narrows it to a topic, as -o does).
func (m *Model) openSeekAll() tea.Cmd {
	if len(m.parts.rows) == 0 {
		m.setStatus("S seeks every partition once the stream has started", m.c.theme.dim)
		return nil
	}
	parts := make([]offsets.Partition, len(m.parts.rows))
	for i, r := range m.parts.rows {
		parts[i] = r.Partition
	}
	prefill := ""
	if topics := topicsOf(parts); len(topics) > 1 && m.focus == focusPartitions {
		if p, ok := m.parts.selected(); ok {
			prefill = p.Topic + "="
		}
	}
	return m.pushSeek(newSeekForm(m.c, parts, true, prefill, &m.nextID, m.now))
}

func (m *Model) pushSeek(f *seekForm) tea.Cmd {
	f.live = m.parts.status
	f.refreshed = m.parts.setBounds
	f.lag = m.parts.lag
	if m.parts.manual {
		f.lagFrom = " from acked"
	}
	m.pushView(f)
	return f.listBounds(m.controls)
}

// seek resolves and runs a seek off the update loop.
func (m *Model) seek(req seekRequestMsg) tea.Cmd {
	ctl := m.controls
	if ctl == nil {
		return func() tea.Msg { return seekDoneMsg{id: req.id, parts: req.parts, err: errReadOnly} }
	}
	return func() tea.Msg {
		done := seekDoneMsg{id: req.id, parts: req.parts}
		if sc, ok := ctl.(seekControls); ok {
			ts, err := sc.ResolveSeek(req.parts, req.spec)
			if err != nil {
				done.err = err
				return done
			}
			n, err := sc.SeekTargets(ts)
			done.moved, done.err = ts[:n], err
			return done
		}
		for _, p := range req.parts {
			spec := req.spec
			spec.Topic, spec.Partition, spec.AllPartitions = p.Topic, p.Partition, false
			off, err := ctl.Seek(p, spec)
			if err != nil {
				done.err = err
				return done
			}
			done.moved = append(done.moved, consumer.SeekTarget{Partition: p, Offset: off, Bounds: offsets.Bounds{LogStart: -1, HighWatermark: -1}})
		}
		return done
	}
}

func (m *Model) seekDone(msg seekDoneMsg) tea.Cmd {
	for _, t := range msg.moved {
		m.parts.moved(t)
	}
	t := &m.c.theme
	switch {
	case msg.err == nil && len(msg.moved) == 1:
		s := msg.moved[0]
		text := fmt.Sprintf("seek: %s moves to %d; its next range is marked as a jump", krecord.String(s.Partition.String()), s.Offset)
		style := t.ok
		if s.Note != "" {
			text, style = fmt.Sprintf("seek: %s moves to %d: %s", krecord.String(s.Partition.String()), s.Offset, krecord.String(s.Note)), t.warn
		}
		m.setStatus(text, style)
	case msg.err == nil:
		var noted []string
		for _, s := range msg.moved {
			if s.Note != "" {
				noted = append(noted, krecord.String(s.Partition.String()))
			}
		}
		text := fmt.Sprintf("seek: %s moved; each next range is marked as a jump", plural(int64(len(msg.moved)), "partition", "partitions"))
		style := t.ok
		if len(noted) > 0 {
			text += fmt.Sprintf("; %d moved to the nearest end of their offsets (%s; the events pane says why)", len(noted), strings.Join(firstN(noted, 3), ", "))
			style = t.warn
		}
		m.setStatus(text, style)
		m.seekSummaryUntil = m.now().Add(3 * time.Second)
	default:
		if f, ok := m.top().(*seekForm); !ok || f.pending != msg.id {
			m.setStatus("seek failed: "+krecord.String(msg.err.Error()), t.bad)
		}
	}
	if f, ok := m.top().(*seekForm); ok {
		return f.Update(msg)
	}
	return nil
}

// firstN returns the first n of ss, with "…" for the rest.
func firstN(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(ss[:n:n], fmt.Sprintf("… %d more", len(ss)-n))
}
