package offsets

import (
	"fmt"
	"testing"
	"time"
)

func TestEvents(t *testing.T) {
	s := openTest(t)
	s.maxEvents = 3
	mustEnsure(t, s, "events")
	for i := range 6 {
		e := NewEvent(testNow.Add(time.Duration(i)*time.Second), CodeSeek, ev(int32(i)), fmt.Sprintf("seek %d", i))
		e.From, e.To = int64(i), int64(i+100)
		must(t, s.AddEvent("events", e))
	}
	set := NewEvent(testNow.Add(time.Hour), CodeSet, ev(0), "offsets set events:0=42")
	set.To = 42
	must(t, s.SetNext("events", map[Partition]int64{ev(0): 42}, set))
	got, err := s.Events("events", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !sameEvent(got[0], set) {
		t.Fatalf("Events = %+v, want 3 newest with the set event first", got)
	}
	want := NewEvent(testNow.Add(5*time.Second), CodeSeek, ev(5), "seek 5")
	want.From, want.To = 5, 105
	if !sameEvent(got[1], want) {
		t.Errorf("Events[1] = %+v, want %+v", got[1], want)
	}
	if got[2].Message != "seek 4" {
		t.Errorf("Events[2] = %+v, want seek 4", got[2])
	}
	info, _, _ := s.Stream("events")
	if info.Next[ev(0)] != 42 || !info.Updated.Equal(set.Time) {
		t.Errorf("after SetNext: %+v", info)
	}
	// No event when Code is empty; negative offsets are refused.
	must(t, s.SetNext("events", map[Partition]int64{ev(1): 7}, Event{}))
	if again, _ := s.Events("events", 10); len(again) != 3 || again[0].Code != CodeSet {
		t.Errorf("SetNext without an event recorded one: %+v", again[0])
	}
	if err := s.SetNext("events", map[Partition]int64{ev(1): -1}, Event{}); err == nil {
		t.Error("SetNext with a negative offset succeeded")
	}
}

// sameEvent compares events field by field, times by instant.
func sameEvent(a, b Event) bool {
	ta, tb := a.Time, b.Time
	a.Time, b.Time = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb)
}
