package tui

import (
	"fmt"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// SparkExportText gives exactly what the e key copies to the clipboard.
func TestSparkExportTextIsTheKeysText(t *testing.T) {
	evs := []consumer.Event{started(2), batchEv(1, 2, 10, offsets.StateAcked), batchEv(2, 2, 12, offsets.StateAcked)}
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, evs...)
	press(m, "2", "j")
	cmd := press(m, "e")
	if cmd == nil {
		t.Fatal("e gave no clipboard command")
	}
	copied := fmt.Sprint(cmd())
	text, ok := SparkExportText(evs, 1)
	if !ok {
		t.Fatal("SparkExportText has no batch 1")
	}
	if copied != text+"\n" {
		t.Fatalf("e copied %q, SparkExportText gives %q", copied, text)
	}
	if _, ok := SparkExportText(evs, 9); ok {
		t.Fatal("SparkExportText found a batch that was never shown")
	}
}
