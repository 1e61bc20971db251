package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/consumer"
)

// frameGap is the shortest time between two deliveries of stream events:
// at most ~30 redraws a second come from the stream, however hot the
// topic, so key presses never queue behind redraws.
const frameGap = 33 * time.Millisecond

// While the stream outruns the screen (a catch-up cutting batches back to
// back), a delivery holds more than busyEvents events, or its events came
// faster than one per busyWithin since the delivery before (more than ~15
// a second: a catch-up cuts a batch every few tens of milliseconds, one or
// two per frame, and each frame cost as much CPU as the reading of a
// batch); then the gap doubles with each such delivery up to busyGap,
// about five redraws a second, so drawing does not take CPU from reading.
// Key presses are not events: they redraw at once whatever the gap. The
// first quiet delivery brings the gap back to frameGap.
//
// The pace is the delivery's events over the time since the delivery
// before, not the time its first event took to come: after a catch-up,
// live batches every 100 ms come the same few milliseconds after each
// 200 ms delivery, and measured that way they would look busy and keep
// the screen at busyGap (TestLiveBatchesRestoreTheFrameGapAfterACatchUp).
const (
	busyEvents = 4
	busyWithin = 2 * frameGap
	busyGap    = 200 * time.Millisecond
)

// nextGap is the gap after a delivery of n events made with gap, since
// after the delivery before it.
func nextGap(gap time.Duration, n int, since time.Duration) time.Duration {
	if n <= busyEvents && since >= time.Duration(n)*busyWithin {
		return frameGap
	}
	return min(max(2*gap, frameGap), busyGap)
}

// eventsMsg is a burst of stream events delivered as one message. closed
// is set when the channel was closed; the bridge is then not re-armed.
// gap is the frame gap it was collected with; since is how long after
// the delivery before it was made.
type eventsMsg struct {
	events []consumer.Event
	closed bool
	at     time.Time
	gap    time.Duration
	since  time.Duration
}

// bridge turns the stream's event channel into messages. It is the only
// place that reads the channel while the program runs.
type bridge struct {
	ch <-chan consumer.Event
	// after is time.After; tests replace it to fire the gap by hand.
	after func(time.Duration) <-chan time.Time
	now   func() time.Time
}

func newBridge(ch <-chan consumer.Event) *bridge {
	return &bridge{ch: ch, after: time.After, now: time.Now}
}

// wait returns the Cmd that blocks for the next event, then keeps
// collecting until gap has passed since the previous delivery (last) and
// drains what else is ready, so a burst becomes one message. Update
// re-arms it with the at of the message it got and next's answer.
func (b *bridge) wait(last time.Time, gap time.Duration) tea.Cmd {
	return func() tea.Msg {
		d := collect(b.ch, gap, last, b.now, b.after)
		since := time.Duration(len(d.items)) * busyWithin // the first delivery: nothing came before it
		if !last.IsZero() {
			since = d.at.Sub(last)
		}
		return eventsMsg{events: d.items, closed: d.closed, at: d.at, gap: gap, since: since}
	}
}

// next is the Cmd for the delivery after msg.
func (b *bridge) next(msg eventsMsg) tea.Cmd {
	return b.wait(msg.at, nextGap(msg.gap, len(msg.events), msg.since))
}

// delivery is what collect took: the items, whether ch was closed, and
// the time of delivery.
type delivery[T any] struct {
	items  []T
	closed bool
	at     time.Time
}

// collect blocks until ch yields an item or is closed, keeps collecting
// until gap has passed since last, then takes whatever else is ready
// without blocking.
func collect[T any](ch <-chan T, gap time.Duration, last time.Time, now func() time.Time, after func(time.Duration) <-chan time.Time) delivery[T] {
	var d delivery[T]
	// take adds an item to d, or marks d closed when ch is; it reports
	// whether d is complete.
	take := func(it T, ok bool) bool {
		if !ok {
			d.closed, d.at = true, now()
			return true
		}
		d.items = append(d.items, it)
		return false
	}
	if it, ok := <-ch; take(it, ok) {
		return d
	}
	if wait := gap - now().Sub(last); wait > 0 {
		timer := after(wait)
		for waiting := true; waiting; {
			select {
			case it, ok := <-ch:
				if take(it, ok) {
					return d
				}
			case <-timer:
				waiting = false
			}
		}
	}
	for {
		select {
		case it, ok := <-ch:
			if take(it, ok) {
				return d
			}
		default:
			d.at = now()
			return d
		}
	}
}
