package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

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
