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
		case keyIs(ks, km.Tail):
			return m.openTail(), true
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
