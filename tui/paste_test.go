package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

func paste(m *Model, s string) tea.Cmd {
	_, cmd := m.Update(tea.PasteMsg{Content: s})
	return cmd
}

// TestPasteGoesIntoTheTextField: terminals send a paste as one bracketed
// paste message, not as keys; it was dropped by every form. It now goes
// into the text field being edited, and with none open it is dropped with
// a word in the status line: never taken as keys (a pasted q must not
// quit).
func TestPasteGoesIntoTheTextField(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	feed(m, started(3), progressEv(3, 1))

	if cmd := paste(m, "q"); cmd != nil {
		t.Fatalf("a paste with no field open returned a command (%T)", cmd())
	}
	mustContain(t, screen(m), "Partitions 3", "pasted text goes into a text field, and none is open")

	press(m, "j", "s")
	paste(m, "-10")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "seek: events[1] moves to 140")
	if got := fs.Calls(); len(got) == 0 || got[len(got)-1] != "seek events[1] 140" {
		t.Fatalf("calls %v", got)
	}

	// The partitions' filter, while it is edited.
	press(m, "/")
	paste(m, "events[2]")
	press(m, "enter")
	mustContain(t, screen(m), `filter "events[2]"`)
}
