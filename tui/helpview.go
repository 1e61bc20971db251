package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// helpView is ? : every key, grouped, and what the marks mean.
type helpView struct{ *textView }

func newHelpView(m *Model) *helpView {
	k := m.c.keys
	groups := [][]key.Binding{
		{k.Next, k.Prev, k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown},
		{k.Enter, k.Back, k.Filter, k.Copy, k.Write, k.Help, k.Quit},
		{k.PauseAll, k.PausePart, k.Seek, k.Replay, k.Ack, k.Step},
	}
	build := func(width int) string {
		h := m.help
		h.SetWidth(width)
		legend := []string{
			"",
			"Batches: ranges are [from, until); * marks a batch whose range jumped (seek, reset, data loss);",
			"planned = written ahead, waiting; acked = stored positions moved to its untils.",
			"Partitions: SOURCE says why a partition started where it did; TREND is rec/s over the last 8 s.",
			"Records are escaped: \\x1b, \\u202e … stand for bytes that would drive the terminal.",
			"Focus: the thick frame. 1-4 jump to a pane on small screens.",
		}
		if !m.opts.ManualAck {
			legend = append(legend, "a and n need --ack manual.")
		}
		if m.opts.Replayer == nil {
			legend = append(legend, "Replay is not available in this session.")
		}
		return h.FullHelpView(groups) + "\n" + strings.Join(legend, "\n")
	}
	tv := newTextView(m.c, fmt.Sprintf("Help · kbatch keys"), build)
	return &helpView{tv}
}

func (h *helpView) capturing() bool            { return false }
func (h *helpView) Update(msg tea.Msg) tea.Cmd { return h.textView.Update(msg) }
