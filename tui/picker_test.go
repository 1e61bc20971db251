package tui

import (
	"context"
	"errors"
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// fakeLister serves topics, or err.
type fakeLister struct {
	topics []TopicInfo
	err    error
	calls  int
}

func (f *fakeLister) ListTopics(context.Context) ([]TopicInfo, error) {
	f.calls++
	return f.topics, f.err
}

var pickTopics = []TopicInfo{
	{Name: "__consumer_offsets", Partitions: 50, Records: 9},
	{Name: "clicks", Partitions: 3, Records: 1200},
	{Name: "events", Partitions: 6, Records: 123456},
	{Name: "orders", Partitions: 1, Records: 0},
	{Name: "orders-dlq", Partitions: 1, Records: 7},
}

// newTestPicker is a picker at w×h whose first listing has been answered.
func newTestPicker(t *testing.T, w, h int, l *fakeLister) *Picker {
	t.Helper()
	p := NewPicker(l, PickerOptions{Brokers: []string{"127.0.0.1:9092"}})
	t.Cleanup(p.Close)
	p.Update(tea.WindowSizeMsg{Width: w, Height: h})
	runPicker(p, p.Init())
	return p
}

// runPicker executes cmd and feeds its message back until a command
// quits or there is none; it reports whether the picker quit.
func runPicker(p *Picker, cmd tea.Cmd) bool {
	for cmd != nil {
		msg := cmd()
		if _, ok := msg.(tea.QuitMsg); ok {
			return true
		}
		if msg == nil {
			return false
		}
		_, cmd = p.Update(msg)
	}
	return false
}

func pickPress(p *Picker, keys ...string) (quit bool) {
	for _, k := range keys {
		_, cmd := p.Update(keyMsg(k))
		quit = runPicker(p, cmd)
	}
	return quit
}

func pickScreen(p *Picker) string { return stripANSI(p.View().Content) }

func TestPickerListsTopics(t *testing.T) {
	p := newTestPicker(t, 140, 40, &fakeLister{topics: pickTopics})
	s := pickScreen(p)
	mustContain(t, s, "PICK TOPICS", "brokers 127.0.0.1:9092", "Topics 4 · 0 marked", "TOPIC", "PARTITIONS", "RECORDS",
		"clicks", "123456", "orders-dlq")
	mustNotContain(t, s, "__consumer_offsets")
}

func TestPickerEnterStartsSelected(t *testing.T) {
	p := newTestPicker(t, 80, 24, &fakeLister{topics: pickTopics})
	startsWith(t, p, []string{"j", "enter"}, "events")
}

func TestPickerFilter(t *testing.T) {
	p := newTestPicker(t, 140, 40, &fakeLister{topics: pickTopics})
	pickPress(p, "/")
	typePicker(p, "ORD")
	s := pickScreen(p)
	mustContain(t, s, "Topics 2 of 4", "orders", "orders-dlq")
	mustNotContain(t, s, "clicks", "events")
	pickPress(p, "down", "enter") // leaves the filter, keeps it
	mustContain(t, pickScreen(p), "Topics 2 of 4")
	startsWith(t, p, []string{"enter"}, "orders-dlq")
}

func TestPickerFilterNoMatchAndEsc(t *testing.T) {
	p := newTestPicker(t, 140, 40, &fakeLister{topics: pickTopics})
	pickPress(p, "/")
	typePicker(p, "zzz")
	mustContain(t, pickScreen(p), "no topic matches the filter")
	pickPress(p, "enter")
	if pickPress(p, "enter") {
		t.Fatal("enter with nothing shown quit")
	}
	mustContain(t, pickScreen(p), "no topic to start with")
	if pickPress(p, "esc") { // clears the filter first
		t.Fatal("esc with a filter quit")
	}
	mustContain(t, pickScreen(p), "Topics 4 · 0 marked", "clicks")
}

func TestPickerMarkSeveral(t *testing.T) {
	p := newTestPicker(t, 140, 40, &fakeLister{topics: pickTopics})
	pickPress(p, "space", "j", "space", "k", "k", "k") // clicks, orders
	mustContain(t, pickScreen(p), "Topics 4 · 2 marked", "[x]  clicks", "[ ]  events", "[x]  orders")
	pickPress(p, "space", "space") // clicks off, events on
	pickPress(p, "/")
	typePicker(p, "dlq") // marks stay when filtered out
	pickPress(p, "space")
	startsWith(t, p, []string{"esc", "enter"}, "events", "orders", "orders-dlq")
}

func TestPickerQuit(t *testing.T) {
	for _, k := range []string{"esc", "q", "ctrl+c"} {
		p := newTestPicker(t, 140, 40, &fakeLister{topics: pickTopics})
		if !pickPress(p, "space", k) {
			t.Fatalf("%s did not quit", k)
		}
		if got := p.Chosen(); got != nil {
			t.Fatalf("%s: chosen %v, want nil", k, got)
		}
	}
}

func TestPickerListingError(t *testing.T) {
	l := &fakeLister{err: errors.New("kafka: client has run out of available brokers\x1b[2J")}
	p := newTestPicker(t, 140, 40, l)
	s := pickScreen(p)
	mustContain(t, s, "listing topics failed: kafka: client has run out of available brokers\\x1b[2J", "r lists again")
	if pickPress(p, "enter") {
		t.Fatal("enter without topics quit")
	}
	l.err, l.topics = nil, pickTopics
	pickPress(p, "r")
	if l.calls != 2 {
		t.Fatalf("listed %d times, want 2", l.calls)
	}
	mustContain(t, pickScreen(p), "Topics 4", "events")
	mustNotContain(t, pickScreen(p), "failed")
}

func TestPickerDropsStaleListing(t *testing.T) {
	p := newTestPicker(t, 140, 40, &fakeLister{topics: pickTopics})
	p.Update(topicsMsg{id: p.reqID - 1, err: errors.New("old")})
	mustNotContain(t, pickScreen(p), "old")
}

func TestPickerEscapesNames(t *testing.T) {
	p := newTestPicker(t, 140, 40, &fakeLister{topics: []TopicInfo{{Name: "evil\x1b]0;x\x07", Partitions: 1}}})
	mustContain(t, pickScreen(p), `evil\x1b]0;x\x07`)
}

func TestPickerTooSmall(t *testing.T) {
	p := newTestPicker(t, 50, 12, &fakeLister{topics: pickTopics})
	mustContain(t, pickScreen(p), "terminal too small")
}

func typePicker(p *Picker, s string) {
	for _, r := range s {
		p.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// startsWith checks that keys end the picker with topics chosen, in order.
func startsWith(t *testing.T, p *Picker, keys []string, topics ...string) {
	t.Helper()
	if !pickPress(p, keys...) {
		t.Fatalf("%v did not quit", keys)
	}
	if got := p.Chosen(); !slices.Equal(got, topics) {
		t.Fatalf("chosen %v, want %v", got, topics)
	}
}
