package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// Replay memory bounds: records past them are counted, not kept, and `w`
// reads the ranges again to write everything.
const (
	maxReplayRecords = 100_000
	maxReplayBytes   = 256 << 20
)

// replayItem is what the reading goroutine hands the view.
type replayItem struct {
	chunk ReplayChunk
	done  bool
	err   error
}

// replayMsg is a burst of replay output for the replay with id.
type replayMsg struct {
	id     int
	items  []replayItem
	closed bool
	at     time.Time
	ch     <-chan replayItem // re-armed on this channel
}

// writeRequestMsg asks the root to write the replay's records to path.
type writeRequestMsg struct {
	id   int
	path string
}

// writeDoneMsg reports a finished write.
type writeDoneMsg struct {
	id      int
	path    string
	records int
	err     error
}

// replayView shows a running or finished replay: a progress bar, what is
// read and missing, and the records.
type replayView struct {
	*common
	id      int
	ranges  []string
	tasks   []ReplayTask
	pos     []int64
	count   []int // records read per task
	list    *recordList
	recs    []*record // kept records in task order, then offset order
	ends    []int     // ends[i]: where task i's records end in recs
	kept    int       // bytes kept
	total   int       // records read
	bytes   int64
	dropped int // records read but not kept (memory bound)
	cut     bool
	started time.Time
	took    time.Duration
	done    bool
	err     error
	bar     progress.Model
	width   int
	height  int

	prompt  textinput.Model
	writing bool // the path prompt is open
	wpend   int
	wmsg    string
	nextID  *int
}

func newReplayView(c *common, id int, ranges []string, tasks []ReplayTask, started time.Time, nextID *int) *replayView {
	v := &replayView{common: c, id: id, ranges: ranges, tasks: tasks, pos: make([]int64, len(tasks)),
		count: make([]int, len(tasks)), ends: make([]int, len(tasks)),
		list: newRecordList(c), started: started, nextID: nextID}
	for i, t := range tasks {
		v.pos[i] = t.Range.From
	}
	v.list.focused = true
	v.list.empty = "reading…"
	v.bar = progress.New(progress.WithFillCharacters('█', '░'), progress.WithColors(lipgloss.Color("4")), progress.WithoutPercentage())
	v.prompt = newLineInput("write to> ", "")
	return v
}

// add takes a burst of output; now is the time it arrived. Records are
// kept in the order of the ranges, whatever order the partitions were read
// in, so the list reads like the ranges above it.
func (v *replayView) add(items []replayItem, now time.Time) {
	inserted := false
	for _, it := range items {
		if it.done {
			v.done, v.err, v.took = true, it.err, now.Sub(v.started)
			v.list.empty = "no records in these ranges"
			continue
		}
		c := it.chunk
		task := -1
		if c.Task >= 0 && c.Task < len(v.pos) {
			task = c.Task
			v.pos[task] = max(v.pos[task], c.Next)
			v.count[task] += len(c.Records)
		}
		var add []*record
		for _, m := range c.Records {
			v.total++
			v.bytes += m.Bytes() // as a batch's bytes count

			if len(v.recs)+len(add) >= maxReplayRecords || v.kept >= maxReplayBytes {
				v.dropped++
				continue
			}
			r := newRecord(m, 0)
			if !r.complete() {
				v.cut = true
			}
			v.kept += r.size()
			add = append(add, r)
		}
		if task < 0 || len(add) == 0 {
			v.recs = append(v.recs, add...)
			continue
		}
		at := v.ends[task]
		inserted = inserted || at < len(v.recs)
		v.recs = slices.Insert(v.recs, at, add...)
		for j := task; j < len(v.ends); j++ {
			v.ends[j] = max(v.ends[j], at) + len(add)
		}
	}
	if inserted {
		v.list.set(v.recs, true)
		return
	}
	v.list.appended(v.recs)
}

// fraction is the share of offsets read over all tasks.
func (v *replayView) fraction() float64 {
	if v.done && v.err == nil {
		return 1
	}
	var span, read int64
	for i, t := range v.tasks {
		span += t.Range.Span()
		read += min(v.pos[i], t.Range.Until) - t.Range.From
	}
	if span == 0 {
		return 0
	}
	return float64(read) / float64(span)
}

func (v *replayView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.bar.SetWidth(max(10, min(40, w/3)))
	v.prompt.SetWidth(max(10, w-14))
	v.list.SetSize(w, max(3, h-v.headLines()))
}

// taskRows is how many lines the list of ranges may take: a quarter of
// the view, at least 3; more ranges are summed up in the last line.
func (v *replayView) taskRows() int { return max(3, v.height/4) }

func (v *replayView) headLines() int {
	n := 2 + min(len(v.tasks), v.taskRows())
	if v.writing || v.wmsg != "" || v.wpend != 0 {
		n++
	}
	if v.writing && v.wmsg != "" {
		n++ // the prompt and, beneath, why the name was refused
	}
	return n
}

func (v *replayView) capturing() bool { return v.writing || v.list.capturing() }

func (v *replayView) title() string {
	s := "Replay " + krecord.String(strings.Join(v.ranges, " "))
	if ms := v.list.modeStatus(); ms != "" {
		s += " · " + ms
	}
	return s
}

func (v *replayView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case writeDoneMsg:
		if !answered(&v.wpend, msg.id) {
			return nil
		}
		if msg.err != nil {
			v.wmsg = v.theme.bad.Render("write failed: " + krecord.String(msg.err.Error()))
		} else {
			v.wmsg = v.theme.ok.Render(fmt.Sprintf("wrote %s to %s", plural(int64(msg.records), "record", "records"), krecord.String(msg.path)))
		}
		return nil
	case tea.KeyPressMsg:
		if v.writing {
			return v.promptKey(msg)
		}
		if !v.list.capturing() && keyIs(msg.String(), v.keys.Write) {
			return v.openPrompt()
		}
		return v.list.Update(msg)
	}
	return nil
}

// paste types pasted text into the file name, or the list's filter.
func (v *replayView) paste(p tea.PasteMsg) tea.Cmd {
	if !v.writing {
		return v.list.paste(p)
	}
	return typeInto(&v.prompt, p)
}

func (v *replayView) openPrompt() tea.Cmd {
	if !v.done {
		v.wmsg = v.theme.warn.Render("wait for the replay to finish, then press w")
		return nil
	}
	if v.wpend != 0 {
		return nil
	}
	v.writing = true
	v.wmsg = ""
	v.prompt.SetValue("replay-" + v.started.In(v.loc).Format("20060102-150405") + ".jsonl")
	v.prompt.CursorEnd()
	v.SetSize(v.width, v.height)
	return v.prompt.Focus()
}

func (v *replayView) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		v.writing, v.wmsg = false, ""
		v.prompt.Blur()
		v.SetSize(v.width, v.height)
		return nil
	case "enter":
		path := expandHome(strings.TrimSpace(v.prompt.Value()))
		if path == "" {
			v.wmsg = v.theme.bad.Render("type the name of a file to write the records to (esc: back)")
			v.SetSize(v.width, v.height)
			return nil
		}
		if err := checkWritable(path); err != nil {
			// The prompt stays open with the name, to be changed.
			v.wmsg = v.theme.bad.Render(krecord.String(err.Error()))
			v.SetSize(v.width, v.height)
			return nil
		}
		v.writing = false
		v.prompt.Blur()
		*v.nextID++
		v.wpend = *v.nextID
		v.wmsg = ""
		v.SetSize(v.width, v.height)
		req := writeRequestMsg{id: v.wpend, path: path}
		return func() tea.Msg { return req }
	}
	return typeInto(&v.prompt, msg)
}

// complete reports whether the kept records are all the replay read, in
// full, so a write can use them instead of reading again.
func (v *replayView) complete() bool { return v.done && v.err == nil && v.dropped == 0 && !v.cut }

func (v *replayView) taskLines() []string {
	var out []string
	for i, t := range v.tasks {
		s := fmt.Sprintf("%s %d → %d · %s", krecord.String(t.Range.Partition.String()), t.Range.From, t.Range.Until,
			plural(int64(v.count[i]), "record", "records"))
		if t.Capped {
			s += " (capped at the end of the log)"
		}
		if m := t.Missing; m.Span() > 0 {
			s += v.theme.warn.Render(fmt.Sprintf("; %d → %d missing (below the log start)", m.From, m.Until))
		}
		out = append(out, s)
	}
	return out
}

func (v *replayView) View() string {
	state := v.theme.info.Render("reading…")
	switch {
	case v.done && v.err != nil:
		state = v.theme.bad.Render("stopped: " + krecord.String(v.err.Error()))
	case v.done:
		state = v.theme.ok.Render("done in " + formatDuration(v.took))
	}
	summary := fmt.Sprintf("%3.0f%%  %s · %s · %s", v.fraction()*100, plural(int64(v.total), "record", "records"), formatBytes(v.bytes), state)
	if v.dropped > 0 {
		summary += v.theme.warn.Render(fmt.Sprintf(" · %d not kept in memory (w reads them again)", v.dropped))
	}
	lines := []string{v.bar.ViewAs(v.fraction()) + " " + summary}
	tl := v.taskLines()
	if n := v.taskRows(); len(tl) > n {
		tl = append(tl[:n-1], v.theme.dim.Render(fmt.Sprintf("… and %d more partitions", len(tl)-n+1)))
	}
	lines = append(lines, tl...)
	switch {
	case v.writing && v.wmsg != "":
		lines = append(lines, v.prompt.View(), v.wmsg)
	case v.writing:
		lines = append(lines, v.prompt.View())
	case v.wpend != 0:
		lines = append(lines, v.theme.info.Render("writing…"))
	case v.wmsg != "":
		lines = append(lines, v.wmsg)
	}
	lines = append(lines, "")
	return strings.Join(lines, "\n") + "\n" + v.list.View()
}

func (v *replayView) ShortHelp() []key.Binding {
	if v.writing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "write")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	if v.list.capturing() {
		return v.list.ShortHelp()
	}
	return []key.Binding{v.keys.Enter, v.keys.Write, v.keys.Filter, v.keys.Copy, v.keys.Back}
}

func (v *replayView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.navHelp(), {v.keys.Enter, v.keys.Write, v.keys.Filter, v.keys.Copy, v.keys.Back}}
}
