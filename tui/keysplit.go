package tui

import (
	"reflect"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// splitEscapes undoes what a terminal's byte stream cannot say: ESC
// followed by a key in the same read is decoded as that key with alt
// ("\x1b\x1b" is alt+esc, "\x1bj" alt+j), which is what an alt key sends
// too. Over SSH a quick double tap of esc, or esc then a key, often
// arrives in one packet. So an alt+key that kbatch binds to nothing is
// taken as esc and then the key: alt+esc is always two escapes; an alt
// key bound in keys, or typed into a text field (word moves), stays as it
// is.
func splitEscapes(k tea.KeyPressMsg, keys *keyMap, typing bool) []tea.KeyPressMsg {
	if k.Mod&tea.ModAlt == 0 {
		return []tea.KeyPressMsg{k}
	}
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	if k.Code == tea.KeyEscape {
		rest := k
		rest.Mod &^= tea.ModAlt
		return []tea.KeyPressMsg{esc, rest}
	}
	if typing || boundKey(keys, k.String()) {
		return []tea.KeyPressMsg{k}
	}
	rest := k
	rest.Mod &^= tea.ModAlt
	switch {
	case rest.Mod == 0 && unicode.IsPrint(rest.Code):
		rest.Text = string(rest.Code)
	case rest.Mod == tea.ModShift && rest.ShiftedCode != 0:
		rest.Text = string(rest.ShiftedCode)
	}
	return []tea.KeyPressMsg{esc, rest}
}

// boundKey reports whether ks is one of the key map's keys.
func boundKey(keys *keyMap, ks string) bool {
	v := reflect.ValueOf(*keys)
	for i := 0; i < v.NumField(); i++ {
		if b, ok := v.Field(i).Interface().(key.Binding); ok && keyIs(ks, b) {
			return true
		}
	}
	return false
}

// keys handles a key press that may stand for several (splitEscapes).
func (m *Model) keys(k tea.KeyPressMsg) tea.Cmd {
	m.lastKey = m.now()
	typing := m.records.list.capturing() || m.parts.pf.editing
	if v := m.top(); v != nil {
		typing = v.capturing()
	}
	ks := splitEscapes(k, &m.c.keys, typing)
	if len(ks) == 1 {
		return m.key(ks[0])
	}
	cmds := make([]tea.Cmd, 0, len(ks))
	for _, k := range ks {
		cmds = append(cmds, m.key(k))
	}
	return tea.Sequence(cmds...)
}
