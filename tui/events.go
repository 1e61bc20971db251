package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// eventsPane lists the stream's notices newest first: data loss,
// out-of-range, seeks, resets, new partitions, broker errors.
type eventsPane struct {
	*common
	events  []offsets.Event // oldest first, at most maxEvents
	cur     cursor
	width   int
	height  int
	focused bool
}

func newEventsPane(c *common) *eventsPane { return &eventsPane{common: c} }

func (p *eventsPane) add(e offsets.Event) {
	p.events = append(p.events, e)
	if len(p.events) > maxEvents {
		p.events = append(p.events[:0:0], p.events[len(p.events)-maxEvents:]...)
	}
	follow := p.cur.sel == 0
	p.cur.setLen(len(p.events))
	if !follow {
		p.cur.move(1)
	}
}

func (p *eventsPane) newest(i int) offsets.Event { return p.events[len(p.events)-1-i] }

func (p *eventsPane) selected() (offsets.Event, bool) {
	if p.cur.sel < len(p.events) {
		return p.newest(p.cur.sel), true
	}
	return offsets.Event{}, false
}

func (p *eventsPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.cur.setHeight(h)
}

func (p *eventsPane) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		p.navKeys(k.String(), &p.cur)
	}
	return nil
}

func (p *eventsPane) title() string { return "Events " + strconv.Itoa(len(p.events)) }

func (p *eventsPane) View() string {
	if len(p.events) == 0 {
		return p.theme.dim.Render("  no events: seeks, resets, data loss and broker errors show here")
	}
	from, until := p.cur.visible()
	lines := make([]string, 0, until-from)
	for i := from; i < until; i++ {
		e := p.newest(i)
		sel := i == p.cur.sel
		line := fit(e.Time.In(p.loc).Format("15:04:05"), 8) + " " + fit(e.Code, 13) + " " + krecord.String(e.Message)
		if !sel {
			line = p.theme.dim.Render(fit(e.Time.In(p.loc).Format("15:04:05"), 8)) + " " +
				eventStyle(&p.theme, e.Code).Render(fit(e.Code, 13)) + " " + krecord.String(e.Message)
		}
		lines = append(lines, markRow(&p.theme, fit(line, p.width-2), sel, p.focused))
	}
	return strings.Join(lines, "\n")
}

// eventStyle colours a notice by how bad it is.
func eventStyle(t *theme, code string) lipgloss.Style {
	switch code {
	case offsets.CodeDataLoss, offsets.CodeOutOfRange, offsets.CodeBrokerError, offsets.CodeCorrupt:
		return t.bad
	case offsets.CodeSeek, offsets.CodeReset, offsets.CodeRedelivered, offsets.CodeNewPartition, offsets.CodeRecreated, codeSchema,
		offsets.CodeGroupCommitFailed, offsets.CodeGroupCommitStopped:
		return t.warn
	}
	return t.info
}

// eventDetail renders every field of a notice for the detail view.
func eventDetail(e offsets.Event, loc interface{ String() string }, width int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s\n\n", wrap(krecord.String(e.Message), width)) // at words, not inside them
	fmt.Fprintf(&sb, "code        %s\n", krecord.String(e.Code))
	fmt.Fprintf(&sb, "time        %s\n", e.Time.Format("2006-01-02 15:04:05.000 MST"))
	switch {
	case e.Topic != "" && e.Partition < 0: // about a whole topic
		fmt.Fprintf(&sb, "topic       %s\n", krecord.String(e.Topic))
	case e.Topic != "":
		fmt.Fprintf(&sb, "partition   %s\n", krecord.String(offsets.Partition{Topic: e.Topic, Partition: e.Partition}.String()))
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"expected", e.Expected}, {"from", e.From}, {"to", e.To}, {"log start", e.LogStart}, {"high wm", e.HighWatermark}} {
		if f.v >= 0 {
			fmt.Fprintf(&sb, "%-11s %d\n", f.name, f.v)
		}
	}
	if e.Lost > 0 {
		fmt.Fprintf(&sb, "%-11s %s\n", "lost", plural(e.Lost, "offset", "offsets"))
	}
	return strings.TrimRight(sb.String(), "\n")
}

func (p *eventsPane) ShortHelp() []key.Binding { return []key.Binding{p.keys.Enter} }
func (p *eventsPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{p.navHelp(), p.ShortHelp()}
}

func (p *eventsPane) setFocus(f bool) { p.focused = f }
