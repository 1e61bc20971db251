package tui

import (
	"bytes"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kbatch-dev/kbatch/consumer"
)

// Golden screens of a batch's records view: the first page, and the last
// record after G; go test ./tui -run Golden -update rewrites them.
func TestGoldenBatchRecords(t *testing.T) {
	opts := Options{Replayer: &logReplayer{}}
	evs := []consumer.Event{started(2), bigBatch(6000, 300)}
	for _, tt := range []struct {
		name, until string
		w, h        int
		keys        []string
	}{
		{"first_page_140x40", "records in memory", 140, 40, []string{"2", "enter"}},
		{"last_record_140x40", "@ 1299", 140, 40, []string{"2", "enter", "G"}},
		{"first_page_80x24", "records in memory", 80, 24, []string{"2", "enter"}},
		{"last_record_80x24", "@ 1299", 80, 24, []string{"2", "enter", "G"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(runEventsUntil(t, tt.w, tt.h, opts, evs, tt.until, tt.keys...)))
		})
	}
}

// runEventsUntil runs the program over evs, sends keys, and returns the
// screen once until was drawn.
func runEventsUntil(t *testing.T, w, h int, opts Options, evs []consumer.Event, until string, keys ...string) string {
	t.Helper()
	m, fs := newTestModel(t, w, h, opts)
	t.Cleanup(func() { _ = fs.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h), teatest.WithProgramOptions(
		tea.WithColorProfile(colorprofile.ANSI), tea.WithEnvironment([]string{"TERM=xterm-256color"})))
	tm.Send(eventsMsg{events: evs, at: t0})
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		return bytes.Contains(seen.Bytes(), []byte(until))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	tm.Send(keyMsg("ctrl+c"))
	rest, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	return emulate(t, append(seen.Bytes(), rest...), w, h)
}
