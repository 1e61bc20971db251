package tui

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// noViewOpen fails t when a view is open on m, then checks that the
// screen holds says (what it says instead).
func noViewOpen(t *testing.T, m *Model, says ...string) {
	t.Helper()
	if m.top() != nil {
		t.Fatalf("%T is open, want no view", m.top())
	}
	mustContain(t, screen(m), says...)
}

func mustContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("screen lacks %q:\n%s", sub, s)
		}
	}
}

func mustNotContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Fatalf("screen has %q:\n%s", sub, s)
		}
	}
}

func TestHeaderAndPanes(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{StorePath: "/state/offsets.db"})
	feed(m, started(3), progressEv(3, 25), batchEv(1, 3, 10, offsets.StateAcked))
	s := screen(m)
	mustContain(t, s, "kbatch events", "LIVE", "75 rec/s", "7.3 KiB/s", "interval 1s", "store /state/offsets.db",
		"brokers 127.0.0.1:9092", "topics events", "acked 1 batch, 6 records",
		"Partitions 3", "events[2]", "stored", "Batches 1", "acked",
		"batch 1 ranges [from, until)", "events[1] 110 → 112 · 2 records",
		"Records · batch 1 · 6 of 6 records sampled", `{"seq":10}`, "user-0", "Events 0")
}

func TestTooSmall(t *testing.T) {
	m, _ := newTestModel(t, 50, 12, Options{})
	feed(m, started(2))
	s := screen(m)
	mustContain(t, s, "terminal too small: 50×12", "at least 60×16")
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	mustContain(t, screen(m), "1 Partitions", "events[1]")
}

func TestSmallScreenTabs(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Options{})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked))
	mustContain(t, screen(m), "1 Partitions", "PARTITION")
	press(m, "tab")
	mustContain(t, screen(m), "Batches 1", "batch 1 ranges")
	press(m, "tab")
	mustContain(t, screen(m), "Records · batch 1")
	press(m, "tab")
	mustContain(t, screen(m), "Events 0")
	press(m, "tab")
	mustContain(t, screen(m), "PARTITION")
	press(m, "shift+tab")
	mustContain(t, screen(m), "Events 0")
	press(m, "2")
	mustContain(t, screen(m), "Batches 1")
	for _, line := range strings.Split(screen(m), "\n") {
		if w := len([]rune(line)); w > 80 {
			t.Fatalf("line wider than 80: %q", line)
		}
	}
}

func TestPartitionsSelectionSurvivesProgress(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	feed(m, started(5))
	press(m, "j", "j")
	feed(m, progressEv(5, 10))
	p, _ := m.parts.selected()
	if p.Partition != part("events", 2) {
		t.Fatalf("selected %s", p.Partition)
	}
	press(m, "G")
	run(m, press(m, "P"))
	if got := fs.Calls(); !slices.Equal(got, []string{"pause events[4]"}) {
		t.Fatalf("calls %v", got)
	}
	mustContain(t, screen(m), "paused")
	run(m, press(m, "P"))
	if got := fs.Calls(); got[len(got)-1] != "resume events[4]" {
		t.Fatalf("calls %v", got)
	}
}

func TestPauseAll(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	feed(m, started(2))
	run(m, press(m, "space"))
	mustContain(t, screen(m), "PAUSED")
	run(m, press(m, "space"))
	mustContain(t, screen(m), "LIVE")
	if got := fs.Calls(); !slices.Equal(got, []string{"pause-all", "resume-all"}) {
		t.Fatalf("calls %v", got)
	}
	fs.err = consumer.ErrEnded
	run(m, press(m, "space"))
	mustContain(t, screen(m), "the stream has ended")
}

// TestNoControlsIsReadOnly: a source without controls (kbatch spark passes
// nil) keeps the view up and answers pause, seek, ack and cut with the
// read-only message, instead of a stub that returns an error.
func TestNoControlsIsReadOnly(t *testing.T) {
	fs := newFakeStream()
	fresh := func() *Model {
		m := New(fs, nil, Options{Name: "spark:q", Interval: time.Second, Location: time.UTC, Now: func() time.Time { return t0 }})
		t.Cleanup(m.Close)
		m.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
		feed(m, started(2))
		if strings.Contains(screen(m), "are not available") {
			t.Fatal("the read-only message shown before any key")
		}
		return m
	}
	for _, key := range []string{"space", "P"} {
		m := fresh()
		run(m, press(m, key))
		mustContain(t, screen(m), "are not available")
		mustContain(t, screen(m), "LIVE")
	}
	m := fresh()
	run(m, m.seek(seekRequestMsg{id: 1, parts: []offsets.Partition{{Topic: "events", Partition: 0}}}))
	mustContain(t, screen(m), "are not available")
	if got := fs.Calls(); len(got) != 0 {
		t.Fatalf("a view without controls called the source: %v", got)
	}
}

func TestBatchesFollowAndReplacePlanned(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked), batchEv(2, 2, 2, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 2 {
		t.Fatalf("selected %d, want the newest", id)
	}
	press(m, "tab", "j") // batch 1
	feed(m, batchEv(3, 2, 4, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 1 {
		t.Fatalf("selected %d, want 1 kept", id)
	}
	press(m, "g")
	b := batch(4, 2, 6, offsets.StatePlanned)
	b.Ranges[1].Jump = offsets.CodeSeek
	feed(m, &consumer.BatchEvent{Batch: b})
	mustContain(t, screen(m), "planned", "*4", "jump: seek", "events[1] 106 → 108 · 2 records  * jump: seek")
	acked := *b
	acked.State = offsets.StateAcked
	feed(m, &consumer.BatchEvent{Batch: &acked})
	if m.hist.len() != 4 || m.hist.newest(0).State != offsets.StateAcked {
		t.Fatalf("planned batch not replaced: %d batches", m.hist.len())
	}
	press(m, "enter")
	mustContain(t, screen(m), "Batch 4", "2 ranges [from, until)", "4 of 4 records sampled")
	press(m, "esc")
	mustContain(t, screen(m), "Partitions 2")
}

func TestHistoryIsBounded(t *testing.T) {
	h := newHistory()
	for id := uint64(1); id <= 600; id++ {
		h.add(batch(id, 2, int64(id)*2, offsets.StateAcked))
	}
	if h.len() != maxBatches || h.newest(0).ID != 600 || h.newest(maxBatches-1).ID != 101 {
		t.Fatalf("len %d newest %d oldest %d", h.len(), h.newest(0).ID, h.newest(h.len()-1).ID)
	}
	h.maxRecords = 10
	h.add(batch(601, 2, 0, offsets.StateAcked))
	if h.sampleCount > 10 || len(h.newest(0).samples) != 4 || !h.newest(h.len()-1).samplesDropped {
		t.Fatalf("samples %d newest %d", h.sampleCount, len(h.newest(0).samples))
	}
}

// An older batch whose samples the memory bound dropped says so, and
// how to see its records, instead of "no sample records".
func TestDroppedSamplesSayWhy(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	m.hist.maxRecords = 4
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked), batchEv(2, 2, 2, offsets.StateAcked))
	press(m, "2", "j")
	s := screen(m)
	mustContain(t, s, "Records · batch 1 · 0 of 4 records sampled (dropped to bound memory)", "samples dropped to bound memory; newer batches keep theirs; r replays the batch")
	mustNotContain(t, s, "no sample records in this batch")
}

// A batch the stream cut while the screen was behind it by a batch's
// worth of samples comes without them (consumer.Batch.SamplesSkipped); the
// records pane says why, as for samples the history dropped.
func TestSkippedSamplesSayWhy(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	skipped := batch(2, 2, 2, offsets.StateAcked)
	skipped.Samples, skipped.SamplesSkipped = nil, true
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked), &consumer.BatchEvent{Batch: skipped})
	s := screen(m)
	mustContain(t, s, "Records · batch 2 · 0 of 4 records sampled (dropped to bound memory)", "samples dropped to bound memory; newer batches keep theirs; r replays the batch")
	mustNotContain(t, s, "no sample records in this batch")
	press(m, "2", "j")
	mustContain(t, screen(m), "Records · batch 1 · 4 of 4 records sampled")
}

// The screen counts a batch's samples as taken when it applies the batch:
// the stream told the gate of them when it sent the event, and the gate
// opens again once the screen has them.
func TestScreenTakesSamplesFromTheGate(t *testing.T) {
	gate := NewSampleGate()
	m, _ := newTestModel(t, 140, 40, Options{SampleGate: gate})
	b := batch(1, 2, 0, offsets.StateAcked)
	gate.Sent(consumer.SampleBytes(b) + sampleGateBytes - 1)
	if gate.Open() {
		t.Fatal("gate open with more than sampleGateBytes waiting")
	}
	feed(m, started(2), &consumer.BatchEvent{Batch: b})
	if !gate.Open() || gate.heap.waiting.Load() != sampleGateBytes-1 {
		t.Fatalf("after the screen took the batch: open %v, %d bytes waiting; want %d", gate.Open(), gate.heap.waiting.Load(), sampleGateBytes-1)
	}
}

// / on the main screen searches every sample kept, not only the selected
// batch's; enter shows a match, y copies it.
func TestRecordsFilterDetailCopy(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked), batchEv(2, 2, 2, offsets.StateAcked))
	press(m, "3", "/")
	if m.findView == nil || !m.findView.capturing() {
		t.Fatal("/ does not open the search")
	}
	typeText(m, "SEQ") // case-insensitive
	press(m, "enter")
	s := screen(m)
	mustContain(t, s, `Search "SEQ" · 4 in 8 records kept`, `{"seq":0}`, `{"seq":100}`, `{"seq":2}`, `{"seq":102}`)
	mustNotContain(t, s, "plain value")
	// q is a search character while typing, not quit.
	press(m, "/")
	if cmd := press(m, "q"); cmd != nil && isQuit(cmd) {
		t.Fatal("q quit while typing a search")
	}
	press(m, "backspace", "enter", "j", "enter")
	s = screen(m)
	// Newest first: 102, then 100 (batch 1).
	mustContain(t, s, "Record events[1] @ 100", "value      11 B · JSON", `"seq": 100`, "source = web", "batch 1")
	cmd := press(m, "y")
	if cmd == nil {
		t.Fatal("y gave no clipboard command")
	}
	mustContain(t, screen(m), "copied the value of events[1] @ 100")
	press(m, "esc", "esc")
	mustContain(t, screen(m), "Records · batch 2 · 4 of 4 records sampled")
	mustNotContain(t, screen(m), `Search "`)
}

func isQuit(cmd tea.Cmd) bool {
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestQuitKeys(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	if !isQuit(press(m, "q")) || !isQuit(press(m, "ctrl+c")) {
		t.Fatal("q and ctrl+c must quit")
	}
}

func TestEventsAndStatusLine(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	e := offsets.NewEvent(t0, offsets.CodeDataLoss, part("events", 1), "events[1]: data loss: stored 120 is below the log start 500")
	e.Expected, e.LogStart = 120, 500
	feed(m, started(2), &consumer.Notice{Event: e})
	mustContain(t, screen(m), "Events 1", "data-loss: events[1]: data loss: stored 120", "10:00:00 data-loss")
	press(m, "4", "enter")
	mustContain(t, screen(m), "Event data-loss", "expected    120", "log start   500")
	press(m, "esc")
	feed(m, &consumer.Ended{Reason: "error", Err: errors.New("broker down")})
	mustContain(t, screen(m), "ENDED", "the stream ended (error) after 0 batches: broker down; q quits")
}

func TestSeekForm(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	feed(m, started(3), progressEv(3, 1))
	press(m, "j", "s")
	mustContain(t, screen(m), "Seek events[1]", "next 110 · log start 0 · high watermark 150")
	typeText(m, "abc")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), `invalid offset: offset "abc" is not a number`)
	if len(fs.Calls()) != 0 {
		t.Fatalf("invalid input reached the stream: %v", fs.Calls())
	}
	// q and space are text here.
	press(m, "q", "space")
	for range "abcq " {
		press(m, "backspace")
	}
	fs.err = &offsets.UsageError{Msg: "unknown partition events[1]"}
	typeText(m, "999")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "Seek events[1]", "unknown partition events[1]")
	fs.err = nil
	retype(m, "999", "-10")
	run(m, press(m, "enter"))
	mustNotContain(t, screen(m), "Seek events[1]")
	mustContain(t, screen(m), "seek: events[1] moves to 140")
	if got := fs.Calls(); got[len(got)-1] != "seek events[1] 140" {
		t.Fatalf("calls %v", got)
	}
	// esc cancels a form without a seek.
	press(m, "s", "esc")
	mustContain(t, screen(m), "Partitions 3")
}

func TestStaleSeekAnswerIsDropped(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2))
	press(m, "s")
	typeText(m, "5")
	req := press(m, "enter")()
	press(m, "esc", "s") // a new form
	m.Update(m.seek(req.(seekRequestMsg))())
	f := m.top().(*seekForm)
	if f.problem != "" || f.pending != 0 {
		t.Fatalf("stale answer changed the new form: %+v", f.problem)
	}
}

func TestManualAck(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{ManualAck: true})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StatePlanned))
	mustContain(t, screen(m), "MANUAL-ACK batch 1 waits", "planned")
	// n while a batch waits is queued, and says why it waits.
	press(m, "n")
	mustContain(t, screen(m), "n queued: batch 2 is cut when a acks batch 1")
	if len(fs.Calls()) != 0 {
		t.Fatalf("n while a batch waits called the stream: %v", fs.Calls())
	}
	run(m, press(m, "a"))
	mustContain(t, screen(m), "cutting the next batch now")
	mustNotContain(t, screen(m), "batch 1 waits")
	run(m, press(m, "n"))
	if got := fs.Calls(); !slices.Equal(got, []string{"ack 1", "cut", "cut"}) {
		t.Fatalf("calls %v", got)
	}
	run(m, press(m, "a"))
	mustContain(t, screen(m), "no batch is waiting")
}

func TestAckKeysNeedManualMode(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{})
	feed(m, started(1))
	press(m, "a")
	mustContain(t, screen(m), "a works with --ack manual")
	if len(fs.Calls()) != 0 {
		t.Fatal(fs.Calls())
	}
}

func TestReplayFromBatch(t *testing.T) {
	rp := &fakeReplayer{}
	m, _ := newTestModel(t, 140, 40, Options{Replayer: rp})
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked))
	press(m, "tab", "r")
	f, ok := m.top().(*replayForm)
	if !ok {
		t.Fatal("r opened no form")
	}
	if got := f.input.Value(); got != "events:0:10-12 events:1:110-112" {
		t.Fatalf("prefill %q", got)
	}
	rp.planErr = &offsets.UsageError{Msg: `range "x": topic "x" does not exist`}
	run(m, press(m, "enter"))
	mustContain(t, screen(m), `topic "x" does not exist`)
	rp.planErr = nil
	cmd := press(m, "enter")
	run(m, cmd) // plan, then the replay's messages until its channel closes
	s := screen(m)
	mustContain(t, s, "REPLAY", "Replay events:0:10-12 events:1:110-112", "100%", "4 records", "done in",
		"events[0] 10 → 12", "v111")
	// w writes the records as JSON lines.
	path := filepath.Join(t.TempDir(), "out.jsonl")
	press(m, "w", "ctrl+u")
	typeText(m, path)
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "wrote 4 records to")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != 4 || !strings.Contains(string(b), `"value":"v110"`) {
		t.Fatalf("file:\n%s", b)
	}
	// The same path again is refused with the prompt still open, and
	// nothing is left behind; another name then works.
	press(m, "w", "ctrl+u")
	typeText(m, path)
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "exists; choose another name", "enter write")
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	typeText(m, ".2")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "wrote 4 records to "+path+".2")
	// A folder that does not exist is named, not a temporary file.
	press(m, "w", "ctrl+u")
	typeText(m, filepath.Join(filepath.Dir(path), "nope", "x.jsonl"))
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "no folder "+filepath.Join(filepath.Dir(path), "nope"))
	press(m, "esc")
	press(m, "esc")
	mustNotContain(t, screen(m), "REPLAY")
}

func TestReplayFromPartition(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	feed(m, started(2), progressEv(2, 1))
	press(m, "j", "r")
	if got := m.top().(*replayForm).input.Value(); got != "events:1:10-110" {
		t.Fatalf("prefill %q", got)
	}
}

func TestReplayUnavailable(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	press(m, "r")
	noViewOpen(t, m, "replay is not available")
}

func TestHelp(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	mustContain(t, screen(m), "P pause partition", "? help", "q quit")
	press(m, "?")
	mustContain(t, screen(m), "Help", "shift+tab", "seek the selected partition", "write the records to a file as JSON lines", "needs --ack manual")
	press(m, "esc")
	press(m, "3")
	mustContain(t, screen(m), "/ search", "y copy value")
}

// Spark batch ids start at 0 (kbatch spark): holding batch 0 must not
// fall back to following the newest when a batch arrives.
func TestBatchesHoldSparkBatchZero(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), batchEv(0, 2, 0, offsets.StateAcked), batchEv(1, 2, 2, offsets.StateAcked))
	press(m, "tab", "j") // batch 0
	if id := m.batches.selectedID(); id != 0 {
		t.Fatalf("selected %d, want 0", id)
	}
	feed(m, batchEv(2, 2, 4, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 0 {
		t.Fatalf("selected %d after a new batch, want 0 kept", id)
	}
	mustContain(t, screen(m), "holding 0 (g: follow)", "batch 0 ranges")
}

// Between two progress events (a second apart) the partitions follow the
// batches: NEXT is where the last batch ended and LAG shrinks with it; the
// next progress still has the last word (a seek back).
func TestPartitionsFollowBatchesBetweenProgress(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2)) // events[0] at 0 of 50, events[1] at 100 of 150
	mustContain(t, screen(m), "lag 100")
	feed(m, batchEv(1, 2, 20, offsets.StateAcked)) // [20,22) and [120,122)
	for i, want := range []int64{22, 122} {
		if r := m.parts.rows[i]; r.NextOffset != want || r.Stored != want || r.Lag != 28 {
			t.Fatalf("row %d after the batch: next %d stored %d lag %d; want next and stored %d, lag 28", i, r.NextOffset, r.Stored, r.Lag, want)
		}
	}
	mustContain(t, screen(m), "lag 56")
	// A batch past the last known high watermark raises it: NEXT never
	// shows above HWM.
	feed(m, batchEv(2, 1, 60, offsets.StateAcked)) // events[0] [60,62), past its high watermark 50
	if r := m.parts.rows[0]; r.NextOffset != 62 || r.HighWatermark != 62 || r.Lag != 0 {
		t.Fatalf("past the high watermark: next %d hwm %d lag %d, want 62, 62, 0", r.NextOffset, r.HighWatermark, r.Lag)
	}
	feed(m, progressEv(2, 5)) // next 10 and 110: a seek back
	if r := m.parts.rows[0]; r.NextOffset != 10 || r.HighWatermark != 50 || r.Lag != 40 {
		t.Fatalf("after progress: next %d hwm %d lag %d, want 10, 50 and 40", r.NextOffset, r.HighWatermark, r.Lag)
	}
}

// Wide batches are capped by their ranges as well as by count: a topic of
// many partitions keeps fewer batches, never fewer than the newest one.
func TestHistoryIsBoundedByRanges(t *testing.T) {
	h := newHistory()
	h.maxRanges = 10
	for id := uint64(1); id <= 8; id++ {
		h.add(batch(id, 2, 0, offsets.StateAcked)) // 2 ranges each: 5 kept
	}
	if h.len() != 5 || h.newest(0).ID != 8 || h.newest(4).ID != 4 || h.ranges != 10 {
		t.Fatalf("kept %d batches (%d ranges), newest %d oldest %d; want 5 (10), 8 and 4", h.len(), h.ranges, h.newest(0).ID, h.newest(h.len()-1).ID)
	}
	h.add(batch(8, 2, 0, offsets.StateAcked)) // the same batch again: replaced, not added
	if h.len() != 5 || h.ranges != 10 {
		t.Fatalf("after replacing batch 8: %d batches, %d ranges", h.len(), h.ranges)
	}
	h.add(batch(9, 12, 0, offsets.StateAcked)) // wider than the cap alone
	if h.len() != 1 || h.newest(0).ID != 9 || h.ranges != 12 {
		t.Fatalf("after a batch of 12 ranges: %d batches, %d ranges; want only batch 9", h.len(), h.ranges)
	}
}

// Visiting the records pane pauses following only while it has the focus;
// moving the selection in the batches pane holds a batch until g.
func TestBatchesFollowAfterVisitingRecords(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked))
	press(m, "3") // records pane
	feed(m, batchEv(2, 2, 2, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 1 {
		t.Fatalf("while the records pane has the focus the selection moved to %d", id)
	}
	mustContain(t, screen(m), "on 1 while its records are read")
	press(m, "1") // partitions pane
	feed(m, batchEv(3, 2, 4, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 3 {
		t.Fatalf("after leaving the records pane the selection stayed on %d, want the newest 3", id)
	}
	s := screen(m)
	if strings.Contains(s, "holding") || strings.Contains(s, "while its records") {
		t.Fatalf("title still holds after following again:\n%s", s)
	}
	press(m, "2", "j") // batches pane, select batch 2: hold it
	feed(m, batchEv(4, 2, 6, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 2 {
		t.Fatalf("held selection moved to %d", id)
	}
	mustContain(t, screen(m), "holding 2 (g: follow)")
	press(m, "1")
	feed(m, batchEv(5, 2, 8, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 2 {
		t.Fatalf("a held batch was let go when the focus left the pane: %d", id)
	}
	press(m, "2", "g")
	feed(m, batchEv(6, 2, 10, offsets.StateAcked))
	if id := m.batches.selectedID(); id != 6 {
		t.Fatalf("after g the selection is on %d, want the newest 6", id)
	}
}

// The seek form's figures follow the stream while it is open.
func TestSeekFormFiguresAreLive(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(3), progressEv(3, 1))
	press(m, "j", "s")
	mustContain(t, screen(m), "next 110 · log start 0 · high watermark 150 · lag 40")
	feed(m, batchEv(1, 3, 30, offsets.StateAcked)) // events[1] [130,132)
	mustContain(t, screen(m), "Seek events[1]", "next 132 · log start 0 · high watermark 150 · lag 18 · stored 132")
}

// enter on a batch shows its ranges and its sample records.
func TestBatchDetailShowsSamples(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked))
	press(m, "2", "enter")
	mustContain(t, screen(m), "Batch 1", "2 ranges [from, until)", "4 of 4 records sampled:",
		"events[0] @ 0", "user-0", `{"seq":0}`, "events[1] @ 101", "plain value")
}

// Rates come with the first progress event, a second in; before it the
// header says they are not measured yet rather than 0.
func TestHeaderRatesBeforeTheFirstProgress(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StateAcked))
	mustContain(t, screen(m), "– rec/s · – B/s", "acked 1 batch, 4 records")
	feed(m, progressEv(2, 10))
	mustContain(t, screen(m), "20 rec/s")
	mustNotContain(t, screen(m), "– rec/s")
}

// At the smallest screen the seek form drops its explanation before the
// figures, the input or the reason a seek was refused.
func TestSeekFormOnTheSmallestScreen(t *testing.T) {
	m, fs := newTestModel(t, 60, 16, Options{})
	feed(m, started(2), progressEv(2, 1))
	press(m, "s")
	fs.err = &offsets.UsageError{Msg: "cannot seek events[0] to 99999999: the partition holds offsets 0 to 50 (log start to high watermark)"}
	typeText(m, "99999999")
	run(m, press(m, "enter"))
	s := screen(m)
	mustContain(t, s, "next 10 · log start 0", "offset> 99999999", "holds offsets 0 to 50", "watermark)")
	mustNotContain(t, s, "Records read but not yet in a batch")
	checkGrid(t, m.View().Content, 60, 16)
}

// docs/design.md §2.5: data loss keeps a warning in the header and in the
// partition's STATE until x dismisses it; the footer offers x meanwhile,
// and the events pane keeps the event afterwards.
func TestDataLossWarningUntilDismissed(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(3), progressEv(3, 1))
	s := screen(m)
	mustNotContain(t, s, "DATA LOSS", "dismiss")
	if rowHas(s, "events[", "data loss") {
		t.Fatalf("a partition says data loss before any:\n%s", s)
	}
	e := offsets.NewEvent(t0, offsets.CodeDataLoss, part("events", 1), "events[1]: offset 120 was deleted")
	e.Expected, e.LogStart, e.To, e.Lost = 120, 500, 500, 380
	feed(m, &consumer.Notice{Event: e})
	s = screen(m)
	mustContain(t, s, "DATA LOSS 380 offsets on 1 partition · x dismisses", "x dismiss data loss")
	if !rowHas(s, "events[1]", "data loss") || rowHas(s, "events[0]", "data loss") {
		t.Fatalf("STATE should say data loss for events[1] alone:\n%s", s)
	}
	// Later progress does not clear it; more loss adds up.
	e2 := e
	e2.Partition, e2.Lost = 2, 20
	feed(m, progressEv(3, 1), &consumer.Notice{Event: e2})
	s = screen(m)
	mustContain(t, s, "DATA LOSS 400 offsets on 2 partitions")
	if !rowHas(s, "events[2]", "data loss") || !rowHas(s, "events[1]", "data loss") {
		t.Fatalf("STATE should say data loss for events[1] and [2]:\n%s", s)
	}
	press(m, "x")
	s = screen(m)
	mustNotContain(t, s, "DATA LOSS", "x dismiss")
	if rowHas(s, "events[1]", "data loss") || rowHas(s, "events[2]", "data loss") {
		t.Fatalf("STATE still says data loss after x:\n%s", s)
	}
	mustContain(t, s, "data-loss warning dismissed", "Events 2")
	press(m, "4", "enter")
	mustContain(t, screen(m), "lost        20 offsets") // the newest event

	// On a small screen the badge is short and still names the key.
	m, _ = newTestModel(t, 80, 24, Options{})
	feed(m, started(2), &consumer.Notice{Event: e})
	mustContain(t, screen(m), "DATA LOSS x dismisses")
}

// rowHas reports whether the screen line that holds name also holds want.
func rowHas(s, name, want string) bool {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, name) && strings.Contains(line, want) {
			return true
		}
	}
	return false
}

// TestBigSampleKeepsItsFirstMiBOnly: the screen keeps a batch's samples
// as the stream copied them, but of a value larger than maxKeptBytes only
// the first maxKeptBytes, in memory of its own: the kept record must not
// hold the whole value alive.
func TestBigSampleKeepsItsFirstMiBOnly(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	b := batch(1, 1, 0, offsets.StateAcked)
	big := bytes.Repeat([]byte("v"), 3*maxKeptBytes)
	b.Samples[0].Value = big
	b.Samples[1].Headers = []*krecord.Header{{Key: []byte("h"), Value: big}}
	feed(m, &consumer.BatchEvent{Batch: b})
	e := m.hist.ring[len(m.hist.ring)-1]
	for _, f := range []field{e.samples[0].Value, e.samples[1].Headers[0].Value} {
		if f.Size != len(big) || len(f.Data) != maxKeptBytes || !f.truncated() {
			t.Fatalf("kept %d of %d bytes (size %d), want the first %d", len(f.Data), len(big), f.Size, maxKeptBytes)
		}
		if cap(f.Data) >= len(big) {
			t.Fatalf("the kept bytes have a capacity of %d: they hold the whole %d-byte value", cap(f.Data), len(big))
		}
	}
	if v := e.samples[1].Value; string(v.Data) != "plain value" || v.truncated() {
		t.Fatalf("small sample value %q (size %d), want it whole", v.Data, v.Size)
	}
}

// An event's detail wraps its message at word boundaries (never "the
// 1659 of┃ fsets read" at 80 columns), and an event about a whole topic
// names the topic, not partition -1.
func TestEventDetailWrapsWords(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Options{})
	msg := "events[1]: the log was truncated at offset 10 (an unclean leader election: leader epoch 0 ends there now); the 1659 offsets read at 10 to 1668 are no longer in it; reading on at 10"
	e := offsets.NewEvent(t0, offsets.CodeDataLoss, part("events", 1), msg)
	r := offsets.NewEvent(t0, offsets.CodeRecreated, offsets.Partition{Topic: "events", Partition: -1}, "topic events was deleted and created again")
	feed(m, started(2), &consumer.Notice{Event: e}, &consumer.Notice{Event: r})
	press(m, "4", "enter") // the newest first
	s := screen(m)
	mustContain(t, s, "topic       events")
	mustNotContain(t, s, "[-1]")
	press(m, "esc", "down", "enter")
	s = screen(m)
	for _, word := range strings.Fields(msg) {
		if !strings.Contains(s, word) {
			t.Errorf("the detail splits %q:\n%s", word, s)
		}
	}
}
