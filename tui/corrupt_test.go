package tui

import (
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A partition stopped at a corrupt record batch says `corrupt` in its
// STATE (it showed `live`, or `error` while it was retried for ever), the
// event is in the events pane in the colour of errors, and the state
// goes once progress says the partition reads again (a seek).
func TestCorruptPartitionRow(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	pr := progressEv(3, 1)
	pr.Partitions[1].Corrupt, pr.Partitions[1].CorruptAt = true, 110
	e := offsets.NewEvent(t0, offsets.CodeCorrupt, part("events", 1),
		"events[1]: corrupt record batch at offset 110: CRC mismatch; the partition stops before it: seek past it to read on")
	e.Expected = 110
	feed(m, started(3), pr, &consumer.Notice{Event: e})
	s := screen(m)
	if !rowHas(s, "events[1]  stored", "corrupt") || rowHas(s, "events[0]  stored", "corrupt") || rowHas(s, "events[2]  stored", "corrupt") {
		t.Fatalf("STATE should say corrupt for events[1] alone:\n%s", s)
	}
	mustContain(t, s, "corrupt-batch", "corrupt record batch at offset 110")
	if got := eventStyle(&m.c.theme, offsets.CodeCorrupt).Render("x"); got != m.c.theme.bad.Render("x") {
		t.Errorf("the corrupt-batch event is not drawn as an error")
	}
	if !m.parts.matchTerm(pr.Partitions[1], "corrupt") || m.parts.matchTerm(pr.Partitions[0], "corrupt") {
		t.Error("the partition filter's state corrupt does not pick the corrupt partition alone")
	}
	feed(m, progressEv(3, 1))
	if s := screen(m); rowHas(s, "events[1]  stored", "corrupt") {
		t.Fatalf("STATE still says corrupt once the partition reads again:\n%s", s)
	}
}
