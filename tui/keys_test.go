package tui

import "testing"

// The bindings match tea's key names; these are the ones easy to get wrong.
func TestKeyNames(t *testing.T) {
	for k, want := range map[string]string{"space": "space", "shift+tab": "shift+tab", "P": "P", "G": "G", "esc": "esc", "enter": "enter", "ctrl+c": "ctrl+c", "/": "/"} {
		if got := keyMsg(k).String(); got != want {
			t.Errorf("key %q is %q, want %q", k, got, want)
		}
	}
}
