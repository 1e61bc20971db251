package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/filter"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// openFind is / on the main screen: the search view over what the screen
// keeps.
func (m *Model) openFind() tea.Cmd {
	if m.findView != nil {
		return nil
	}
	m.findView = newFindView(m.c, m.searchKept)
	m.pushView(m.findView)
	return m.findView.input.Focus()
}

// openBrokerSearch is f in the search view: the replay form, titled for a
// search, prefilled with the ranges the screen's history covers.
func (m *Model) openBrokerSearch() tea.Cmd {
	v := m.findView
	switch {
	case m.opts.Replayer == nil:
		m.setStatus("searching on the broker needs replay, which is not available in this session", m.c.theme.dim)
		return nil
	case v.query == "":
		m.setStatus("type a search first (/), then f searches ranges on the broker for it", m.c.theme.dim)
		return nil
	case v.broker != nil && !v.broker.done:
		m.setStatus("a broker search is running: esc stops it", m.c.theme.dim)
		return nil
	}
	f := newReplayForm(m.c, m.searchRanges(), &m.nextID, true)
	f.search = v.query
	m.pushView(f)
	return nil
}

// searchRanges are the ranges the kept batches cover, per partition from
// the oldest kept batch's from to the partition's next offset; a topic of
// more than 8 partitions becomes TOPIC:*:@TIME-latest from the oldest kept
// batch's time. With no batch kept: the last hour of every topic.
func (m *Model) searchRanges() string {
	type span struct{ from, until int64 }
	spans := map[string]map[int32]*span{}
	var topics []string
	var oldest time.Time
	for i := m.hist.len() - 1; i >= 0; i-- {
		e := m.hist.newest(i)
		if oldest.IsZero() || e.Time.Before(oldest) {
			oldest = e.Time
		}
		for _, r := range e.Ranges {
			ps := spans[r.Topic]
			if ps == nil {
				ps = map[int32]*span{}
				spans[r.Topic] = ps
				topics = append(topics, r.Topic)
			}
			if s := ps[r.Partition.Partition]; s == nil {
				ps[r.Partition.Partition] = &span{r.From, r.Until}
			} else {
				s.from, s.until = min(s.from, r.From), max(s.until, r.Until)
			}
		}
	}
	if len(topics) == 0 {
		var out []string
		for _, t := range m.stream.topics {
			out = append(out, t+":*:@-1h-latest")
		}
		return strings.Join(out, " ")
	}
	var out []string
	for _, t := range topics {
		ps := spans[t]
		if len(ps) > 8 {
			out = append(out, fmt.Sprintf("%s:*:@%s-latest", t, oldest.UTC().Format(time.RFC3339)))
			continue
		}
		for p := int32(0); len(ps) > 0; p++ {
			s, ok := ps[p]
			if !ok {
				continue
			}
			delete(ps, p)
			until := s.until
			if st, ok := m.parts.status(offsets.Partition{Topic: t, Partition: p}); ok {
				until = max(until, st.NextOffset)
			}
			out = append(out, fmt.Sprintf("%s:%d:%d-%d", t, p, s.from, until))
		}
	}
	return strings.Join(out, " ")
}

// searchItem is what the broker search's reader hands the screen: one
// chunk's matches and position, or the end.
type searchItem struct {
	task    int
	next    int64
	scanned int
	recs    []*record
	done    bool
	err     error
}

// searchMsg is a burst of broker search output.
type searchMsg struct {
	id     int
	items  []searchItem
	closed bool
	at     time.Time
	ch     <-chan searchItem
}

// startBrokerSearch reads the planned tasks, keeping only the records that
// match the query, into the search view.
func (m *Model) startBrokerSearch(ranges []string, tasks []ReplayTask, q string) tea.Cmd {
	v := m.findView
	if v == nil {
		return nil
	}
	if p := m.c.queryProblem(q); p != "" {
		m.setStatus(krecord.String("the search is not an expression kbatch can run: "+p), m.c.theme.warn)
		return nil
	}
	m.nextID++
	ctx, cancel := context.WithCancel(m.ctx)
	b := &brokerSearch{id: m.nextID, query: q, ranges: ranges, tasks: tasks, pos: make([]int64, len(tasks)), started: m.now(), cancel: cancel}
	for i, t := range tasks {
		b.pos[i] = t.Range.From
	}
	v.broker = b
	m.layout()
	ch := make(chan searchItem, 64)
	r := m.opts.Replayer
	// Without a decoder the reader keeps only records whose bytes match
	// (what the screen's matcher does then); with one, what a record
	// matches depends on its decoded text, which the screen's goroutine
	// owns: the reader hands over every record and searchOutput matches.
	raw := m.c.schemas == nil
	keep := func(x *krecord.Record) bool { return !raw || containsFold(x.Key, q) || containsFold(x.Value, q) }
	if isExpr(q) {
		// An expression is evaluated here, off the screen's goroutine, on
		// the reader's own copy; with a decoder, a record whose schema is
		// still on its way goes to searchOutput to be matched again.
		prog, _ := m.c.program(q)
		var dec Decoder
		if m.c.schemas != nil {
			dec = m.c.schemas.dec
		}
		keep = func(x *krecord.Record) bool {
			var live *liveDecoder
			var fd filter.Decoder
			if dec != nil {
				live = &liveDecoder{dec: dec}
				fd = live
			}
			ok, err := prog.Match(x, fd)
			return ok && err == nil || live != nil && live.pending
		}
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		defer close(ch)
		err := r.Read(ctx, tasks, func(c ReplayChunk) error {
			it := searchItem{task: c.Task, next: c.Next, scanned: len(c.Records)}
			for _, x := range c.Records {
				if keep(x) {
					it.recs = append(it.recs, newRecord(x, 0))
				}
			}
			select {
			case ch <- it:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		select {
		case ch <- searchItem{done: true, err: err}:
		case <-ctx.Done():
		}
	}()
	return m.waitSearch(b.id, ch, m.now())
}

func (m *Model) waitSearch(id int, ch <-chan searchItem, last time.Time) tea.Cmd {
	b := m.bridge
	return func() tea.Msg {
		d := collect(ch, frameGap, last, b.now, b.after)
		return searchMsg{id: id, items: d.items, closed: d.closed, at: d.at, ch: ch}
	}
}

// searchOutput takes a burst of the broker search into the search view,
// keeping at most maxSearchMatches matches and maxSearchBytes.
func (m *Model) searchOutput(msg searchMsg) tea.Cmd {
	v := m.findView
	if v == nil || v.broker == nil || v.broker.id != msg.id || v.broker.stopped {
		return nil
	}
	b := v.broker
	var add []*record
	for _, it := range msg.items {
		if it.done {
			b.done, b.err, b.took = true, it.err, msg.at.Sub(b.started)
			continue
		}
		b.pos[it.task] = max(b.pos[it.task], it.next)
		b.read += int64(it.scanned)
		for _, r := range it.recs {
			if !m.c.matches(r, b.query) {
				continue
			}
			b.matches++
			if b.matches > maxSearchMatches || b.bytes+r.size() > maxSearchBytes {
				b.notKept++
				continue
			}
			b.bytes += r.size()
			add = append(add, r)
		}
	}
	if b.query == v.query {
		v.addBroker(add)
	}
	if msg.closed {
		return nil
	}
	return m.waitSearch(msg.id, msg.ch, msg.at)
}

// findClosed stops the broker search of a search view being closed.
func (m *Model) findClosed() {
	if b := m.findView.broker; b != nil && b.cancel != nil {
		b.cancel()
	}
	m.findView = nil
}

// nextMatch is ] and [ in a record's detail opened from the search: the
// next or previous match's detail in its place.
func (m *Model) nextMatch(d int) bool {
	n := len(m.views)
	if n < 2 || m.findView == nil || m.views[n-2] != view(m.findView) {
		return false
	}
	if _, ok := m.views[n-1].(*recordView); !ok {
		return false
	}
	l := m.findView.list
	before := l.cur.sel
	l.cur.move(d)
	if l.cur.sel == before {
		m.setStatus("no more matches that way", m.c.theme.dim)
		return true
	}
	m.views = m.views[:n-1]
	m.openRecord(l.selected())
	return true
}
