package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// header is two lines: the stream, its state, rates, interval and acked
// totals; then where it reads from and where it stores positions.
// header is the two header lines, and the figures the first had no room
// for (the tab bar shows them).
func (m *Model) header() (string, []segment) {
	s, t := &m.stream, &m.c.theme
	lead := m.headerLead()
	figures, dropped := joinFitting(m.width-ansi.StringWidth(lead), t.dim.Render(" · "), m.headerFigures()...)
	line1 := lead + figures

	store := s.store
	if store == "" {
		store = "none (read-only)"
	}
	brokers := t.dim.Render("brokers ") + brokerList(s.brokers, max(20, m.width/3))
	if m.opts.Cluster != "" {
		brokers = t.dim.Render("cluster ") + t.info.Render(krecord.String(m.opts.Cluster)) + " " + brokers
	}
	line2, _ := joinFitting(m.width, "  ",
		segment{text: brokers},
		segment{text: t.dim.Render("topics ") + krecord.String(strings.Join(s.topics, ",")), drop: 1})
	// The store path keeps its end when cut: "…/kbatch/offsets.db".
	if room := m.width - ansi.StringWidth(line2) - len("  store "); room >= 16 {
		line2 += t.dim.Render("  store ") + cutLeft(krecord.String(store), room)
	}
	return fit(line1, m.width) + "\n" + fit(line2, m.width), dropped
}

// headerLead is the start of the header's first line: the name and the
// state badges.
func (m *Model) headerLead() string {
	s, t := &m.stream, &m.c.theme
	var badges []string
	switch {
	case s.ended != nil || s.closed:
		badges = append(badges, t.badgeEnded.Render("ENDED"))
	case s.paused:
		badges = append(badges, t.badgePaused.Render("PAUSED"))
	default:
		badges = append(badges, m.liveBadge()) // hold.go
	}
	if s.manual {
		label := "MANUAL-ACK"
		if s.waiting {
			label += fmt.Sprintf(" batch %d waits", s.waitingID)
		}
		badges = append(badges, t.badgeManual.Render(label))
	}
	if m.replay != nil {
		badges = append(badges, t.badgeReplay.Render("REPLAY"))
	}
	if w := &s.loss; w.active() {
		label := "DATA LOSS x dismisses"
		if m.width >= 120 {
			label = "DATA LOSS on " + plural(int64(len(w.partitions)), "partition", "partitions") + " · x dismisses"
			if w.offsets > 0 {
				label = "DATA LOSS " + plural(w.offsets, "offset", "offsets") + label[len("DATA LOSS"):]
			}
		}
		badges = append(badges, t.badgeWarn.Render(label))
	}
	if m.opts.InsecureTLS {
		badges = append(badges, t.badgeWarn.Render("TLS NOT VERIFIED"))
	}
	return t.bold.Render("kbatch") + " " + t.info.Render(krecord.String(s.name)) + "  " + strings.Join(badges, " ") + "  "
}

// headerFigures are the stream's figures on the header's first line; what
// does not fit there goes to the tab bar.
func (m *Model) headerFigures() []segment {
	s := &m.stream
	rate, bytes := formatCount(s.rate), formatRate(s.byteRate)
	if s.lastProgressTime.IsZero() {
		rate, bytes = "–", "– B/s" // measured over the first second
	}
	return []segment{
		{text: rate + " rec/s", drop: 1},
		{text: bytes, drop: 3},
		{text: "interval " + s.interval.String(), drop: 4, short: "every " + s.interval.String()},
		{text: "acked " + plural(int64(s.batches), "batch", "batches") + ", " + plural(s.records, "record", "records"), drop: 2,
			short: fmt.Sprintf("acked %d b, %s rec", s.batches, formatCount(float64(s.records)))},
	}
}

// cutLeft shortens s to w columns by dropping its start, so a path keeps
// its file name.
func cutLeft(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw <= w || w <= 1 {
		return s
	}
	return "…" + ansi.TruncateLeft(s, sw-w+1, "")
}

// segment is a piece of a header line; the higher its drop number, the
// sooner it goes when the line is too long (0: never).
type segment struct {
	text string
	drop int
	// short is a shorter text, for the tab bar of a narrow screen; ""
	// when text is already short.
	short string
}

// joinFitting joins segs with sep, in their order, leaving out the
// segments with the highest drop numbers until the line fits in w
// columns; a segment left out for a longer one goes back in where there
// is room for it after all. It returns the ones left out too, in their
// order. What is left may still be too long; the caller fits it.
func joinFitting(w int, sep string, segs ...segment) (string, []segment) {
	in := make([]bool, len(segs))
	join := func() string {
		var parts []string
		for i, sg := range segs {
			if in[i] {
				parts = append(parts, sg.text)
			}
		}
		return strings.Join(parts, sep)
	}
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return segs[a].drop - segs[b].drop })
	for _, i := range order {
		in[i] = true
		if segs[i].drop > 0 && ansi.StringWidth(join()) > w {
			in[i] = false
		}
	}
	var out []segment
	for i, sg := range segs {
		if !in[i] {
			out = append(out, sg)
		}
	}
	return join(), out
}

// brokerList joins the brokers, or shows the first and how many more when
// they take more than w columns.
func brokerList(brokers []string, w int) string {
	all := krecord.String(strings.Join(brokers, ","))
	if len(brokers) < 2 || ansi.StringWidth(all) <= w {
		return all
	}
	return krecord.String(brokers[0]) + fmt.Sprintf(" +%d", len(brokers)-1)
}

func (m *Model) statusView() string {
	if m.status.text == "" {
		if m.hist.len() == 0 && len(m.parts.rows) > 0 {
			// Until the first batch, why there is none (the batches
			// pane says it in full).
			return fit(m.c.theme.dim.Render(m.idleReason()[0]), m.width)
		}
		return fit(m.c.theme.dim.Render("ready · ? shows every key"), m.width)
	}
	ts := m.status.at.In(m.c.loc).Format("15:04:05")
	return fit(m.c.theme.dim.Render(ts+" ")+m.status.style.Render(m.status.text), m.width)
}

// footer is the short help of the focused pane or the view on top. When
// it does not fit, keys are dropped from the end of the list; ? and q
// always show (outside text inputs), and so do a and n in manual-ack mode
// and x while a data-loss warning shows.
func (m *Model) footer() string {
	k := m.c.keys
	var b []key.Binding
	tail := []key.Binding{k.Help, k.Quit}
	switch v := m.top(); {
	case v != nil:
		b = v.ShortHelp()
		if v.capturing() {
			tail = nil
		}
	case m.records.list.capturing():
		b, tail = m.records.ShortHelp(), nil
	default:
		if m.stream.manual {
			b = append(b, k.Ack, k.Step)
		}
		if m.stream.loss.active() {
			b = append(b, k.Dismiss)
		}
		pane := m.panes[m.focus].ShortHelp()
		if m.stream.paused {
			// P cannot resume one partition while all are paused.
			pane = slices.DeleteFunc(pane, func(x key.Binding) bool { return slices.Equal(x.Keys(), k.PausePart.Keys()) })
		}
		b = append(append(b, pane...), m.globalHelp()...)
	}
	h := m.help
	h.SetWidth(0)
	for len(b) > 0 && ansi.StringWidth(h.ShortHelpView(slices.Concat(b, tail))) > m.width {
		b = b[:len(b)-1]
	}
	return fit(h.ShortHelpView(slices.Concat(b, tail)), m.width)
}
