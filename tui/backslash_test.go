package tui

import (
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// The screen doubles a record's backslashes, once: an ESC shows as \x1b
// and the four characters \x1b as \\x1b, in the records pane, the record
// detail and the events pane, so the two never look the same.
func TestBackslashesDoubledOnScreen(t *testing.T) {
	b := &consumer.Batch{Batch: offsets.Batch{ID: 1, Time: t0, State: offsets.StateAcked}}
	b.Ranges = []offsets.BatchRange{{Range: offsets.Range{Partition: part("events", 0), From: 0, Until: 2}, Records: 2}}
	esc := msg("events", 0, 0, "k-esc", "\x1b[31mESC-value")
	lit := msg("events", 0, 1, `k\lit`, `\x1b[31mLIT-value`)
	lit.Headers = []*krecord.Header{{Key: []byte(`h\k`), Value: []byte(`\x1bLIT-header`)}}
	b.Samples = []*krecord.Record{esc, lit}
	n := offsets.NewEvent(t0, offsets.CodeBrokerError, part("events", 0), "broker said \x1bESC-notice and \\x1bLIT-notice")
	events := []consumer.Event{started(1), &consumer.Notice{Event: n}, &consumer.BatchEvent{Batch: b}}

	m, _ := newTestModel(t, 200, 40, Options{})
	feed(m, events...)
	s := screen(m)
	mustContain(t, s, `\x1b[31mESC-value`, `\\x1b[31mLIT-value`, `k\\lit`, `broker said \x1bESC-notice and \\x1bLIT-notice`)
	mustNotContain(t, s, `\\x1b[31mESC-value`, `\\\\x1b[31mLIT-value`, ` \x1b[31mLIT-value`, `k\\\\lit`)

	press(m, "3", "j", "enter") // the detail of offset 1
	d := screen(m)
	mustContain(t, d, "events[0] · offset 1", `\\x1b[31mLIT-value`, `h\\k`, `\\x1bLIT-header`)
	mustNotContain(t, d, `\\\\x1b`, `h\\\\k`)
}
