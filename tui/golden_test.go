package tui

import (
	"testing"
	"time"

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

// Golden screens of the layouts and value modes.
func TestGoldenLayouts(t *testing.T) {
	opts := Options{StorePath: "/home/me/.local/state/kbatch/offsets.db", Replayer: &fakeReplayer{}}
	for _, tt := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"stacked_112x45", 112, 45, nil},
		{"wide_120x32", 120, 32, nil},
		{"wrapped_records_80x24", 80, 24, []string{"3", "z"}},
		{"value_only_140x40", 140, 40, []string{"3", "V"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(runProgramSetup(t, tt.w, tt.h, opts, nil, goldenEvents(), tt.keys...)))
		})
	}
}

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

func goldenGroups() *fakeGroups {
	return &fakeGroups{total: 9, groups: []ConsumerGroup{
		{Name: "billing", State: "Stable", Members: 3, Offsets: map[offsets.Partition]int64{
			part("events", 0): 11, part("events", 1): 150, part("events", 2): 213, part("events", 3): 40}},
		{Name: "fraud-scoring", State: "Empty", Offsets: map[offsets.Partition]int64{part("events", 0): 2}},
		{Name: "legacy-audit", Err: errTest(`not authorized to read group "legacy-audit": the user needs DESCRIBE on it (Kafka ACL)`)},
	}}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// Golden screens of the produce form, the palette, the cluster switch, the
// groups view and the partitions sorted by lag; go test ./tui -run Golden
// -update rewrites them.
func TestGoldenProducePaletteClustersGroups(t *testing.T) {
	profiles := []Profile{{Name: "local", Brokers: []string{"127.0.0.1:9092"}}, {Name: "staging", Brokers: []string{"kafka-1.staging:9092", "kafka-2.staging:9092"}},
		{Name: "prod-eu", Brokers: []string{"b1.prod-eu.example:9093"}}}
	opts := Options{StorePath: "/home/me/.local/state/kbatch/offsets.db", Replayer: &fakeReplayer{}, Writer: &fakeWriter{},
		Cluster: "local", Profiles: profiles}
	produce := []string{"p", "tab", "tab", "u", "s", "e", "r", "-", "7", "tab", "h", "i", "tab", "tab", "s", "=", "w", "enter"}
	tests := []struct {
		name  string
		w, h  int
		until string
		keys  []string
	}{
		{"produce_confirm_140x40", 140, 40, "", produce},
		{"produce_form_80x24", 80, 24, "", produce[:len(produce)-1]},
		{"palette_80x24", 80, 24, "", []string{":", "r", "e"}},
		{"palette_140x40", 140, 40, "", []string{":"}},
		{"clusters_80x24", 80, 24, "", []string{"c"}},
		{"groups_140x40", 140, 40, "legacy-audit", []string{"C"}},
		{"groups_80x24", 80, 24, "billing", []string{"C"}},
		{"sorted_by_lag_140x40", 140, 40, "", []string{"o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			o.Groups = goldenGroups()
			var s string
			if tt.until == "" {
				s = runProgram(t, tt.w, tt.h, o, goldenEvents(), tt.keys...).screen
			} else {
				s = runEventsUntil(t, tt.w, tt.h, o, goldenEvents(), tt.until, tt.keys...)
			}
			golden.RequireEqual(t, []byte(s))
		})
	}
}
