package tui

import (
	tea "charm.land/bubbletea/v2"
)

// listKey handles the keys of the tail and search views and of `/` and
// `t` on the main screen, before the global keys; it reports whether k
// was one of them.
func (m *Model) listKey(ks string, k tea.KeyPressMsg) (tea.Cmd, bool) {
	km := m.c.keys
	switch v := m.top().(type) {
	case nil:
		switch {
		case m.parts.pf.editing:
			cmd := m.parts.Update(k)
			m.layout() // the pane's height follows its filter line
			return cmd, true
		case keyIs(ks, km.Back) && m.focus == focusPartitions && m.parts.clearFilter():
			m.layout()
			return nil, true
		case keyIs(ks, km.Tail):
			return m.openTail(), true
		case keyIs(ks, km.Filter) && m.focus == focusPartitions:
			cmd := m.parts.startFilter()
			m.layout()
			return cmd, true
		case keyIs(ks, km.Filter):
			return m.openFind(), true
		}
	case *findView:
		if v.capturing() {
			return nil, false
		}
		switch {
		case keyIs(ks, km.BrokerSearch):
			return m.openBrokerSearch(), true
		case keyIs(ks, km.Enter):
			if r := v.list.selected(); r != nil {
				m.openRecord(r)
			}
			return nil, true
		}
	case *recordView:
		switch {
		case keyIs(ks, km.NextMatch):
			return nil, m.nextMatch(1)
		case keyIs(ks, km.PrevMatch):
			return nil, m.nextMatch(-1)
		}
	case *tailView:
		switch {
		case ks == "space":
			return v.Update(k), true
		case keyIs(ks, km.Enter):
			if r := v.list.selected(); r != nil {
				m.openRecord(r)
			}
			return nil, true
		}
	}
	return nil, false
}
