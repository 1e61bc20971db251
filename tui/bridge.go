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

// eventsMsg is a burst of stream events delivered as one message. closed
// is set when the channel was closed; the bridge is then not re-armed.
type eventsMsg struct {
	events []consumer.Event
	closed bool
	at     time.Time
}

// bridge turns the stream's event channel into messages. It is the only
// place that reads the channel while the program runs.
type bridge struct {
	ch  <-chan consumer.Event
	gap time.Duration
	// after is time.After; tests replace it to fire the gap by hand.
	after func(time.Duration) <-chan time.Time
	now   func() time.Time
}

func newBridge(ch <-chan consumer.Event) *bridge {
	return &bridge{ch: ch, gap: frameGap, after: time.After, now: time.Now}
}

// wait returns the Cmd that blocks for the next event, then keeps
// collecting until gap has passed since the previous delivery (last) and
// drains what else is ready, so a burst becomes one message. Update
// re-arms it with the at of the message it got.
func (b *bridge) wait(last time.Time) tea.Cmd {
	return func() tea.Msg {
		evs, closed, at := collect(b.ch, b.gap, last, b.now, b.after)
		return eventsMsg{events: evs, closed: closed, at: at}
	}
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
