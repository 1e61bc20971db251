package tui

import (
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
)

func TestBridgeCoalescesABurst(t *testing.T) {
	ch := make(chan consumer.Event, 10)
	for i := 0; i < 5; i++ {
		ch <- &consumer.Progress{}
	}
	b := newBridge(ch)
	msg := b.wait(time.Time{})().(eventsMsg) // long after the last delivery: no waiting
	if len(msg.events) != 5 || msg.closed {
		t.Fatalf("got %d events, closed %v; want one message with 5", len(msg.events), msg.closed)
	}
}

// Within the frame gap the bridge keeps collecting: events arriving
// before the gap's timer fires join the same message.
func TestBridgeHoldsDeliveriesToTheFrameRate(t *testing.T) {
	ch := make(chan consumer.Event) // unbuffered: every send is a handoff
	b := newBridge(ch)
	fire := make(chan time.Time)
	asked := make(chan time.Duration, 1)
	b.after = func(d time.Duration) <-chan time.Time { asked <- d; return fire }
	now := time.Unix(1000, 0)
	b.now = func() time.Time { return now }
	got := make(chan eventsMsg)
	go func() { got <- b.wait(now)().(eventsMsg) }() // the previous delivery was just now
	ch <- &consumer.Progress{}
	if d := <-asked; d != frameGap {
		t.Fatalf("waits %s, want %s", d, frameGap)
	}
	ch <- &consumer.Progress{}
	ch <- &consumer.Notice{}
	fire <- now
	msg := <-got
	if len(msg.events) != 3 {
		t.Fatalf("got %d events, want 3 in one message", len(msg.events))
	}
}

func TestBridgeReportsTheEnd(t *testing.T) {
	ch := make(chan consumer.Event, 2)
	ch <- &consumer.Ended{Reason: "closed"}
	close(ch)
	b := newBridge(ch)
	msg := b.wait(time.Time{})().(eventsMsg)
	if len(msg.events) != 1 || !msg.closed {
		t.Fatalf("got %+v", msg)
	}
	msg = b.wait(time.Time{})().(eventsMsg)
	if len(msg.events) != 0 || !msg.closed {
		t.Fatalf("got %+v", msg)
	}
}

// The model re-arms the bridge after a burst and stops after the end.
func TestModelRearmsBridge(t *testing.T) {
	m, _ := newTestModel(t, 100, 30, Options{})
	if _, cmd := m.Update(eventsMsg{events: []consumer.Event{started(1)}}); cmd == nil {
		t.Fatal("bridge not re-armed")
	}
	if _, cmd := m.Update(eventsMsg{closed: true}); cmd != nil {
		t.Fatal("bridge re-armed after the channel closed")
	}
	mustContain(t, screen(m), "ENDED")
}
