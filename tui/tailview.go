package tui

import (
	"fmt"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// tailView is t: every record as the stream reads it, newest at the
// bottom, scrolling while it follows. space pauses the view (not the
// stream: records read meanwhile go on into the ring and show when it
// follows again); moving up pauses it too, G follows again.
type tailView struct {
	*common
	ring   *tailRing
	list   *recordList
	paused bool
	width  int
	height int
}

func newTailView(c *common, ring *tailRing) *tailView {
	v := &tailView{common: c, ring: ring, list: newRecordList(c)}
	v.list.focused = true
	v.list.empty = "no record read since the tail view opened; records show here as the stream reads them"
	v.list.set(ring.recs, false)
	v.list.cur.end()
	return v
}

// added takes the ring after records were added and drop were dropped
// from its front.
func (v *tailView) added(drop int) {
	if v.paused {
		return
	}
	v.list.trimFront(drop)
	v.list.appended(v.ring.recs)
	v.list.cur.end()
}

// setPaused pauses the view on a copy of what it shows, or follows the
// ring again from its newest record.
func (v *tailView) setPaused(p bool) {
	if p == v.paused {
		return
	}
	v.paused = p
	if p {
		v.list.set(slices.Clone(v.list.all), true)
		return
	}
	v.list.set(v.ring.recs, false)
	v.list.cur.end()
}

func (v *tailView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.list.SetSize(w, max(3, h-1))
}

func (v *tailView) capturing() bool { return v.list.capturing() }

// paste types pasted text into the list's filter while it is edited.
func (v *tailView) paste(p tea.PasteMsg) tea.Cmd { return v.list.paste(p) }

func (v *tailView) title() string {
	s := "Tail · following"
	if v.paused {
		s = "Tail · paused, stream runs (space: follow)"
	}
	s += fmt.Sprintf(" · %d of %d records kept", len(v.list.all), v.ring.max)
	if v.ring.lost > 0 {
		s += fmt.Sprintf(" · %d not shown (the screen fell behind)", v.ring.lost)
	}
	if f := v.list.filterStatus(); f != "" {
		s += " · " + f
	}
	if ms := v.list.modeStatus(); ms != "" {
		s += " · " + ms
	}
	return s
}

func (v *tailView) Update(msg tea.Msg) tea.Cmd {
	ks, ok := pressedKey(msg)
	if !ok {
		return nil
	}
	if !v.list.capturing() {
		km := v.keys
		switch {
		case ks == "space":
			v.setPaused(!v.paused)
			return nil
		case keyIs(ks, km.Bottom):
			v.setPaused(false)
			return nil
		case keyIs(ks, km.Up), keyIs(ks, km.Top), keyIs(ks, km.PageUp):
			v.setPaused(true)
		}
	}
	return v.list.Update(msg)
}

func (v *tailView) View() string {
	// The long line when it fits, else the short one (80 columns).
	head := fmt.Sprintf("every record as read, before it is in a batch · %d read since the view opened", v.ring.total)
	if ansi.StringWidth(head) > v.width {
		head = fmt.Sprintf("records as read, before batches · %d read since opened", v.ring.total)
	}
	return v.theme.dim.Render(head) + "\n" + v.list.View()
}

func (v *tailView) back() bool { return v.list.back() }

var tailPause = key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause view"))

func (v *tailView) ShortHelp() []key.Binding {
	if v.list.capturing() {
		return v.list.ShortHelp()
	}
	p := tailPause
	if v.paused {
		p = withHelp(p, "follow")
	}
	return []key.Binding{p, v.keys.Enter, v.keys.Filter, v.keys.Wrap, v.keys.ValueOnly, v.keys.Back}
}

func (v *tailView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.navHelp(), {tailPause, v.keys.Enter, v.keys.Filter, v.keys.Copy, v.keys.Back}, v.list.modeHelp()}
}

// trimFront drops the first k records (the ring dropped them), keeping
// the selection on the same record.
func (l *recordList) trimFront(k int) {
	k = min(k, len(l.all))
	if k <= 0 {
		return
	}
	l.all = l.all[k:]
	l.dropped += k
	l.evaluated = max(0, l.evaluated-k)
	j := 0
	for _, i := range l.shown {
		if i >= k {
			l.shown[j] = i - k
			j++
		}
	}
	gone := len(l.shown) - j
	l.shown = l.shown[:j]
	l.cur.sel -= gone
	l.cur.top = max(0, l.cur.top-gone)
	l.wtop = max(0, l.wtop-gone)
	l.cur.setLen(len(l.shown))
}
