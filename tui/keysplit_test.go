package tui

import (
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/offsets"
)

// viewDepth wraps the model and reports, after every message, how many
// views are open (-1 while a records view waits for its first page), from
// the program's goroutine.
type viewDepth struct {
	*Model
	depth chan int
}

func (w viewDepth) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := w.Model.Update(msg)
	d := len(w.Model.views)
	if v, ok := w.Model.top().(*recordsView); ok && len(v.list.all) == 0 {
		d = -1
	}
	w.depth <- d
	return w, cmd
}

// Two escapes in one read ("\x1b\x1b", a double tap over SSH) go back
// two levels in a real program, as two reads do.
func TestTwoEscapesInOneRead(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	t.Cleanup(func() { _ = fs.Close() })
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked))
	inR, inW := io.Pipe()
	w := viewDepth{Model: m, depth: make(chan int, 1024)}
	p := tea.NewProgram(w, tea.WithInput(inR), tea.WithOutput(io.Discard), tea.WithWindowSize(140, 40),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	// waitDepth reads the depths reported until one is want.
	waitDepth := func(want int, what string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case d := <-w.depth:
				if d == want {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no key left %d views open", what, want)
			}
		}
	}
	write := func(s string) {
		t.Helper()
		if _, err := inW.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write("3")
	write("\r") // a sample's detail
	waitDepth(1, "enter on a sample")
	write("\x1b")
	waitDepth(0, "esc")
	write("2")
	write("\r") // the batch's records
	waitDepth(1, "enter on the batch")
	write("\r") // a record's detail on top of the batch's records
	waitDepth(2, "enter on a record")
	write("\x1b\x1b")
	waitDepth(0, `"\x1b\x1b" in one write`)
	write("q")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_ = inW.Close()
}

// splitEscapes keeps alt keys that mean something, and splits the rest.
func TestSplitEscapes(t *testing.T) {
	keys := newKeyMap()
	alt := func(code rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: code, Mod: tea.ModAlt} }
	for _, tt := range []struct {
		name   string
		k      tea.KeyPressMsg
		typing bool
		want   []string
	}{
		{"esc", tea.KeyPressMsg{Code: tea.KeyEscape}, false, []string{"esc"}},
		{"esc esc", alt(tea.KeyEscape), false, []string{"esc", "esc"}},
		{"esc esc in a form", alt(tea.KeyEscape), true, []string{"esc", "esc"}},
		{"esc j", alt('j'), false, []string{"esc", "j"}},
		{"alt+b in a text field", alt('b'), true, []string{"alt+b"}},
		{"j", tea.KeyPressMsg{Code: 'j', Text: "j"}, false, []string{"j"}},
	} {
		got := splitEscapes(tt.k, &keys, tt.typing)
		var names []string
		for _, k := range got {
			names = append(names, k.String())
		}
		if len(names) != len(tt.want) || names[0] != tt.want[0] || names[len(names)-1] != tt.want[len(tt.want)-1] {
			t.Errorf("%s: %v, want %v", tt.name, names, tt.want)
		}
		if tt.name == "esc j" && got[1].Text != "j" {
			t.Errorf("esc j: the j has text %q", got[1].Text)
		}
	}
}
