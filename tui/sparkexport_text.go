package tui

import (
	"github.com/kbatch-dev/kbatch/consumer"
)

// closedSource is an event source with no events, for a model fed by hand.
type closedSource struct{ ch chan consumer.Event }

func (s closedSource) Events() <-chan consumer.Event { return s.ch }

// SparkExportText is the text the e key copies for batch id on a screen
// that has shown events (a kbatch watch or kbatch spark stream's events,
// in order): "startingOffsets=...\nendingOffsets=...". It is the same
// function the key uses, for tools and tests that hand the export to
// Spark. ok is false when the events do not hold batch id.
func SparkExportText(events []consumer.Event, id uint64) (text string, ok bool) {
	src := closedSource{make(chan consumer.Event)}
	close(src.ch)
	m := New(src, nil, Options{})
	defer m.Close()
	m.apply(events)
	starting, ending, ok := m.sparkOptionPair(id)
	if !ok {
		return "", false
	}
	return sparkExportText(starting, ending), true
}
