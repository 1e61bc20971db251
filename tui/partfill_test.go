package tui

import (
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

// At 80×24 the partitions tab puts the selected partition's last ranges
// in the rows its few partitions leave empty, and follows the selection.
func TestSmallPartitionsTabUsesItsRows(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Options{})
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked), batchEv(2, 2, 12, offsets.StateAcked))
	mustContain(t, screen(m), "events[0] in the last batches", "2  10:00:02  12 → 14 · 2 records", "1  10:00:01  10 → 12 · 2 records")
	press(m, "j")
	mustContain(t, screen(m), "events[1] in the last batches", "112 → 114 · 2 records")
	empty := 0
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Trim(l, "┃ ") == "" {
			empty++
		}
	}
	if empty > 12 {
		t.Errorf("%d empty rows on a 24-row screen:\n%s", empty, screen(m))
	}
}
