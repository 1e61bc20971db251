package tui

import (
	tea "charm.land/bubbletea/v2"
)

// updateMore handles the messages of produce, the groups view, the
// palette, the cluster switch and the mouse; it reports whether msg was
// one of them.
func (m *Model) updateMore(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case produceRequestMsg:
		return m.produce(msg), true
	case produceDoneMsg:
		return m.produceDone(msg), true
	case groupsMsg:
		return m.groupsAnswered(msg), true
	case groupsTickMsg:
		return m.groupsTick(msg), true
	case setGroupDoneMsg:
		return m.groupSet(msg), true
	case paletteRunMsg:
		if _, ok := m.top().(*palette); ok {
			m.popView()
		}
		if msg.why != "" {
			m.setStatus(msg.press+": "+msg.why, m.c.theme.warn)
			return nil, true
		}
		return m.key(pressOf(msg.press)), true
	case switchMsg:
		m.switchTo = msg.profile
		return tea.Quit, true
	case probeMsg:
		for _, v := range m.views {
			if cp, ok := v.(*clusterPicker); ok {
				return cp.probed(msg), true
			}
		}
		return nil, true
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m.mouse(msg.(tea.MouseMsg)), true
	}
	return nil, false
}

// moreKey handles p, E, o, :, c and C; it reports whether ks was one of
// them where it applies (the main screen; : and E over the views that
// show records too).
func (m *Model) moreKey(ks string) (tea.Cmd, bool) {
	km := m.c.keys
	top := m.top()
	switch top.(type) {
	case nil, *textView, *replayView, *groupsView, *helpView, *recordsView:
	default:
		return nil, false
	}
	switch {
	case keyIs(ks, km.Palette):
		p := newPalette(m.c, m.cannotRun) // paletteguard.go
		m.pushView(p)
		return nil, true
	case keyIs(ks, km.Edit) && (top == nil || m.selectedRecord() != nil):
		m.openEdit()
		return nil, true
	case keyIs(ks, km.SetGroup) && (top == nil || m.batchOnTop() != nil):
		return m.openSetGroup(), true
	}
	if top != nil {
		return nil, false
	}
	switch {
	case keyIs(ks, km.Produce):
		m.openProduce()
	case keyIs(ks, km.SortParts):
		m.setStatus("partitions sorted by "+m.parts.cycleOrder()+"; o: the next order (lag, rate, name)", m.c.theme.info)
		m.layout()
	case keyIs(ks, km.Cluster):
		m.openClusters()
	case keyIs(ks, km.Groups):
		return m.openGroups(), true
	default:
		return nil, false
	}
	return nil, true
}
