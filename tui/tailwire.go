package tui

import (
	tea "charm.land/bubbletea/v2"
)

// tailMsg says the tap has records for the tail view opened as gen.
type tailMsg struct{ gen int }

// openTail is t: the tail view over the ring, the tap copying records
// while it is open.
func (m *Model) openTail() tea.Cmd {
	t := m.opts.Tail
	if t == nil {
		m.setStatus("the tail view needs a stream kbatch reads itself (not kbatch spark)", m.c.theme.dim)
		return nil
	}
	if m.tailView != nil {
		return nil
	}
	if m.tailRing == nil {
		m.tailRing = newTailRing(t.max)
	}
	m.tailGen++
	m.tailStop = make(chan struct{})
	m.tailView = newTailView(m.c, m.tailRing)
	t.setOpen(true)
	m.pushView(m.tailView)
	return m.waitTail()
}

// viewClosed is called for every view popped: closing the tail view stops
// the tap.
func (m *Model) viewClosed(v view) {
	if m.findView != nil && v == view(m.findView) {
		m.findClosed()
	}
	if m.tailView == nil || v != view(m.tailView) {
		return
	}
	m.opts.Tail.setOpen(false)
	close(m.tailStop)
	m.tailView = nil
}

// waitTail is the Cmd that waits for the tap's next records, then lets a
// frame gap pass so a hot stream redraws at most ~30 times a second.
func (m *Model) waitTail() tea.Cmd {
	t, stop, done, gen, after := m.opts.Tail, m.tailStop, m.ctx.Done(), m.tailGen, m.bridge.after
	return func() tea.Msg {
		select {
		case <-t.notify:
		case <-stop:
			return nil
		case <-done:
			return nil
		}
		select {
		case <-after(frameGap):
		case <-stop:
			return nil
		case <-done:
			return nil
		}
		return tailMsg{gen: gen}
	}
}

// tailIn moves the tap's records into the ring and the view.
func (m *Model) tailIn(msg tailMsg) tea.Cmd {
	if m.tailView == nil || msg.gen != m.tailGen {
		return nil
	}
	recs, lost := m.opts.Tail.take()
	m.tailRing.lost += lost
	m.tailView.added(m.tailRing.add(recs))
	m.followHeap()
	return m.waitTail()
}
