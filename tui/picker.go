package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// TopicInfo is one topic as the picker lists it.
type TopicInfo struct {
	Name       string
	Partitions int
	// Records is the sum over partitions of high watermark minus log
	// start: what a read from the earliest offsets would see at most.
	Records int64
}

// TopicLister lists the cluster's topics for the picker. It is called
// from a tea.Cmd (never from Update), again on each retry.
type TopicLister interface {
	ListTopics(ctx context.Context) ([]TopicInfo, error)
}

// PickerOptions describe the cluster in the picker's header.
type PickerOptions struct {
	Cluster string
	Brokers []string
	// Ask, when set, asks where the picked topics start before the
	// picker quits (StartChoice has the answer).
	Ask StartAsker
	// Now is the clock (default time.Now), for @-15m answers.
	Now func() time.Time
}

// topicsMsg is the answer to listing request id; stale answers are dropped.
type topicsMsg struct {
	id     int
	topics []TopicInfo
	err    error
}

// Picker is the topic picker shown when kbatch starts without -t: a
// filterable list of the cluster's topics (internal "__" ones hidden)
// with partitions and records. Chosen returns the pick once it has quit.
type Picker struct {
	c      *common
	opts   PickerOptions
	lister TopicLister
	ctx    context.Context
	cancel context.CancelFunc

	width, height int
	reqID         int
	loading       bool
	err           error
	all           []TopicInfo // sorted as listed, internal topics left out
	shown         []int       // indexes into all matching the filter
	marked        map[string]bool
	cur           cursor
	filter        textinput.Model
	query         string
	editing       bool
	status        string
	chosen        []string
	asking        *startAsk // the start question, after the topics
	startChoice   string
	help          help.Model
	keys          pickerKeys
}

type pickerKeys struct {
	Mark, Start, Filter, Retry, Quit key.Binding
}

// NewPicker returns a picker over l. Call Close when the program has
// ended, to stop a listing in flight.
func NewPicker(l TopicLister, opts PickerOptions) *Picker {
	c := &common{theme: newTheme(), keys: newKeyMap()}
	in := newLineInput("/ ", "part of a topic name")
	b := func(keys []string, h, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(h, desc))
	}
	p := &Picker{c: c, opts: opts, lister: l, marked: map[string]bool{}, filter: in, help: help.New(),
		keys: pickerKeys{
			Mark:   b([]string{"space"}, "space", "mark"),
			Start:  b([]string{"enter"}, "enter", "start"),
			Filter: b([]string{"/"}, "/", "filter"),
			Retry:  b([]string{"r"}, "r", "list again"),
			Quit:   b([]string{"q", "esc"}, "q/esc", "quit"),
		}}
	p.help.Styles = helpStyles()
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// Close stops a listing in flight.
func (p *Picker) Close() { p.cancel() }

// Chosen returns the picked topics in list order, or nil when the user
// quit without picking.
func (p *Picker) Chosen() []string { return p.chosen }

// StartChoice returns the answer to "where to start" ("" when not asked).
func (p *Picker) StartChoice() string { return p.startChoice }

// Init starts listing the topics.
func (p *Picker) Init() tea.Cmd { return p.list() }

func (p *Picker) list() tea.Cmd {
	p.reqID++
	p.loading, p.err = true, nil
	id, ctx, l := p.reqID, p.ctx, p.lister
	return func() tea.Msg {
		ts, err := l.ListTopics(ctx)
		return topicsMsg{id: id, topics: ts, err: err}
	}
}

// Update handles the listing's answer, the window size and the keys.
func (p *Picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.width, p.height = msg.Width, msg.Height
		p.help.SetWidth(msg.Width)
		p.layout()
	case topicsMsg:
		p.listed(msg)
	case tea.KeyPressMsg:
		return p, p.key(msg)
	case tea.PasteMsg:
		return p, p.paste(msg)
	}
	return p, nil
}

// paste types pasted text into the start question's field, or the topic
// filter while it is edited; it is never taken as keys.
func (p *Picker) paste(msg tea.PasteMsg) tea.Cmd {
	var cmd tea.Cmd
	switch {
	case p.asking != nil:
		p.asking.problem = ""
		p.asking.input, cmd = p.asking.input.Update(msg)
	case p.editing:
		p.filter, cmd = p.filter.Update(msg)
		p.applyFilter()
	}
	return cmd
}

// listed keeps the answer to the latest request.
func (p *Picker) listed(msg topicsMsg) {
	if msg.id != p.reqID {
		return
	}
	p.loading, p.err = false, msg.err
	if msg.err != nil {
		return
	}
	p.all = []TopicInfo{}
	have := map[string]bool{}
	for _, t := range msg.topics {
		if !strings.HasPrefix(t.Name, "__") {
			p.all = append(p.all, t)
			have[t.Name] = true
		}
	}
	for name := range p.marked {
		if !have[name] {
			delete(p.marked, name) // deleted since the last listing
		}
	}
	p.refilter()
}

func (p *Picker) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	p.status = ""
	if ks == "ctrl+c" {
		return tea.Quit
	}
	if p.asking != nil {
		return p.askKey(k)
	}
	if p.editing {
		return p.editKey(ks, k)
	}
	switch {
	case keyIs(ks, p.keys.Quit):
		if ks == "esc" && p.query != "" {
			p.setFilter("")
			return nil
		}
		return tea.Quit
	case keyIs(ks, p.keys.Start):
		return p.start()
	case keyIs(ks, p.keys.Mark):
		p.toggleMark()
	case keyIs(ks, p.keys.Filter):
		p.editing = true
		p.layout()
		return p.filter.Focus()
	case keyIs(ks, p.keys.Retry) && !p.loading:
		return p.list()
	default:
		p.c.navKeys(ks, &p.cur)
	}
	return nil
}

// editKey handles a key while the filter has focus: typing filters,
// arrows move, space marks (topic names have no spaces), enter keeps the
// filter and esc clears it.
func (p *Picker) editKey(ks string, k tea.KeyPressMsg) tea.Cmd {
	switch ks {
	case "enter", "esc":
		p.editing = false
		p.filter.Blur()
		if ks == "esc" {
			p.setFilter("")
		}
		p.layout()
	case "space":
		p.toggleMark()
	case "up", "down", "pgup", "pgdown":
		p.c.navKeys(ks, &p.cur)
	default:
		cmd := typeInto(&p.filter, k)
		p.applyFilter()
		return cmd
	}
	return nil
}

func (p *Picker) setFilter(q string) {
	p.filter.SetValue(q)
	p.applyFilter()
}

func (p *Picker) applyFilter() {
	if q := p.filter.Value(); q != p.query {
		p.query = q
		p.refilter()
		p.cur.home()
	}
}

// refilter keeps the topics whose name holds the filter, ignoring case.
func (p *Picker) refilter() {
	q := strings.ToLower(p.query)
	p.shown = p.shown[:0]
	for i, t := range p.all {
		if strings.Contains(strings.ToLower(t.Name), q) {
			p.shown = append(p.shown, i)
		}
	}
	p.cur.setLen(len(p.shown))
}

func (p *Picker) selected() *TopicInfo {
	if p.cur.sel < len(p.shown) {
		return &p.all[p.shown[p.cur.sel]]
	}
	return nil
}

// toggleMark marks or unmarks the selected topic and moves down.
func (p *Picker) toggleMark() {
	t := p.selected()
	if t == nil {
		return
	}
	if p.marked[t.Name] {
		delete(p.marked, t.Name)
	} else {
		p.marked[t.Name] = true
	}
	p.cur.move(1)
}

// start picks the marked topics (filtered out or not), else the selected
// one, and quits.
func (p *Picker) start() tea.Cmd {
	var out []string
	for _, t := range p.all {
		if p.marked[t.Name] {
			out = append(out, t.Name)
		}
	}
	if len(out) == 0 {
		if t := p.selected(); t != nil {
			out = []string{t.Name}
		}
	}
	if len(out) == 0 {
		p.status = "no topic to start with"
		return nil
	}
	if p.opts.Ask != nil {
		var records int64
		for _, t := range p.all {
			for _, name := range out {
				if t.Name == name {
					records += t.Records
				}
			}
		}
		p.asking = newStartAsk(p.opts.Ask(out), out, records)
		p.chosen = out
		return nil
	}
	p.chosen = out
	return tea.Quit
}

// askKey handles the start question: enter starts, esc goes back to the
// topics (the marks are kept).
func (p *Picker) askKey(k tea.KeyPressMsg) tea.Cmd {
	now := time.Now
	if p.opts.Now != nil {
		now = p.opts.Now
	}
	done, back, cmd := p.asking.key(k, now())
	switch {
	case back:
		p.asking, p.chosen = nil, nil
	case done:
		p.startChoice = p.asking.input.Value()
		return tea.Quit
	}
	return cmd
}

// Picker screen: header, framed list, status line, footer.
func (p *Picker) bodyHeight() int { return max(0, p.height-3) }

func (p *Picker) listHeight() int {
	h := p.bodyHeight() - 2 - 1 // frame, column header
	if p.editing || p.query != "" {
		h--
	}
	return max(1, h)
}

func (p *Picker) layout() { p.cur.setHeight(p.listHeight()) }

// View draws the picker.
func (p *Picker) View() tea.View {
	v := tea.NewView(p.render())
	v.AltScreen = true
	v.WindowTitle = "kbatch: pick topics"
	return v
}

func (p *Picker) render() string {
	if p.width == 0 {
		return ""
	}
	if p.width < minWidth || p.height < minHeight {
		msg := fmt.Sprintf("terminal too small: %d×%d\nkbatch needs at least %d×%d\n(q quits)", p.width, p.height, minWidth, minHeight)
		return placeBlock(centerText(msg, p.width, p.height), p.width, p.height)
	}
	return strings.Join([]string{p.header(), p.body(), p.statusLine(), p.footer()}, "\n")
}

func (p *Picker) header() string {
	th := &p.c.theme
	s := th.bold.Render("kbatch") + " " + th.badgeManual.Render("PICK TOPICS")
	if p.opts.Cluster != "" {
		s += "  cluster " + krecord.String(p.opts.Cluster)
	}
	if len(p.opts.Brokers) > 0 {
		s += "  brokers " + brokerList(p.opts.Brokers, p.width)
	}
	return fit(s, p.width)
}

// columns are the mark, the name (as wide as the widest name, so the
// numbers stay next to it), partitions and records.
func (p *Picker) columns() []column {
	nameW := 12
	for _, t := range p.all {
		nameW = max(nameW, ansi.StringWidth(krecord.String(t.Name)))
	}
	return layoutColumns([]column{
		{title: "   ", width: 3, priority: 0},
		{title: "TOPIC", width: 12, priority: 0, flex: true, maxWidth: nameW},
		{title: "PARTITIONS", width: 10, right: true, priority: 1},
		{title: "RECORDS", width: 12, right: true, priority: 2},
	}, p.width-4)
}

func (p *Picker) title() string {
	switch {
	case p.loading && p.all == nil:
		return "Topics"
	case p.query != "":
		return fmt.Sprintf("Topics %d of %d · %d marked", len(p.shown), len(p.all), len(p.marked))
	}
	return fmt.Sprintf("Topics %d · %d marked", len(p.all), len(p.marked))
}

func (p *Picker) body() string {
	th := &p.c.theme
	if p.asking != nil {
		return frame(th, p.asking.title(), p.asking.lines(th, p.width), p.width, p.bodyHeight(), true)
	}
	var lines []string
	if p.editing || p.query != "" {
		lines = append(lines, " "+p.filter.View())
	}
	cols := p.columns()
	lines = append(lines, "  "+headerRow(th, cols))
	switch {
	case p.loading && p.all == nil:
		lines = append(lines, th.dim.Render("  listing topics…"))
	case p.err != nil && p.all == nil:
		lines = append(lines, th.bad.Render("  listing topics failed: ")+krecord.String(p.err.Error()), th.dim.Render("  r lists again, q quits"))
	case len(p.all) == 0:
		lines = append(lines, th.dim.Render("  no topics on this cluster (internal \"__\" topics are hidden); q quits"))
	case len(p.shown) == 0:
		lines = append(lines, th.dim.Render("  no topic matches the filter; esc clears it"))
	}
	from, until := p.cur.visible()
	cells := make([]string, len(cols))
	for i := from; i < until && i < len(p.shown); i++ {
		t := p.all[p.shown[i]]
		mark := "[ ]"
		if p.marked[t.Name] {
			mark = "[x]"
		}
		cells[0], cells[1] = mark, krecord.String(t.Name)
		cells[2], cells[3] = strconv.Itoa(t.Partitions), strconv.FormatInt(t.Records, 10)
		lines = append(lines, markRow(th, renderRow(cols, cells), i == p.cur.sel, true))
	}
	return frame(th, p.title(), lines, p.width, p.bodyHeight(), true)
}

func (p *Picker) statusLine() string {
	th := &p.c.theme
	switch {
	case p.asking != nil:
		return fit(th.dim.Render("starting with "+krecord.String(strings.Join(p.chosen, ", "))), p.width)
	case p.status != "":
		return fit(th.warn.Render(p.status), p.width)
	case p.err != nil && p.all != nil:
		return fit(th.bad.Render("listing topics again failed: ")+krecord.String(p.err.Error()), p.width)
	case p.loading && p.all != nil:
		return fit(th.dim.Render("listing topics…"), p.width)
	case len(p.marked) > 0:
		return fit(th.dim.Render(fmt.Sprintf("enter starts with the %d marked topics", len(p.marked))), p.width)
	}
	return fit(th.dim.Render("enter starts with the selected topic; space marks several"), p.width)
}

func (p *Picker) footer() string {
	k := p.keys
	if p.asking != nil {
		return p.help.ShortHelpView(p.asking.help())
	}
	if p.editing {
		return p.help.ShortHelpView([]key.Binding{
			key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "move")), k.Mark,
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		})
	}
	bs := []key.Binding{k.Start, k.Mark, k.Filter, p.c.keys.Up, p.c.keys.Down}
	if p.err != nil {
		bs = append(bs, k.Retry)
	}
	return p.help.ShortHelpView(append(bs, k.Quit))
}
