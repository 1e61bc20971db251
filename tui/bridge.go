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
// back), a delivery holds more than busyEvents events; then the gap
// doubles with each such delivery up to busyGap, about five redraws a
// second, so drawing does not take CPU from reading. Key presses are not
// events: they redraw at once whatever the gap. The first quiet delivery
// brings the gap back to frameGap.
const (
	busyEvents = 4
	busyGap    = 200 * time.Millisecond
)

// nextGap is the gap after a delivery of n events made with gap.
func nextGap(gap time.Duration, n int) time.Duration {
	if n <= busyEvents {
		return frameGap
	}
	return min(max(2*gap, frameGap), busyGap)
}

// eventsMsg is a burst of stream events delivered as one message. closed
// is set when the channel was closed; the bridge is then not re-armed.
// gap is the frame gap it was collected with.
type eventsMsg struct {
	events []consumer.Event
	closed bool
	at     time.Time
	gap    time.Duration
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
		evs, closed, at := collect(b.ch, gap, last, b.now, b.after)
		return eventsMsg{events: evs, closed: closed, at: at, gap: gap}
	}
}

// next is the Cmd for the delivery after msg.
func (b *bridge) next(msg eventsMsg) tea.Cmd {
	return b.wait(msg.at, nextGap(msg.gap, len(msg.events)))
}

// collect blocks until ch yields an item or is closed, keeps collecting
// until gap has passed since last, then takes whatever else is ready
// without blocking. It returns the items, whether ch was closed, and the
// time of delivery.
func collect[T any](ch <-chan T, gap time.Duration, last time.Time, now func() time.Time, after func(time.Duration) <-chan time.Time) ([]T, bool, time.Time) {
	first, ok := <-ch
	if !ok {
		return nil, true, now()
	}
	items := []T{first}
	if d := gap - now().Sub(last); d > 0 {
		timer := after(d)
		for waiting := true; waiting; {
			select {
			case it, ok := <-ch:
				if !ok {
					return items, true, now()
				}
				items = append(items, it)
			case <-timer:
				waiting = false
			}
		}
	}
	for {
		select {
		case it, ok := <-ch:
			if !ok {
				return items, true, now()
			}
			items = append(items, it)
		default:
			return items, false, now()
		}
	}
}
