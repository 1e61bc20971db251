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
	krecord "github.com/kbatch-dev/kbatch/record"
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

func (m *Model) controlDone(msg controlDoneMsg) tea.Cmd {
	t := &m.c.theme
	if msg.err != nil {
		if errors.Is(msg.err, consumer.ErrEnded) {
			m.setStatus("the stream has ended; q quits", t.warn)
			return nil
		}
		m.setStatus("failed: "+krecord.String(msg.err.Error()), t.bad)
		return nil
	}
	p := krecord.String(msg.part.String())
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
		if m.stream.cutQueued {
			m.stream.cutQueued = false
			return m.control(ctlCut, offsets.Partition{}, 0)
		}
	case ctlCut:
		text := "cutting the next batch now"
		if m.hist.len() > 0 && m.hist.newest(0).State == offsets.StateAcked {
			text = fmt.Sprintf("batch %d acked; cutting the next batch now", m.hist.newest(0).ID)
		}
		m.setStatus(text, t.info)
	}
	return nil
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

// step is n: cut the next batch now. While a batch waits for its ack the
// cut is queued: one batch waits at a time (acks go in order, and the
// next batch's ranges start at the waiting one's untils), so the next is
// cut the moment a acks the waiting one.
func (m *Model) step() tea.Cmd {
	if m.stream.waiting {
		m.stream.cutQueued = true
		var held int64
		parts := 0
		for _, r := range m.parts.rows {
			if r.Buffered > 0 {
				held += int64(r.Buffered)
				parts++
			}
		}
		m.setStatus(fmt.Sprintf("n queued: batch %d is cut when a acks batch %d (one batch waits at a time); %s read ahead on %s",
			m.stream.waitingID+1, m.stream.waitingID, plural(held, "record", "records"), plural(int64(parts), "partition", "partitions")), m.c.theme.warn)
		return nil
	}
	return m.control(ctlCut, offsets.Partition{}, 0)
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
		d := collect(ch, frameGap, last, b.now, b.after)
		return replayMsg{id: id, items: d.items, closed: d.closed, at: d.at, ch: ch}
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
