package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// The search view (/ on the main screen) finds records by a key or value
// substring in everything the screen keeps: the samples of every batch in
// the history and the tail ring. f searches on: it reads ranges from the
// broker (a replay that keeps only the matches) into the same list, for
// what the samples miss.

// Bounds of a broker search's matches (docs/design.md §2.6); past them matches are
// counted, not kept.
const (
	maxSearchMatches = 10_000
	maxSearchBytes   = 64 << 20
)

// matchKey identifies a record across sources, so a record found in the
// samples and in the tail, or again on the broker, shows once.
type matchKey struct {
	offsets.Partition
	offset int64
}

// findView is the search: the query, the matches newest first, and the
// state of a broker search.
type findView struct {
	*common
	input   textinput.Model
	editing bool
	list    *recordList
	query   string
	seen    map[matchKey]bool
	history int // matches in what the screen keeps
	kept    int // records searched in what the screen keeps
	width   int
	height  int

	// The broker search (f), if one ran.
	broker    *brokerSearch
	searchAll func() []*record
	// job is the evaluation of an expression query over what the screen
	// keeps, in flight (nil: none; where.go).
	job *whereJob
}

// brokerSearch is the state of f: what it reads and what it found.
type brokerSearch struct {
	id      int
	query   string
	ranges  []string
	tasks   []ReplayTask
	pos     []int64
	matches int
	bytes   int
	notKept int
	read    int64
	started time.Time
	took    time.Duration
	done    bool
	stopped bool
	err     error
	cancel  func()
}

func newFindView(c *common, searchAll func() []*record) *findView {
	in := newLineInput("search> ", "key or value substring, any case")
	in.Focus()
	v := &findView{common: c, input: in, editing: true, list: newRecordList(c), searchAll: searchAll, seen: map[matchKey]bool{}}
	v.list.focused = true
	v.list.empty = "type to search the samples of every batch kept and the tail view's records"
	return v
}

// run searches what the screen keeps for q; matches of a broker search
// for the same query stay.
func (v *findView) run(q string) {
	v.query = q
	v.job.stop()
	v.job = nil
	all := v.searchAll()
	v.kept = len(all)
	switch {
	case q == "":
		v.show(nil)
	case isExpr(q) && v.queryProblem(q) == "":
		// Evaluated off the screen's goroutine; the list says
		// "filtering…" meanwhile.
		v.show(nil)
		var j *whereJob
		j = v.evaluate(q, all, func(hits []int) {
			if v.job != j {
				return // another query since
			}
			v.job = nil
			out := make([]*record, len(hits))
			for i, h := range hits {
				out[i] = j.recs[h]
			}
			newestFirst(out)
			v.show(out)
		})
		v.job = j
		v.list.empty = "filtering…"
	case isExpr(q):
		v.show(nil) // does not compile: matches nothing
	default:
		var out []*record
		for _, r := range all {
			if v.matches(r, q) {
				out = append(out, r)
			}
		}
		newestFirst(out)
		v.show(out)
	}
}

// show lists the matches in what the screen keeps, once each.
func (v *findView) show(recs []*record) {
	q := v.query
	clear(v.seen)
	var keep []*record
	for _, r := range recs {
		k := matchKey{r.Partition, r.Offset}
		if !v.seen[k] {
			v.seen[k] = true
			keep = append(keep, r)
		}
	}
	v.history = len(keep)
	v.list.mark = q // every record in the list matches: mark, do not filter
	v.list.set(keep, false)
	if q != "" {
		v.list.empty = "no record kept on screen matches; f searches ranges on the broker"
	}
}

// addBroker appends matches read from the broker that are not in the list
// yet.
func (v *findView) addBroker(recs []*record) {
	add := v.list.all
	grew := false
	for _, r := range recs {
		k := matchKey{r.Partition, r.Offset}
		if v.seen[k] {
			continue
		}
		v.seen[k] = true
		add = append(add, r)
		grew = true
	}
	if grew {
		v.list.appended(add)
	}
}

func (v *findView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.input.SetWidth(max(10, w-len(v.input.Prompt)-2))
	v.list.SetSize(w, max(3, h-v.headLines()))
}

func (v *findView) headLines() int {
	if v.broker != nil {
		return 3
	}
	return 2
}

func (v *findView) capturing() bool { return v.editing || v.list.capturing() }

func (v *findView) title() string {
	if v.query == "" {
		return "Search"
	}
	if p := v.queryProblem(v.query); p != "" {
		return krecord.String(fmt.Sprintf("Search \"%s\": %s", v.query, p))
	}
	s := fmt.Sprintf("Search \"%s\" · %d in %d records kept", v.query, v.history, v.kept)
	if v.job != nil {
		s = fmt.Sprintf("Search \"%s\" · filtering %d records kept…", v.query, v.kept)
	}
	if b := v.broker; b != nil && b.query == v.query {
		s += fmt.Sprintf(" · %d more on the broker", b.matches)
	}
	if ms := v.list.modeStatus(); ms != "" {
		s += " · " + ms
	}
	return krecord.String(s)
}

// paste types pasted text into the search field, or the list's filter.
func (v *findView) paste(p tea.PasteMsg) tea.Cmd {
	if !v.editing {
		return v.list.paste(p)
	}
	cmd := typeInto(&v.input, p)
	if q := v.input.Value(); q != v.query {
		v.run(q)
	}
	return cmd
}

func (v *findView) Update(msg tea.Msg) tea.Cmd {
	ks, ok := pressedKey(msg)
	if !ok {
		return nil
	}
	if v.editing {
		switch ks {
		case "enter":
			v.editing = false
			v.input.Blur()
			return nil
		case "esc":
			if v.input.Value() == "" {
				return closeView
			}
			v.editing = false
			v.input.Blur()
			return nil
		}
		cmd := typeInto(&v.input, msg)
		if q := v.input.Value(); q != v.query {
			v.run(q)
		}
		return cmd
	}
	switch {
	case keyIs(ks, v.keys.Filter):
		v.editing = true
		return v.input.Focus()
	case keyIs(ks, v.keys.NextMatch):
		v.list.cur.move(1)
		return nil
	case keyIs(ks, v.keys.PrevMatch):
		v.list.cur.move(-1)
		return nil
	}
	return v.list.Update(msg)
}

// back stops a broker search that runs; the matches stay.
func (v *findView) back() bool {
	if b := v.broker; b != nil && !b.done {
		b.done, b.stopped = true, true
		b.cancel()
		return true
	}
	return false
}

func (v *findView) View() string {
	in := v.input.View()
	if !v.editing {
		in = v.theme.info.Render("search> ") + krecord.String(v.query) + v.theme.dim.Render("   / edits · enter: record · ] [: next, previous · f: search the broker")
	}
	lines := []string{in}
	if b := v.broker; b != nil {
		lines = append(lines, v.brokerLine(b))
	}
	lines = append(lines, "")
	return strings.Join(lines, "\n") + "\n" + v.list.View()
}

// brokerLine is the broker search's progress: how far, what it found.
func (v *findView) brokerLine(b *brokerSearch) string {
	var span, read int64
	for i, t := range b.tasks {
		span += t.Range.Span()
		read += min(b.pos[i], t.Range.Until) - t.Range.From
	}
	pct := 100.0
	if span > 0 && !(b.done && b.err == nil && !b.stopped) {
		pct = float64(read) * 100 / float64(span)
	}
	s := fmt.Sprintf("broker %s: %3.0f%% · %s records read · %d matches", ansi.Truncate(krecord.String(strings.Join(b.ranges, " ")), max(10, v.width/3), "…"),
		pct, strconv.FormatInt(b.read, 10), b.matches)
	if b.query != v.query {
		s += fmt.Sprintf(" for %q", b.query)
	}
	if b.notKept > 0 {
		s += fmt.Sprintf(" (%d not kept: narrow the search)", b.notKept)
	}
	switch {
	case b.err != nil:
		return v.theme.bad.Render(s + " · stopped: " + krecord.String(b.err.Error()))
	case b.stopped:
		return v.theme.warn.Render(s + " · stopped (esc)")
	case b.done:
		return v.theme.ok.Render(s + " · done in " + formatDuration(b.took))
	}
	return v.theme.info.Render(s + " · reading… (esc stops)")
}

var searchEdit = key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "edit search"))

func (v *findView) ShortHelp() []key.Binding {
	if v.editing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "to the matches")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		}
	}
	return []key.Binding{v.keys.Enter, v.keys.BrokerSearch, v.keys.NextMatch, v.keys.PrevMatch, searchEdit, v.keys.Back}
}

func (v *findView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.navHelp(), {v.keys.Enter, v.keys.BrokerSearch, v.keys.NextMatch, v.keys.PrevMatch, searchEdit, v.keys.Copy, v.keys.Back}, v.list.modeHelp()}
}

// searchKept returns the records the screen keeps (the samples of every
// batch kept, the tail ring), for the search to look in.
func (m *Model) searchKept() []*record {
	var out []*record
	for i := 0; i < m.hist.len(); i++ {
		out = append(out, m.hist.newest(i).samples...)
	}
	if m.tailRing != nil {
		out = append(out, m.tailRing.recs...)
	}
	return out
}

// newestFirst sorts matches newest first by timestamp; samples (which
// name their batch) before the tail's copy of the same record.
func newestFirst(out []*record) {
	slices.SortStableFunc(out, func(a, b *record) int {
		if c := b.Timestamp.Compare(a.Timestamp); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Partition.Partition, b.Partition.Partition); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Offset, a.Offset); c != 0 {
			return c
		}
		return cmp.Compare(b.Batch, a.Batch)
	})
}
