package tui

import (
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// hostileName is a topic or broker name as a lying broker's metadata
// could send it: a window title, a screen clear, a C1 CSI, a bidi
// override and a NUL, each before a marker.
const hostileName = "ev\x1b]0;PWN-topic\x07\x1b[2JPWN-clear\u009b31mPWN-c1\u202ePWN-bidi\x00PWN-nul"

// TestHostileTopicAndBrokerNamesNeverReachTheTerminal: names from a
// broker's metadata (topics, broker addresses) on every pane: header,
// partitions, batches and a batch's ranges, records, events. No byte of
// them drives the terminal, and the escaped name is on screen.
func TestHostileTopicAndBrokerNamesNeverReachTheTerminal(t *testing.T) {
	st := &consumer.Started{Stream: "s", Brokers: []string{"pwn" + hostileName + ":9092"}, Topics: []string{hostileName}}
	p := part(hostileName, 0)
	st.Starts = []offsets.Start{{Partition: p, Source: offsets.SourceStored, Bounds: offsets.Bounds{HighWatermark: 50}}}
	b := &consumer.Batch{Batch: offsets.Batch{ID: 1, Time: t0, State: offsets.StateAcked}}
	b.Ranges = []offsets.BatchRange{{Range: offsets.Range{Partition: p, From: 0, Until: 2}, Records: 2, Bytes: 2}}
	b.Samples = append(b.Samples, msg(hostileName, 0, 0, "k", "v"), msg(hostileName, 0, 1, "k", "v"))
	prog := &consumer.Progress{Time: t0, Partitions: []consumer.PartitionStatus{{Partition: p, Source: offsets.SourceStored,
		NextOffset: 2, Bounds: offsets.Bounds{HighWatermark: 50}, Lag: 48}}}
	n := offsets.NewEvent(t0, offsets.CodeBrokerError, p, "broker "+hostileName+" failed")
	evs := []consumer.Event{st, prog, &consumer.BatchEvent{Batch: b}, &consumer.Notice{Event: n}}
	r := runProgram(t, 160, 40, Options{}, evs, "1", "enter", "esc", "2", "enter", "esc", "3", "enter", "esc", "4", "enter")
	if len(r.raw) == 0 {
		t.Fatal("no output")
	}
	checkOutput(t, r.raw)
	if !strings.Contains(r.screen, `ev\x1b]0;PWN-topic`) {
		t.Errorf("final screen lacks the escaped name:\n%s", r.screen)
	}
	m, _ := newTestModel(t, 200, 40, Options{})
	feed(m, evs...)
	s := screen(m)
	checkOutput(t, []byte(m.View().Content))
	if !strings.Contains(s, `ev\x1b]0;PWN-topic`) {
		t.Errorf("the screen lacks the escaped topic name:\n%s", s)
	}
}
