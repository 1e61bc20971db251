package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/offsets"
)

// A jumped range in a narrow batches pane keeps its reason whole: the
// words "records" and "jump:" go first (the screenshot of a seek showed
// "* jump: …" in the 48-column pane).
func TestRangeLineKeepsTheJumpReason(t *testing.T) {
	r := offsets.BatchRange{Range: offsets.Range{Partition: offsets.Partition{Topic: "sensor-data", Partition: 1}, From: 1975, Until: 2499}, Records: 524, Jump: "data-loss"}
	for _, tt := range []struct {
		width int
		want  string
	}{
		{120, "  sensor-data[1] 1975 → 2499 · 524 records  * jump: data-loss"},
		{46, "  sensor-data[1] 1975 → 2499 · 524  * data-loss"},
	} {
		b := newBatchesPane(&common{theme: newTheme(), keys: newKeyMap()}, newHistory())
		b.width = tt.width
		if got := ansi.Strip(b.rangeLine(r)); got != tt.want {
			t.Errorf("width %d: got %q, want %q", tt.width, got, tt.want)
		}
		if got := ansi.Strip(b.rangeLine(r)); !strings.Contains(got, "data-loss") {
			t.Errorf("width %d: the reason is cut: %q", tt.width, got)
		}
	}
}
