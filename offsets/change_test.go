package offsets

import (
	"strings"
	"testing"
	"time"
)

func TestChangeEvent(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	before := map[Partition]int64{{"events", 0}: 5}

	// The worked example of the doc comment: one topic, two partitions.
	e := ChangeEvent(now, CodeSet, before, map[Partition]int64{{"events", 1}: 120, {"events", 0}: 80}, "offsets set x")
	if e.Code != CodeSet || !e.Time.Equal(now) || e.Topic != "events" || e.Partition != -1 || e.From != -1 || e.To != -1 {
		t.Errorf("two partitions: %+v", e)
	}
	if want := "offsets set x: events[0] 5→80, events[1] -→120"; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}

	// One partition: the event is at it and carries the move.
	e = ChangeEvent(now, CodeImport, before, map[Partition]int64{{"events", 0}: 80}, "imported from f")
	if e.Topic != "events" || e.Partition != 0 || e.From != 5 || e.To != 80 {
		t.Errorf("one partition: %+v", e)
	}
	e = ChangeEvent(now, CodeImport, before, map[Partition]int64{{"new", 3}: 7}, "imported from f")
	if e.Partition != 3 || e.From != -1 || e.To != 7 {
		t.Errorf("one partition without a stored offset: %+v", e)
	}

	// Two topics: at no topic.
	e = ChangeEvent(now, CodeSet, nil, map[Partition]int64{{"a", 0}: 1, {"b", 0}: 1}, "w")
	if e.Topic != "" || e.Partition != -1 {
		t.Errorf("two topics: %+v", e)
	}

	// More than 20 moves: the list is cut and says how many more.
	next := map[Partition]int64{}
	for p := range int32(23) {
		next[Partition{"t", p}] = int64(p)
	}
	e = ChangeEvent(now, CodeSet, nil, next, "w")
	if !strings.HasSuffix(e.Message, "t[19] -→19 and 3 more") || strings.Count(e.Message, "→") != 20 {
		t.Errorf("long list: %q", e.Message)
	}
}
