package tui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Golden screens of S (seek every partition), a resumed stream, and manual
// acks with a batch waiting (lag from acked, AHEAD); go test ./tui -run
// Golden -update rewrites them.
func TestGoldenSeekResumeAndManualAck(t *testing.T) {
	acked := time.Date(2026, 11, 28, 14, 2, 11, 0, time.UTC)
	resume := &Resume{LastBatch: 12, AckedAt: acked, Batches: ackedLog(acked, 12, 10, 4)}
	waiting := &consumer.Progress{Time: t0, Waiting: true}
	for i := int32(0); i < 4; i++ {
		base := 100 * int64(i)
		waiting.Partitions = append(waiting.Partitions, consumer.PartitionStatus{Partition: part("events", i), Source: offsets.SourceStored,
			NextOffset: base + 40, Stored: base, Acked: base, Ahead: 40, Buffered: 38, Bounds: offsets.Bounds{HighWatermark: base + 50}, Lag: 10})
	}
	manual := []consumer.Event{started(4), batchEv(1, 4, 0, offsets.StatePlanned), waiting}
	tests := []struct {
		name string
		w, h int
		opts Options
		evs  []consumer.Event
		keys []string
	}{
		{"seek_all_140x40", 140, 40, Options{}, goldenEvents(), []string{"S", "-", "1", "0", "0"}},
		{"seek_all_80x24", 80, 24, Options{}, goldenEvents(), []string{"S"}},
		{"resumed_140x40", 140, 40, Options{StorePath: "/state/offsets.db", Resume: resume}, []consumer.Event{started(4)}, nil},
		{"manual_ack_waiting_140x40", 140, 40, Options{ManualAck: true}, manual, []string{"n"}},
		{"manual_ack_waiting_80x24", 80, 24, Options{ManualAck: true}, manual, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(t, tt.w, tt.h, tt.opts, tt.evs, tt.keys...)
			golden.RequireEqual(t, []byte(r.screen))
		})
	}
}
