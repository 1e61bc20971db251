package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// fakeStream records the commands the UI sends and serves events from a
// channel the test fills.
type fakeStream struct {
	mu     sync.Mutex
	ch     chan consumer.Event
	calls  []string
	seekTo int64
	bounds map[offsets.Partition]offsets.Bounds
	// boundsGate, when set, holds Bounds until it is closed: the real
	// program's goldens then show a form whose listing is under way,
	// whenever the answer would have come.
	boundsGate chan struct{}
	err        error
	closed     bool
}

func newFakeStream() *fakeStream { return &fakeStream{ch: make(chan consumer.Event, 256)} }

func (f *fakeStream) Events() <-chan consumer.Event { return f.ch }

func (f *fakeStream) record(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
	return f.err
}

func (f *fakeStream) PauseAll() error                  { return f.record("pause-all") }
func (f *fakeStream) ResumeAll() error                 { return f.record("resume-all") }
func (f *fakeStream) Pause(p offsets.Partition) error  { return f.record("pause " + p.String()) }
func (f *fakeStream) Resume(p offsets.Partition) error { return f.record("resume " + p.String()) }
func (f *fakeStream) Ack(id uint64) error              { return f.record(fmt.Sprintf("ack %d", id)) }
func (f *fakeStream) CutNow() error                    { return f.record("cut") }
func (f *fakeStream) Seek(p offsets.Partition, s offsets.Spec) (int64, error) {
	if err := f.record(fmt.Sprintf("seek %s %s", p, s.Text)); err != nil {
		return 0, err
	}
	return f.seekTo, nil
}

func (f *fakeStream) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		f.ch <- &consumer.Ended{Reason: "closed"}
		close(f.ch)
	}
	return nil
}

func (f *fakeStream) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// fakeReplayer plans "topic:p:from-until" texts and reads records whose
// value is "v<offset>".
type fakeReplayer struct {
	planErr error
}

func (r *fakeReplayer) Plan(_ context.Context, ranges []string) ([]ReplayTask, error) {
	if r.planErr != nil {
		return nil, r.planErr
	}
	var out []ReplayTask
	for _, s := range ranges {
		var topic string
		var p int32
		var from, until int64
		if _, err := fmt.Sscanf(strings.NewReplacer(":", " ", "-", " ").Replace(s), "%s %d %d %d", &topic, &p, &from, &until); err != nil {
			return nil, &offsets.UsageError{Msg: fmt.Sprintf("invalid range %q", s)}
		}
		out = append(out, ReplayTask{Spec: s, Range: offsets.Range{Partition: offsets.Partition{Topic: topic, Partition: p}, From: from, Until: until}})
	}
	return out, nil
}

func (r *fakeReplayer) Read(ctx context.Context, tasks []ReplayTask, emit func(ReplayChunk) error) error {
	for i, t := range tasks {
		var recs []*krecord.Record
		for o := t.Range.From; o < t.Range.Until; o++ {
			recs = append(recs, msg(t.Range.Topic, t.Range.Partition.Partition, o, "k", fmt.Sprintf("v%d", o)))
		}
		if err := emit(ReplayChunk{Task: i, Records: recs, Next: t.Range.Until}); err != nil {
			return err
		}
	}
	return nil
}

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func msg(topic string, p int32, off int64, key, value string) *krecord.Record {
	m := &krecord.Record{Topic: topic, Partition: p, Offset: off, Timestamp: t0.Add(time.Duration(off) * time.Millisecond),
		Headers: []*krecord.Header{{Key: []byte("source"), Value: []byte("web")}}}
	if key != "" {
		m.Key = []byte(key)
	}
	if value != "\x00null" {
		m.Value = []byte(value)
	}
	return m
}

func part(topic string, p int32) offsets.Partition {
	return offsets.Partition{Topic: topic, Partition: p}
}

func started(n int) *consumer.Started {
	s := &consumer.Started{Stream: "events", Brokers: []string{"127.0.0.1:9092"}, Topics: []string{"events"}}
	for i := 0; i < n; i++ {
		s.Starts = append(s.Starts, offsets.Start{Partition: part("events", int32(i)), NextOffset: 100 * int64(i),
			Source: offsets.SourceStored, Bounds: offsets.Bounds{LogStart: 0, HighWatermark: 100*int64(i) + 50}})
	}
	return s
}

func progressEv(n int, rate float64) *consumer.Progress {
	p := &consumer.Progress{Time: t0, Rate: rate * float64(n), ByteRate: rate * float64(n) * 100}
	for i := 0; i < n; i++ {
		p.Partitions = append(p.Partitions, consumer.PartitionStatus{Partition: part("events", int32(i)), Source: offsets.SourceStored,
			NextOffset: 100*int64(i) + 10, Stored: 100 * int64(i), Bounds: offsets.Bounds{LogStart: 0, HighWatermark: 100*int64(i) + 50},
			Lag: 40, Rate: rate})
	}
	return p
}

// batch makes a batch over partitions 0..n-1 of "events", two records
// each from 100*i+from, with samples.
func batch(id uint64, n int, from int64, state offsets.BatchState) *consumer.Batch {
	b := &consumer.Batch{Batch: offsets.Batch{ID: id, Time: t0.Add(time.Duration(id) * time.Second), State: state}, Duration: 3 * time.Millisecond}
	for i := 0; i < n; i++ {
		f := 100*int64(i) + from
		b.Ranges = append(b.Ranges, offsets.BatchRange{Range: offsets.Range{Partition: part("events", int32(i)), From: f, Until: f + 2}, Records: 2, Bytes: 40})
		b.Records += 2
		b.Bytes += 40
		b.Samples = append(b.Samples, msg("events", int32(i), f, fmt.Sprintf("user-%d", i), fmt.Sprintf(`{"seq":%d}`, f)),
			msg("events", int32(i), f+1, "", "plain value"))
	}
	return b
}

// newTestModel is a model at size w×h in UTC with a fixed clock.
func newTestModel(t testing.TB, w, h int, opts Options) (*Model, *fakeStream) {
	t.Helper()
	fs := newFakeStream()
	opts.Location = time.UTC
	opts.Now = func() time.Time { return t0 }
	if opts.Name == "" {
		opts.Name = "events"
	}
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	m := New(fs, fs, opts)
	t.Cleanup(m.Close)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, fs
}

// feed applies stream events as one burst.
func feed(m *Model, evs ...consumer.Event) { m.Update(eventsMsg{events: evs, at: t0}) }

// press sends keys; each is a key name ("tab", "enter") or one character.
// It returns the command of the last key.
func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	if r >= 'A' && r <= 'Z' {
		return tea.KeyPressMsg{Code: r + 'a' - 'A', ShiftedCode: r, Text: k, Mod: tea.ModShift}
	}
	return tea.KeyPressMsg{Code: r, Text: k}
}

// typeText types s into whatever has focus.
func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// run executes cmd and feeds its message back, following the commands
// the model returns, until there are none. Only commands known to finish
// may be run this way (not the bridge's).
func run(m *Model, cmd tea.Cmd) {
	for cmd != nil {
		msg := cmd()
		if msg == nil {
			return
		}
		_, cmd = m.Update(msg)
	}
}

// screen renders the model's view as plain text.
func screen(m *Model) string { return stripANSI(m.View().Content) }

func stripANSI(s string) string { return ansi.Strip(s) }

func batchEv(id uint64, n int, from int64, state offsets.BatchState) consumer.Event {
	return &consumer.BatchEvent{Batch: batch(id, n, from, state)}
}

// bounds is the fake's log start and high watermark of p: those of
// started() unless the test set fs.bounds.
func (f *fakeStream) boundsOf(p offsets.Partition) offsets.Bounds {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.bounds[p]; ok {
		return b
	}
	return offsets.Bounds{LogStart: 0, HighWatermark: 100*int64(p.Partition) + 50}
}

func (f *fakeStream) Bounds(parts []offsets.Partition) (map[offsets.Partition]offsets.Bounds, error) {
	if f.boundsGate != nil {
		<-f.boundsGate
	}
	out := map[offsets.Partition]offsets.Bounds{}
	for _, p := range parts {
		out[p] = f.boundsOf(p)
	}
	return out, nil
}

// ResolveSeek applies the stream's rule with the fake's bounds; a time
// finds no record.
func (f *fakeStream) ResolveSeek(parts []offsets.Partition, spec offsets.Spec) ([]consumer.SeekTarget, error) {
	out := make([]consumer.SeekTarget, len(parts))
	for i, p := range parts {
		out[i] = consumer.ResolveTarget(p, spec, f.boundsOf(p), -1)
	}
	return out, nil
}

func (f *fakeStream) SeekTargets(ts []consumer.SeekTarget) (int, error) {
	for i, t := range ts {
		if err := f.record(fmt.Sprintf("seek %s %d", t.Partition, t.Offset)); err != nil {
			return i, err
		}
	}
	return len(ts), nil
}

// fakeWriter records the writes and answers with a fixed place or error.
type fakeWriter struct {
	mu   sync.Mutex
	reqs []WriteRequest
	res  WriteResult
	err  error
}

func (w *fakeWriter) Write(_ context.Context, r WriteRequest) (WriteResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reqs = append(w.reqs, r)
	return w.res, w.err
}

func (w *fakeWriter) writes() []WriteRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WriteRequest(nil), w.reqs...)
}

// fakeGroups answers with fixed groups and counts the reads.
type fakeGroups struct {
	mu     sync.Mutex
	groups []ConsumerGroup
	total  int
	err    error
	reads  int
	parts  []offsets.Partition
}

func (g *fakeGroups) TopicGroups(_ context.Context, parts []offsets.Partition) ([]ConsumerGroup, int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads++
	g.parts = parts
	return g.groups, g.total, g.err
}

// runCmd runs cmd like run, and follows the commands of a tea.Batch; the
// groups view's refresh timer is not run (it would wait), the test ticks.
func runCmd(m *Model, cmd tea.Cmd) {
	for _, v := range m.views {
		if g, ok := v.(*groupsView); ok {
			g.timer = func(int) tea.Cmd { return nil }
		}
	}
	for cmd != nil {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				runCmd(m, c)
			}
			return
		}
		if msg == nil {
			return
		}
		_, cmd = m.Update(msg)
		for _, v := range m.views {
			if g, ok := v.(*groupsView); ok {
				g.timer = func(int) tea.Cmd { return nil }
			}
		}
	}
}

func liveModel(t *testing.T, w, h int, opts Options) *Model {
	t.Helper()
	m, _ := newTestModel(t, w, h, opts)
	feed(m, started(4), progressEv(4, 10), batchEv(1, 4, 10, offsets.StateAcked), batchEv(2, 4, 12, offsets.StateAcked))
	return m
}
