package tui

import (
	"context"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Options describe the stream for the header and wire the optional parts.
type Options struct {
	// Name, Brokers and Topics are shown until the stream's *Started
	// event (which carries the same) arrives.
	Name    string
	Brokers []string
	Topics  []string
	// Cluster is the name of the config's [clusters.NAME] in use, shown
	// before the brokers; empty when the brokers came from flags or env.
	Cluster string
	// InsecureTLS marks a connection whose broker certificates are not
	// verified (insecure_skip_verify); the header says so in a badge.
	InsecureTLS bool
	// Interval is the batch interval; ManualAck enables a and n.
	Interval  time.Duration
	ManualAck bool
	// StorePath is shown in the header; empty means --no-store.
	StorePath string
	// Replayer reads ranges for r; nil disables replay.
	Replayer Replayer
	// Location is the time zone times are shown in (default time.Local).
	Location *time.Location
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Tail is the stream's tap for the tail view (t), also given to the
	// stream as consumer.Config.Tap; nil: no tail view.
	Tail *Tail
	// SampleGate, also given to the stream as consumer.Config.SampleGate,
	// is told of each batch's samples as the screen takes them; nil: the
	// stream sends every batch's samples.
	SampleGate *SampleGate
	// Resume, when set, is the stored stream this run resumes (shown
	// when the stream starts).
	Resume *Resume
	// Writer produces records from the screen (p, E); nil disables them.
	Writer Writer
	// Groups reads the consumer groups on the stream's topics (C); nil
	// disables the view.
	Groups GroupReader
	// GroupSetter writes a consumer group's offsets (O); nil disables it.
	GroupSetter GroupSetter
	// Profiles are the config's cluster profiles c switches between.
	Profiles []Profile
	// ProbeProfile, when set, connects to a profile's cluster before c
	// closes the stream for it: a profile that cannot be reached is said
	// on the screen and the stream goes on. It returns ErrProbeSkipped
	// when it cannot tell without the terminal (a password to type).
	ProbeProfile func(ctx context.Context, profile string) error
	// Decoder, when set, decodes keys and values with a schema for what
	// the screen shows, filters or opens; SchemaNotes (wired into the
	// decoder's Ready and Event) tells the screen when a schema arrived
	// and what went wrong.
	Decoder     Decoder
	SchemaNotes *SchemaNotes
	// DescribePartition, when set, says in one line what kbatch topics
	// says of a partition beyond its offsets (replicas, ISR, cleanup
	// policy, retention), for the head of its records view.
	DescribePartition func(ctx context.Context, p offsets.Partition) (string, error)
}

// pane is one of the four panes of the main screen.
type pane interface {
	Update(tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	help.KeyMap
	title() string
	setFocus(bool)
}

// view is a full-body view on top of the panes: details, forms, replay,
// help. capturing views get every key (they hold a text input).
type view interface {
	Update(tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	help.KeyMap
	title() string
	capturing() bool
}

// Pane indexes in focus order.
const (
	focusPartitions = iota
	focusBatches
	focusRecords
	focusEvents
	paneCount
)

// Model is the root model: it applies stream events, lays out the panes,
// owns the global keys and routes the rest to the focused pane or the
// view on top.
type Model struct {
	c        *common
	opts     Options
	controls Controls
	bridge   *bridge
	now      func() time.Time

	width, height int
	// laidOutBatchesW is the batches table's natural width when the panes
	// were last sized; apply lays out again when it grows.
	laidOutBatchesW int

	hist    *history
	parts   *partitionsPane
	batches *batchesPane
	records *recordsPane
	events  *eventsPane
	panes   [paneCount]pane
	focus   int
	views   []view
	replay  *replayView // the open replay view, if any
	help    help.Model

	stream    streamState
	status    statusLine
	nextID    int
	ctx       context.Context
	cancel    context.CancelFunc
	bg        sync.WaitGroup // replays and writes in flight
	replayEnd context.CancelFunc

	// The tail view (tailwire.go): the ring outlives the view, so a
	// search finds what it showed.
	tailRing *tailRing
	tailView *tailView
	tailStop chan struct{}
	tailGen  int
	// findView is the open search view (/), if any.
	findView *findView
	// resumeShown is set once the resume notice was shown.
	resumeShown bool
	// seekSummaryUntil keeps S's summary in the status line over the
	// seek events that follow it.
	seekSummaryUntil time.Time
	// lastKey is when the last key was pressed: a held batch is let go
	// holdIdle after it (hold.go).
	lastKey time.Time
	// switchTo is the cluster profile chosen with c; Run returns it.
	switchTo string
}

// streamState is what the header shows about the stream.
type streamState struct {
	name, store     string
	brokers, topics []string
	paused, waiting bool
	waitingID       uint64
	rate, byteRate  float64
	batches         int
	records         int64
	ended           *consumer.Ended
	closed          bool
	manual          bool
	// cutQueued is n pressed while a batch waited: the next batch is
	// cut as soon as that one is acked.
	cutQueued        bool
	interval         time.Duration
	redeliveringID   uint64
	startedReceived  bool
	startedAt        time.Time // when the Started event came
	lastProgressTime time.Time
	// loss is the data loss not yet dismissed (x): the header and the
	// partitions pane warn until then.
	loss lossWarning
}

// lossWarning sums the data-loss events since the last dismissal.
type lossWarning struct {
	partitions map[offsets.Partition]bool
	offsets    int64
}

func (w *lossWarning) add(e offsets.Event) {
	if w.partitions == nil {
		w.partitions = map[offsets.Partition]bool{}
	}
	w.partitions[offsets.Partition{Topic: e.Topic, Partition: e.Partition}] = true
	w.offsets += e.Lost
}

func (w *lossWarning) active() bool { return len(w.partitions) > 0 }

// statusLine is the latest notice or command result.
type statusLine struct {
	text  string
	style lipgloss.Style
	at    time.Time
}

// New returns the root model over src (the stream's events) and ctl (its
// commands; nil for a read-only view). Call Close when the program has ended, to stop replays and
// writes in flight and wait for them.
func New(src EventSource, ctl Controls, opts Options) *Model {
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &common{theme: newTheme(), keys: newKeyMap(), loc: opts.Location, schemas: newDecoding(opts.Decoder)}
	c.keys.Ack.SetEnabled(opts.ManualAck)
	c.keys.Step.SetEnabled(opts.ManualAck)
	c.keys.Replay.SetEnabled(opts.Replayer != nil)
	c.keys.SetGroup.SetEnabled(opts.GroupSetter != nil)
	m := &Model{c: c, opts: opts, controls: ctl, bridge: newBridge(src.Events()), now: opts.Now, hist: newHistory()}
	m.bridge.now = opts.Now
	m.parts = newPartitionsPane(c)
	m.parts.manual = opts.ManualAck
	m.batches = newBatchesPane(c, m.hist)
	m.batches.idle = m.idleReason
	m.records = newRecordsPane(c)
	m.events = newEventsPane(c)
	m.panes = [paneCount]pane{m.parts, m.batches, m.records, m.events}
	m.panes[0].setFocus(true)
	m.help = help.New()
	m.help.Styles = helpStyles()
	m.stream = streamState{name: opts.Name, brokers: opts.Brokers, topics: opts.Topics, store: opts.StorePath,
		manual: opts.ManualAck, interval: opts.Interval}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m
}

func helpStyles() help.Styles {
	s := help.DefaultDarkStyles()
	s.ShortKey = lipgloss.NewStyle().Bold(true)
	s.FullKey = lipgloss.NewStyle().Bold(true)
	s.ShortDesc = lipgloss.NewStyle()
	s.FullDesc = lipgloss.NewStyle()
	s.ShortSeparator = lipgloss.NewStyle().Faint(true)
	s.FullSeparator = lipgloss.NewStyle().Faint(true)
	s.Ellipsis = lipgloss.NewStyle().Faint(true)
	return s
}

// Close stops replays and writes in flight and waits for them, so nothing
// is left half-written (a write removes its temporary file).
func (m *Model) Close() {
	m.cancel()
	m.bg.Wait()
}

// Init starts the bridge.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.bridge.wait(time.Time{}, frameGap), m.opts.SchemaNotes.wait(m.ctx))
}

// closeViewMsg closes the view on top.
type closeViewMsg struct{}

func closeView() tea.Msg { return closeViewMsg{} }

// Update routes a message (update) and sends out the expression
// evaluations it started (where.go).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	if done, ok := msg.(whereDoneMsg); ok {
		m.c.whereDone(done)
	} else {
		_, cmd = m.update(msg)
	}
	if q := m.c.takeQueued(); len(q) > 0 {
		cmd = tea.Batch(append(q, cmd)...)
	}
	return m, cmd
}

// update routes a message; each case hands off to one method.
func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, ok := m.updateMore(msg); ok { // route_more.go
		return m, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case eventsMsg:
		m.apply(msg.events)
		if msg.closed {
			m.stream.closed = true
			return m, nil
		}
		return m, m.bridge.next(msg)
	case tea.KeyPressMsg:
		return m, m.keys(msg) // keysplit.go
	case tea.PasteMsg:
		return m, m.paste(msg)
	case closeViewMsg:
		m.popView()
		return m, nil
	case controlDoneMsg:
		return m, m.controlDone(msg)
	case seekRequestMsg:
		return m, m.seek(msg)
	case seekDoneMsg:
		return m, m.seekDone(msg)
	case planRequestMsg:
		return m, m.plan(msg)
	case planDoneMsg:
		return m, m.planDone(msg)
	case replayMsg:
		return m, m.replayOutput(msg)
	case writeRequestMsg:
		return m, m.write(msg)
	case writeDoneMsg:
		return m, m.writeDone(msg)
	case tailMsg:
		return m, m.tailIn(msg)
	case searchMsg:
		return m, m.searchOutput(msg)
	case pageMsg:
		return m, m.pageIn(msg)
	case describedMsg:
		m.described(msg)
		return m, nil
	case schemaNotesMsg:
		return m, m.schemaNotes(msg)
	}
	if v := m.top(); v != nil {
		return m, v.Update(msg)
	}
	return m, nil
}

func (m *Model) top() view {
	if len(m.views) == 0 {
		return nil
	}
	return m.views[len(m.views)-1]
}

func (m *Model) pushView(v view) {
	m.views = append(m.views, v)
	m.layout()
}

// popView closes the view on top; closing the replay view stops it.
func (m *Model) popView() {
	v := m.top()
	if v == nil {
		return
	}
	m.views = m.views[:len(m.views)-1]
	if v == view(m.replay) {
		m.replayEnd()
		m.replay = nil
	}
	m.viewClosed(v)
	m.layout()
}

func (m *Model) setFocus(i int) {
	m.panes[m.focus].setFocus(false)
	m.focus = (i + paneCount) % paneCount
	m.panes[m.focus].setFocus(true)
}

// setStatus shows text in the status line.
func (m *Model) setStatus(text string, style lipgloss.Style) {
	m.status = statusLine{text: text, style: style, at: m.now()}
}

// globalHelp is the bindings of the main screen beyond the focused
// pane's, in the order the footer drops them last to first.
func (m *Model) globalHelp() []key.Binding {
	k := m.c.keys
	pause := k.PauseAll
	if m.stream.paused {
		pause = withHelp(pause, "resume all")
	}
	return []key.Binding{pause, k.Next}
}
