package tui

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// goldenEvents is a small stream: 4 partitions, 3 batches (one jumped
// after a seek), a data-loss notice, progress.
func goldenEvents() []consumer.Event {
	seek := offsets.NewEvent(t0, offsets.CodeSeek, part("events", 1), "events[1]: seek from 112 to 150")
	loss := offsets.NewEvent(t0, offsets.CodeDataLoss, part("events", 3), "events[3]: data loss: stored offset 120 is below the log start 300; continuing at 300")
	loss.Expected, loss.LogStart, loss.To, loss.Lost = 120, 300, 300, 180
	b3 := batch(3, 4, 14, offsets.StateAcked)
	b3.Ranges[1].Jump = offsets.CodeSeek
	b3.Redelivered = true
	evs := []consumer.Event{started(4), &consumer.Notice{Event: loss}}
	for i := 0; i < 5; i++ {
		evs = append(evs, progressEv(4, float64(10*i)))
	}
	return append(evs, batchEv(1, 4, 10, offsets.StateAcked), batchEv(2, 4, 12, offsets.StateAcked),
		&consumer.Notice{Event: seek}, &consumer.BatchEvent{Batch: b3})
}

// Golden screens of the real program at fixed sizes and colour profile;
// go test ./tui -run Golden -update rewrites them.
func TestGoldenScreens(t *testing.T) {
	opts := Options{StorePath: "/home/me/.local/state/kbatch/offsets.db", Replayer: &fakeReplayer{}}
	tests := []struct {
		name string
		w, h int
		keys []string
	}{
		{"wide_140x40", 140, 40, nil},
		{"wide_batches_focus_140x40", 140, 40, []string{"tab", "j"}},
		{"small_80x24", 80, 24, nil},
		{"small_records_80x24", 80, 24, []string{"3", "j"}},
		{"small_record_detail_80x24", 80, 24, []string{"3", "enter"}},
		{"small_seek_form_80x24", 80, 24, []string{"j", "s", "x"}},
		{"wide_seek_dialog_140x40", 140, 40, []string{"j", "s", "1", "2", "a", "b", "enter"}},
		{"wide_help_140x40", 140, 40, []string{"?"}},
		{"small_help_scrolled_80x24", 80, 24, []string{"?", "j", "j"}},
		{"too_small_50x12", 50, 12, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(t, tt.w, tt.h, opts, goldenEvents(), tt.keys...)
			golden.RequireEqual(t, []byte(r.screen))
		})
	}
}
