package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// seekRequestMsg asks the root to seek (the form validated the text).
type seekRequestMsg struct {
	id   int
	part offsets.Partition
	spec offsets.Spec
}

// seekDoneMsg is the stream's answer to a seek; id names the request.
type seekDoneMsg struct {
	id     int
	part   offsets.Partition
	offset int64
	err    error
}

// seekForm asks where to move one partition. Invalid input is explained
// in the form and changes nothing; the stream's refusal (outside log start
// to high watermark) is shown the same way.
type seekForm struct {
	*common
	part consumer.PartitionStatus
	// live returns the partition's status now, so the figures the user
	// picks an offset from follow the stream while the form is open.
	live    func(offsets.Partition) (consumer.PartitionStatus, bool)
	input   textinput.Model
	problem string
	pending int // id of the seek in flight, 0 when none
	nextID  *int
	now     func() time.Time
	width   int
	height  int
}

func newSeekForm(c *common, part consumer.PartitionStatus, prefill string, nextID *int, now func() time.Time) *seekForm {
	in := textinput.New()
	in.Prompt = "offset> "
	in.Placeholder = "1234, earliest, latest, -100, @-15m, @2026-11-29T10:00:00Z"
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	in.SetValue(prefill)
	in.CursorEnd()
	in.Focus()
	return &seekForm{common: c, part: part, input: in, nextID: nextID, now: now}
}

func (f *seekForm) SetSize(w, h int) {
	f.width, f.height = w, h
	f.input.SetWidth(max(10, w-len(f.input.Prompt)-2))
}

func (f *seekForm) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case seekDoneMsg:
		if msg.id != f.pending {
			return nil // a stale answer; the root reports it in the status line
		}
		f.pending = 0
		if msg.err != nil {
			f.problem = msg.err.Error()
			return nil
		}
		return func() tea.Msg { return closeViewMsg{} }
	case tea.KeyPressMsg:
		if msg.String() == "enter" {
			return f.submit()
		}
		var cmd tea.Cmd
		f.input, cmd = f.input.Update(msg)
		return cmd
	}
	return nil
}

func (f *seekForm) submit() tea.Cmd {
	if f.pending != 0 {
		return nil
	}
	if strings.TrimSpace(f.input.Value()) == "" {
		f.problem = "type where to go: an offset, earliest, latest, -N or @TIME"
		return nil
	}
	spec, err := offsets.ParseTarget(f.input.Value(), f.now())
	if err != nil {
		f.problem = err.Error()
		return nil
	}
	spec.Topic, spec.Partition = f.part.Topic, f.part.Partition.Partition
	*f.nextID++
	f.pending = *f.nextID
	f.problem = ""
	req := seekRequestMsg{id: f.pending, part: f.part.Partition, spec: spec}
	return func() tea.Msg { return req }
}

func (f *seekForm) capturing() bool { return true }

func (f *seekForm) title() string { return "Seek " + EscapeString(f.part.Partition.String()) }

func (f *seekForm) View() string {
	p := f.part
	if f.live != nil {
		if now, ok := f.live(p.Partition); ok {
			p = now
		}
	}
	about := wrap(fmt.Sprintf("Move %s to a new next offset. Records read but not yet in a batch are dropped; "+
		"the next range starts there and is marked as a jump.", EscapeString(p.Partition.String())), f.width)
	figures := wrap(fmt.Sprintf("next %d · log start %d · high watermark %d · lag %d · stored %s",
		p.NextOffset, p.LogStart, p.HighWatermark, p.Lag, formatOffset(p.Stored)), f.width)
	var status string
	switch {
	case f.pending != 0:
		status = f.theme.info.Render("seeking…")
	case f.problem != "":
		status = f.theme.bad.Render(wrap(EscapeString(f.problem), f.width))
	default:
		status = f.theme.dim.Render(wrap("an offset, earliest, latest, -N (N before the high watermark), @TIME (RFC 3339 or @-15m)", f.width))
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
