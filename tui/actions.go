package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// controlKind names a stream command run from a key.
type controlKind int

const (
	ctlPauseAll controlKind = iota
	ctlResumeAll
	ctlPause
	ctlResume
	ctlAck
	ctlCut
)

// controlDoneMsg is the stream's answer to a command.
type controlDoneMsg struct {
	kind controlKind
	part offsets.Partition
	id   uint64
	err  error
}

// errReadOnly answers the keys of a view without controls (Run's ctl
// nil): kbatch spark shows a Spark query's batches, which kbatch can
// neither pause, seek nor ack.
var errReadOnly = errors.New("read-only: kbatch spark watches a Spark query; pause, seek and ack are not available (r replays a batch)")

// control runs a stream command off the update loop: the stream may be
// waiting for the UI to take an event before it reads commands.
func (m *Model) control(kind controlKind, part offsets.Partition, id uint64) tea.Cmd {
	ctl := m.controls
	if ctl == nil {
		return func() tea.Msg { return controlDoneMsg{kind: kind, part: part, id: id, err: errReadOnly} }
	}
	return func() tea.Msg {
		var err error
		switch kind {
		case ctlPauseAll:
			err = ctl.PauseAll()
		case ctlResumeAll:
			err = ctl.ResumeAll()
		case ctlPause:
			err = ctl.Pause(part)
		case ctlResume:
			err = ctl.Resume(part)
		case ctlAck:
			err = ctl.Ack(id)
		case ctlCut:
			err = ctl.CutNow()
		}
		return controlDoneMsg{kind: kind, part: part, id: id, err: err}
	}
}

func (m *Model) controlDone(msg controlDoneMsg) {
	t := &m.c.theme
	if msg.err != nil {
		if errors.Is(msg.err, consumer.ErrEnded) {
			m.setStatus("the stream has ended; q quits", t.warn)
			return
		}
		m.setStatus("failed: "+EscapeString(msg.err.Error()), t.bad)
		return
	}
	p := EscapeString(msg.part.String())
	switch msg.kind {
	case ctlPauseAll:
		m.stream.paused = true
		m.parts.setPaused(offsets.Partition{}, true, true)
		m.setStatus("paused: no new batches until space", t.warn)
	case ctlResumeAll:
		m.stream.paused = false
		m.parts.setPaused(offsets.Partition{}, true, false)
		m.setStatus("resumed", t.ok)
	case ctlPause:
		m.parts.setPaused(msg.part, false, true)
		m.setStatus("paused "+p+"; records already read still go into the next batch", t.warn)
	case ctlResume:
		m.parts.setPaused(msg.part, false, false)
		m.setStatus("resumed "+p, t.ok)
	case ctlAck:
		if m.stream.waitingID == msg.id {
			m.stream.waiting, m.stream.waitingID = false, 0
		}
		m.setStatus(fmt.Sprintf("acked batch %d", msg.id), t.ok)
	case ctlCut:
		m.setStatus("cutting the next batch now", t.info)
	}
}

func (m *Model) togglePauseAll() tea.Cmd {
	if m.stream.paused {
		return m.control(ctlResumeAll, offsets.Partition{}, 0)
	}
	return m.control(ctlPauseAll, offsets.Partition{}, 0)
}

func (m *Model) togglePausePartition() tea.Cmd {
	if m.focus != focusPartitions {
		m.setStatus("P pauses the partition selected in the partitions pane (tab to it)", m.c.theme.dim)
		return nil
	}
	p, ok := m.parts.selected()
	if !ok {
		return nil
	}
	if p.Paused && !m.stream.paused {
		return m.control(ctlResume, p.Partition, 0)
	}
	if p.Paused {
		m.setStatus("every partition is paused: space resumes them", m.c.theme.dim)
		return nil
	}
	return m.control(ctlPause, p.Partition, 0)
}

func (m *Model) ack() tea.Cmd {
	if !m.stream.waiting {
		m.setStatus("no batch is waiting for an ack", m.c.theme.dim)
		return nil
	}
	return m.control(ctlAck, offsets.Partition{}, m.stream.waitingID)
}

func (m *Model) step() tea.Cmd {
	if m.stream.waiting {
		m.setStatus(fmt.Sprintf("batch %d waits for its ack: a acks it, then n cuts the next one", m.stream.waitingID), m.c.theme.warn)
		return nil
	}
	return m.control(ctlCut, offsets.Partition{}, 0)
}

// openSeek opens the seek form for the selected partition (partitions
// pane), the selected record's partition at its offset (records pane), or
// the selected batch's first range at its start (batches pane).
func (m *Model) openSeek() {
	var part offsets.Partition
	prefill := ""
	switch m.focus {
	case focusPartitions:
		p, ok := m.parts.selected()
		if !ok {
			return
		}
		part = p.Partition
	case focusRecords:
		r := m.records.list.selected()
		if r == nil {
			return
		}
		part, prefill = r.Partition, fmt.Sprint(r.Offset)
	case focusBatches:
		e := m.batches.selected()
		if e == nil || len(e.Ranges) == 0 {
			return
		}
		part, prefill = e.Ranges[0].Partition, fmt.Sprint(e.Ranges[0].From)
	default:
		m.setStatus("s seeks the partition selected in the partitions pane", m.c.theme.dim)
		return
	}
	st, ok := m.parts.status(part)
	if !ok {
		st = consumer.PartitionStatus{Partition: part, Stored: -1}
	}
	form := newSeekForm(m.c, st, prefill, &m.nextID, m.now)
	form.live = m.parts.status
	m.pushView(form)
}

func (m *Model) seek(req seekRequestMsg) tea.Cmd {
	ctl := m.controls
	if ctl == nil {
		return func() tea.Msg { return seekDoneMsg{id: req.id, part: req.part, err: errReadOnly} }
	}
	return func() tea.Msg {
		off, err := ctl.Seek(req.part, req.spec)
		return seekDoneMsg{id: req.id, part: req.part, offset: off, err: err}
	}
}

func (m *Model) seekDone(msg seekDoneMsg) tea.Cmd {
	if msg.err == nil {
		m.setStatus(fmt.Sprintf("seek: %s moves to %d; its next range is marked as a jump", EscapeString(msg.part.String()), msg.offset), m.c.theme.ok)
	} else if f, ok := m.top().(*seekForm); !ok || f.pending != msg.id {
		m.setStatus("seek "+EscapeString(msg.part.String())+" failed: "+EscapeString(msg.err.Error()), m.c.theme.bad)
	}
	if f, ok := m.top().(*seekForm); ok {
		return f.Update(msg)
	}
	return nil
}

// openReplay opens the replay form prefilled with the ranges of the batch
// in the detail on top or selected (batches and records panes), or the
// last records of the selected partition.
func (m *Model) openReplay() tea.Cmd {
	if m.opts.Replayer == nil {
		m.setStatus("replay is not available in this session", m.c.theme.dim)
		return nil
	}
	var ranges []string
	batch := m.batchOnTop()
	if batch == nil && (m.focus == focusBatches || m.focus == focusRecords) {
		batch = m.batches.selected()
	}
	switch {
	case batch != nil:
		for _, r := range batch.Ranges {
			ranges = append(ranges, fmt.Sprintf("%s:%d:%d-%d", r.Topic, r.Partition.Partition, r.From, r.Until))
		}
	case m.focus == focusPartitions:
		if p, ok := m.parts.selected(); ok {
			from := max(p.LogStart, p.NextOffset-100)
			ranges = append(ranges, fmt.Sprintf("%s:%d:%d-%d", p.Topic, p.Partition.Partition, from, p.NextOffset))
		}
	}
	m.pushView(newReplayForm(m.c, strings.Join(ranges, " "), &m.nextID, true))
	return nil
}

func (m *Model) plan(req planRequestMsg) tea.Cmd {
	r, ctx := m.opts.Replayer, m.ctx
	return func() tea.Msg {
		tasks, err := r.Plan(ctx, req.ranges)
		return planDoneMsg{id: req.id, ranges: req.ranges, tasks: tasks, err: err}
	}
}

// planDone opens the replay view in place of the form and starts reading.
func (m *Model) planDone(msg planDoneMsg) tea.Cmd {
	f, ok := m.top().(*replayForm)
	if !ok || f.pending != msg.id {
		return nil
	}
	if msg.err != nil {
		return f.Update(msg)
	}
	if f.search != "" {
		m.popView()
		return m.startBrokerSearch(msg.ranges, msg.tasks, f.search)
	}
	m.views = m.views[:len(m.views)-1]
	m.nextID++
	v := newReplayView(m.c, m.nextID, msg.ranges, msg.tasks, m.now(), &m.nextID)
	m.replay = v
	ctx, cancel := context.WithCancel(m.ctx)
	m.replayEnd = cancel
	m.pushView(v)
	ch := make(chan replayItem, 64)
	r, tasks := m.opts.Replayer, msg.tasks
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		defer close(ch)
		err := r.Read(ctx, tasks, func(c ReplayChunk) error {
			select {
			case ch <- replayItem{chunk: c}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		select {
		case ch <- replayItem{done: true, err: err}:
		case <-ctx.Done():
		}
	}()
	return m.waitReplay(v.id, ch, m.now())
}

func (m *Model) waitReplay(id int, ch <-chan replayItem, last time.Time) tea.Cmd {
	b := m.bridge
	return func() tea.Msg {
		items, closed, at := collect(ch, frameGap, last, b.now, b.after)
		return replayMsg{id: id, items: items, closed: closed, at: at, ch: ch}
	}
}

func (m *Model) replayOutput(msg replayMsg) tea.Cmd {
	if m.replay == nil || m.replay.id != msg.id {
		return nil // closed; its reader was cancelled
	}
	m.replay.add(msg.items, msg.at)
	if msg.closed {
		return nil
	}
	return m.waitReplay(msg.id, msg.ch, msg.at)
}
