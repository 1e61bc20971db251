package offsets

import (
	"fmt"
	"strings"
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

// An event often quotes a broker's error, and a broker may name a host or
// topic of 32 KiB: the message kept is at most MaxEventMessage and a few
// bytes of the note, with its start and end, whether the event came from
// NewEvent or had its message set afterwards.
func TestEventMessageIsBoundedWithItsStartAndEnd(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "big")
	huge := "broker " + strings.Repeat("h", 40_000) + ".example:9092 refused: NOT_LEADER"
	made := NewEvent(testNow, CodeBrokerError, ev(0), huge)
	set := NewEvent(testNow.Add(time.Second), CodeBrokerError, ev(1), "short")
	set.Message = huge
	must(t, s.AddEvents("big", []Event{made, set}))
	got, err := s.Events("big", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d events, want 2", len(got))
	}
	for _, e := range append(got, made) {
		m := e.Message
		if len(m) > MaxEventMessage+40 || !strings.HasPrefix(m, "broker hhh") || !strings.HasSuffix(m, "refused: NOT_LEADER") || !strings.Contains(m, "bytes cut]") {
			t.Errorf("message of %d bytes: %.80q … %.80q", len(m), m, m[max(0, len(m)-80):])
		}
	}
}
