package tui

import (
	"strings"
	"testing"
)

// The produce form starts at its first field and marks the field with
// the focus; tab and shift+tab move the mark.
func TestProduceFormShowsTheFocus(t *testing.T) {
	m := liveModel(t, 140, 40, Options{Writer: &fakeWriter{}})
	press(m, "p")
	focused := func() string {
		t.Helper()
		f, ok := m.top().(*produceForm)
		if !ok {
			t.Fatalf("p opened %T", m.top())
		}
		for _, l := range strings.Split(stripANSI(f.View()), "\n") {
			if strings.HasPrefix(l, "> ") {
				return strings.Fields(l[2:])[0]
			}
		}
		t.Fatalf("no field is marked:\n%s", stripANSI(f.View()))
		return ""
	}
	for _, step := range []struct{ key, want string }{
		{"", "topic"}, {"tab", "partition"}, {"tab", "key"}, {"shift+tab", "partition"}, {"shift+tab", "topic"}, {"shift+tab", "headers"},
	} {
		if step.key != "" {
			press(m, step.key)
		}
		if got := focused(); got != step.want {
			t.Fatalf("after %q the mark is on %q, want %q", step.key, got, step.want)
		}
	}
}
