package tui

import (
	"slices"
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
	msg := b.wait(time.Time{}, frameGap)().(eventsMsg) // long after the last delivery: no waiting
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
	go func() { got <- b.wait(now, frameGap)().(eventsMsg) }() // the previous delivery was just now
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
	msg := b.wait(time.Time{}, frameGap)().(eventsMsg)
	if len(msg.events) != 1 || !msg.closed {
		t.Fatalf("got %+v", msg)
	}
	msg = b.wait(time.Time{}, frameGap)().(eventsMsg)
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

// A catch-up's back-to-back batches slow the stream's redraws down to
// busyGap; the first quiet delivery restores frameGap.
func TestBridgeBacksOffWhileTheStreamOutrunsTheScreen(t *testing.T) {
	gap := frameGap
	var seen []time.Duration
	for i := 0; i < 5; i++ {
		gap = nextGap(gap, busyEvents+1, time.Second)
		seen = append(seen, gap)
	}
	want := []time.Duration{2 * frameGap, 4 * frameGap, busyGap, busyGap, busyGap}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("gaps after busy deliveries: %v, want %v", seen, want)
		}
	}
	if g := nextGap(busyGap, busyEvents, time.Second); g != frameGap {
		t.Fatalf("gap after a quiet delivery: %s, want %s", g, frameGap)
	}
}

// A catch-up cuts a batch every few tens of milliseconds: one or two
// events per frame, never a burst, and the screen drew ~30 frames a
// second, each costing the reading as much CPU as a batch. Events that
// come faster than busyWithin back off as a burst does; a delivery that
// waited longer restores frameGap.
func TestBridgeBacksOffWhileEventsComeFasterThanFrames(t *testing.T) {
	ch := make(chan consumer.Event, 1)
	b := newBridge(ch)
	last := time.Unix(1000, 0)
	clock := last
	b.now = func() time.Time { return clock }
	b.after = func(time.Duration) <-chan time.Time {
		c := make(chan time.Time, 1)
		c <- clock
		return c
	}
	gap := frameGap
	var seen []time.Duration
	for i := 0; i < 4; i++ {
		clock = clock.Add(20 * time.Millisecond) // the next batch, one event
		ch <- &consumer.Progress{}
		msg := b.wait(last, gap)().(eventsMsg)
		if len(msg.events) != 1 || msg.since != 20*time.Millisecond {
			t.Fatalf("delivery %d: %d events, %s after the one before; want 1 and 20ms", i, len(msg.events), msg.since)
		}
		gap = nextGap(msg.gap, len(msg.events), msg.since)
		seen = append(seen, gap)
		last = msg.at
	}
	want := []time.Duration{2 * frameGap, 4 * frameGap, busyGap, busyGap}
	if !slices.Equal(seen, want) {
		t.Fatalf("gaps while one event comes every 20ms: %v, want %v", seen, want)
	}
	clock = clock.Add(time.Second) // live: the next batch after the interval
	ch <- &consumer.Progress{}
	msg := b.wait(last, gap)().(eventsMsg)
	if g := nextGap(msg.gap, len(msg.events), msg.since); g != frameGap {
		t.Fatalf("gap after a delivery %s after the one before: %s, want %s", msg.since, g, frameGap)
	}
	ch <- &consumer.Progress{}
	first := b.wait(time.Time{}, frameGap)().(eventsMsg)
	if g := nextGap(first.gap, len(first.events), first.since); g != frameGap {
		t.Fatalf("gap after the first delivery: %s, want %s", g, frameGap)
	}
}

// The model re-arms the bridge with the gap the last delivery calls for.
func TestModelRearmsWithTheBusyGap(t *testing.T) {
	ch := make(chan consumer.Event, 1)
	m, _ := newTestModel(t, 100, 30, Options{})
	m.bridge = newBridge(ch)
	fire := make(chan time.Time, 1)
	asked := make(chan time.Duration, 1)
	m.bridge.after = func(d time.Duration) <-chan time.Time { asked <- d; return fire }
	now := time.Unix(1000, 0)
	m.bridge.now = func() time.Time { return now }
	busy := make([]consumer.Event, busyEvents+1)
	for i := range busy {
		busy[i] = &consumer.Progress{}
	}
	_, cmd := m.Update(eventsMsg{events: busy, at: now, gap: frameGap})
	ch <- &consumer.Progress{}
	fire <- now
	msg := cmd().(eventsMsg)
	if d := <-asked; d != 2*frameGap || msg.gap != 2*frameGap {
		t.Fatalf("after a busy delivery the bridge waited %s (message gap %s), want %s", d, msg.gap, 2*frameGap)
	}
}

// After a catch-up left the gap at busyGap, live batches every 100 or
// 200 ms come the same few milliseconds after each delivery: measured from
// the delivery, they would look busy, and the screen would stay at 5
// frames a second, a batch waiting up to 180 ms for its frame. The pace
// is measured from event to event: 10 events a second are not busy.
func TestLiveBatchesRestoreTheFrameGapAfterACatchUp(t *testing.T) {
	for _, period := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(period.String(), func(t *testing.T) {
			ch := make(chan consumer.Event, 64)
			b := newBridge(ch)
			clock := time.Unix(1000, 0)
			b.now = func() time.Time { return clock }
			next := clock.Add(20 * time.Millisecond) // the first live batch
			b.after = func(d time.Duration) <-chan time.Time {
				until := clock.Add(d)
				for !next.After(until) {
					ch <- &consumer.Progress{}
					next = next.Add(period)
				}
				clock = until
				c := make(chan time.Time, 1)
				c <- clock
				return c
			}
			last, gap := clock, busyGap // the catch-up's last delivery
			var gaps []time.Duration
			var late time.Duration
			for i := 0; i < 10; i++ {
				came := clock
				if next.After(clock) {
					clock = next
					came = clock
					ch <- &consumer.Progress{}
					next = next.Add(period)
				}
				msg := b.wait(last, gap)().(eventsMsg)
				late = max(late, msg.at.Sub(came))
				gap = nextGap(msg.gap, len(msg.events), msg.since)
				last = msg.at
				gaps = append(gaps, gap)
			}
			if gap != frameGap {
				t.Errorf("gaps over 10 deliveries of live batches every %s: %v; want back at %s (a batch waited up to %s for its frame)", period, gaps, frameGap, late)
			}
		})
	}
}
