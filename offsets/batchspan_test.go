package offsets_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

func rng(topic string, p int32, from, until int64) offsets.BatchRange {
	return offsets.BatchRange{Range: offsets.Range{Partition: offsets.Partition{Topic: topic, Partition: p}, From: from, Until: until}}
}

func ExampleBatchSpan() {
	log := []offsets.Batch{
		{ID: 9, Ranges: []offsets.BatchRange{rng("events", 2, 5, 8)}},
		{ID: 7, Ranges: []offsets.BatchRange{rng("events", 0, 100, 150)}},
		{ID: 6, Ranges: []offsets.BatchRange{rng("events", 1, 40, 60)}},
	}
	start, end, _ := offsets.BatchSpan(log, 7, nil)
	for _, p := range offsets.SortedPartitions(start) {
		fmt.Printf("%s [%d, %d)\n", p, start[p], end[p])
	}
	// Output:
	// events[0] [100, 150)
	// events[1] [60, 60)
	// events[2] [5, 5)
}

func TestBatchSpan(t *testing.T) {
	ev := func(p int32) offsets.Partition { return offsets.Partition{Topic: "events", Partition: p} }
	log := []offsets.Batch{
		{ID: 1, Ranges: []offsets.BatchRange{rng("events", 0, 0, 10), rng("events", 1, 0, 5)}},
		{ID: 2, Ranges: []offsets.BatchRange{rng("events", 0, 10, 20)}},
		{ID: 3, Ranges: []offsets.BatchRange{rng("events", 1, 30, 35)}}, // after a seek
		{ID: 4, Ranges: []offsets.BatchRange{rng("events", 0, 20, 25)}},
	}
	stored := map[offsets.Partition]int64{ev(0): 25, ev(1): 35, ev(3): 7}
	for _, tc := range []struct {
		id         uint64
		start, end map[offsets.Partition]int64
	}{
		// The newest earlier batch wins over a later one and over stored.
		{2, map[offsets.Partition]int64{ev(0): 10, ev(1): 5, ev(3): 7}, map[offsets.Partition]int64{ev(0): 20, ev(1): 5, ev(3): 7}},
		{4, map[offsets.Partition]int64{ev(0): 20, ev(1): 35, ev(3): 7}, map[offsets.Partition]int64{ev(0): 25, ev(1): 35, ev(3): 7}},
		// Nothing earlier: the oldest later batch's From.
		{1, map[offsets.Partition]int64{ev(0): 0, ev(1): 0, ev(3): 7}, map[offsets.Partition]int64{ev(0): 10, ev(1): 5, ev(3): 7}},
	} {
		start, end, ok := offsets.BatchSpan(log, tc.id, stored)
		if !ok || !maps.Equal(start, tc.start) || !maps.Equal(end, tc.end) {
			t.Errorf("batch %d: start %v end %v ok %v; want %v %v", tc.id, start, end, ok, tc.start, tc.end)
		}
	}
	if _, _, ok := offsets.BatchSpan(log, 5, stored); ok {
		t.Error("batch 5 is not in the log")
	}
}
