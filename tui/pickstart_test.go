package tui

import (
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
)

// newAskingPicker is a picker that asks where to start; the stream is
// stored when stored is set, and asked records the topics it was asked
// about.
func newAskingPicker(t *testing.T, w, h int, stored bool, def string, asked *[]string) *Picker {
	t.Helper()
	p := NewPicker(&fakeLister{topics: pickTopics}, PickerOptions{Brokers: []string{"127.0.0.1:9092"},
		Now: func() time.Time { return t0 },
		Ask: func(topics []string) StartQuestion {
			*asked = topics
			q := StartQuestion{Stream: "events", Default: def, Reset: "latest", Remember: "/state/offsets.db"}
			if stored {
				q.Stored, q.LastBatch, q.AckedAt = true, 12, t0
			}
			return q
		}})
	t.Cleanup(p.Close)
	p.Update(tea.WindowSizeMsg{Width: w, Height: h})
	runPicker(p, p.Init())
	return p
}

// After the topics the picker asks where to start: ↑/↓ pick a choice,
// typing takes -o's grammar, a bad answer is explained, esc goes back.
func TestPickerAsksWhereToStart(t *testing.T) {
	var asked []string
	p := newAskingPicker(t, 140, 40, true, "", &asked)
	if pickPress(p, "j", "enter") {
		t.Fatal("enter quit before the start question")
	}
	if !slices.Equal(asked, []string{"events"}) {
		t.Fatalf("asked about %v", asked)
	}
	s := pickScreen(p)
	mustContain(t, s, "Where to start · stream events", "resume", "where stream events stopped: after batch 12",
		"earliest", "everything the topics hold (123456 records)", "-100", "@-1h", "start> latest",
		"remembered for stream events")
	pickPress(p, "up")
	mustContain(t, pickScreen(p), "start> resume")
	pickPress(p, "down", "down", "down")
	mustContain(t, pickScreen(p), "start> -100")
	retypePicker(p, "-100", "-0")
	if pickPress(p, "enter") {
		t.Fatal("a bad answer started")
	}
	mustContain(t, pickScreen(p), "invalid offset")
	pickPress(p, "esc")
	mustContain(t, pickScreen(p), "PICK TOPICS", "Topics 4")
	pickPress(p, "enter")
	retypePicker(p, "latest", "@-15m")
	if !pickPress(p, "enter") {
		t.Fatal("a good answer did not start")
	}
	if p.StartChoice() != "@-15m" || !slices.Equal(p.Chosen(), []string{"events"}) {
		t.Fatalf("choice %q topics %v", p.StartChoice(), p.Chosen())
	}
}

// The remembered answer is offered first; resume is refused for a stream
// with nothing stored.
func TestPickerStartDefaultAndResume(t *testing.T) {
	var asked []string
	p := newAskingPicker(t, 140, 40, false, "-100", &asked)
	pickPress(p, "enter")
	mustContain(t, pickScreen(p), "start> -100")
	mustNotContain(t, pickScreen(p), "where stream events stopped")
	retypePicker(p, "-100", "resume")
	if pickPress(p, "enter") {
		t.Fatal("resume of a stream with nothing stored started")
	}
	mustContain(t, pickScreen(p), "has no stored positions to resume from")
}

func TestParseStartChoice(t *testing.T) {
	for in, want := range map[string]string{"Resume": "resume", " latest ": "latest", "-100": "-100", "@-1h": "@-1h", "42": "42"} {
		if got, err := ParseStartChoice(in, t0); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-0", "soon", "@tomorrow"} {
		if _, err := ParseStartChoice(bad, t0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Golden screens of the start question at the two sizes people use most.
func TestGoldenPickerStartQuestion(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
	}{{"wide_140x40", 140, 40}, {"small_80x24", 80, 24}} {
		t.Run(sz.name, func(t *testing.T) {
			var asked []string
			p := newAskingPicker(t, sz.w, sz.h, true, "", &asked)
			pickPress(p, "j", "enter")
			golden.RequireEqual(t, []byte(pickScreen(p)))
		})
	}
}

// retypePicker erases old from the picker's field, a backspace a
// character, and types text.
func retypePicker(p *Picker, old, text string) {
	for range old {
		pickPress(p, "backspace")
	}
	typePicker(p, text)
}
