package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// planRequestMsg asks the root to plan ranges typed in the replay form.
type planRequestMsg struct {
	id     int
	ranges []string
}

// planDoneMsg is the Replayer's answer to a plan request.
type planDoneMsg struct {
	id     int
	ranges []string
	tasks  []ReplayTask
	err    error
}

// replayForm asks for RANGE arguments, prefilled from the selection.
type replayForm struct {
	*common
	input   textinput.Model
	problem string
	pending int
	nextID  *int
	missing bool // no Replayer was wired
	width   int
	// search, when set, makes the form a broker search (f in the search
	// view): the ranges are read keeping only the records that match it.
	search string
}

func newReplayForm(c *common, prefill string, nextID *int, available bool) *replayForm {
	in := newLineInput("ranges> ", "events:0:100-200 events:*:@-5m-latest")
	in.SetValue(prefill)
	in.CursorEnd()
	in.Focus()
	return &replayForm{common: c, input: in, nextID: nextID, missing: !available}
}

func (f *replayForm) SetSize(w, h int) {
	f.width = w
	f.input.SetWidth(max(10, w-len(f.input.Prompt)-2))
}
func (f *replayForm) capturing() bool { return true }
func (f *replayForm) title() string {
	if f.search != "" {
		return "Search on the broker"
	}
	return "Replay"
}

func (f *replayForm) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case planDoneMsg:
		if !answered(&f.pending, msg.id) {
			return nil
		}
		if msg.err != nil {
			f.problem = msg.err.Error()
		}
		return nil
	case tea.KeyPressMsg:
		if msg.String() == "enter" {
			return f.submit()
		}
		return typeInto(&f.input, msg)
	}
	return nil
}

// paste types pasted text into the form's field.
func (f *replayForm) paste(p tea.PasteMsg) tea.Cmd {
	return typeInto(&f.input, p)
}

func (f *replayForm) submit() tea.Cmd {
	if f.pending != 0 {
		return nil
	}
	if f.missing {
		f.problem = "replay is not available in this session"
		return nil
	}
	ranges := strings.Fields(f.input.Value())
	if len(ranges) == 0 {
		f.problem = "type at least one RANGE, e.g. events:0:100-200"
		return nil
	}
	*f.nextID++
	f.pending = *f.nextID
	f.problem = ""
	req := planRequestMsg{id: f.pending, ranges: ranges}
	return func() tea.Msg { return req }
}

func (f *replayForm) View() string {
	intro := "Read exact ranges [from, until) again. The stream and its stored positions do not move."
	if f.search != "" {
		intro = "Read these ranges from the broker and keep the records whose key or value holds \"" + f.search + "\"" +
			" (prefilled: what the batches on screen cover; @-1h-latest is the last hour). The stream does not move."
	}
	lines := []string{
		wrap(krecord.String(intro), f.width),
		"",
		f.input.View(),
		"",
	}
	switch {
	case f.pending != 0:
		lines = append(lines, f.theme.info.Render("planning…"))
	case f.problem != "":
		lines = append(lines, f.theme.bad.Render(wrap(krecord.String(f.problem), f.width)))
	default:
		lines = append(lines, f.theme.dim.Render(wrap("RANGE is TOPIC:PARTITIONS:FROM-UNTIL, space separated; PARTITIONS is N, N,M or *; "+
			"FROM is an offset, earliest or @TIME; UNTIL an offset (exclusive), latest or @TIME.", f.width)))
	}
	return strings.Join(lines, "\n")
}

func (f *replayForm) ShortHelp() []key.Binding {
	run := "replay"
	if f.search != "" {
		run = "search"
	}
	return []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", run)),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}
func (f *replayForm) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

func (f *replayForm) dialog() bool { return true }
