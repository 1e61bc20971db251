package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// common is what every pane and view shares: styles, keys, the time zone
// times are shown in.
type common struct {
	theme theme
	keys  keyMap
	loc   *time.Location
	// schemas decodes keys and values with a schema; nil without one.
	schemas *decoding
	// wheres keeps the compiled expression queries (where.go).
	wheres wheres
	// multiTopic is set for a stream of several topics: every record list
	// names partitions topic[p], whatever topics its records hold.
	multiTopic bool
	// The expression evaluations running off the screen's goroutine
	// (where.go): their last id, the jobs not answered yet, and the
	// commands of those not handed to bubbletea yet.
	jobSeq  uint64
	running []*whereJob
	queued  []tea.Cmd
}

// navKeys handles list movement for a cursor; it reports whether msg was
// one of them.
func (c *common) navKeys(k string, cur *cursor) bool {
	km := c.keys
	switch {
	case keyIs(k, km.Up):
		cur.move(-1)
	case keyIs(k, km.Down):
		cur.move(1)
	case keyIs(k, km.Top):
		cur.home()
	case keyIs(k, km.Bottom):
		cur.end()
	case keyIs(k, km.PageUp):
		cur.move(-max(1, cur.height-1))
	case keyIs(k, km.PageDown):
		cur.move(max(1, cur.height-1))
	default:
		return false
	}
	return true
}

// pressedKey is the keystroke msg presses, as keyIs compares it; ok is
// false when msg is no key press.
func pressedKey(msg tea.Msg) (ks string, ok bool) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return "", false
	}
	return k.String(), true
}

// keyIs reports whether keystroke k is one of b's keys.
func keyIs(k string, b key.Binding) bool {
	if !b.Enabled() {
		return false
	}
	for _, s := range b.Keys() {
		if s == k {
			return true
		}
	}
	return false
}

func (c *common) navHelp() []key.Binding {
	return []key.Binding{c.keys.Up, c.keys.Down, c.keys.Top, c.keys.Bottom, c.keys.PageUp, c.keys.PageDown}
}

// answered reports whether id is the request a view has in flight
// (*pending, 0 when none) and, if so, marks none in flight. An answer to a
// request the view has moved on from, or a second answer, is dropped.
func answered(pending *int, id int) bool {
	if id != *pending {
		return false
	}
	*pending = 0
	return true
}
