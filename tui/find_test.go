package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// / searches the samples of every batch kept and the tail ring, newest
// first, marks the matches, and ] [ move between them in the detail.
func TestSearchWholeHistory(t *testing.T) {
	m := sixBatches(t, Options{Tail: NewTail(100)})
	// Records only the tail saw.
	press(m, "t")
	deliverTail(m, []*consumer.Batch{{Samples: tailMsgs(1, 900, 3)}}[0].Samples)
	press(m, "esc")

	press(m, "2", "/")
	typeText(m, `"SEQ":1`)
	s := screen(m)
	// Batches 1..6 hold seq 2, 4, … 12 on partition 0 and 102 … 112 on 1
	// (and "plain value" at the odd offsets); the tail 3 more records.
	mustContain(t, s, `Search ""SEQ":1" · 8 in 27 records kept`, `{"seq":112}`, `{"seq":102}`, `{"seq":12}`, `{"seq":10}`)
	mustNotContain(t, s, `{"seq":2}`, "plain value")
	if !strings.Contains(m.View().Content, matchOn+`"seq":1`+matchOff) {
		t.Fatal("matches are not marked")
	}
	if r := m.findView.list.selected(); r == nil || r.Offset != 112 {
		t.Fatalf("first match %v, want the newest (112)", r)
	}
	press(m, "enter") // to the matches
	press(m, "enter") // the first match in full
	mustContain(t, screen(m), "Record events[1] @ 112", "batch 6")
	press(m, "]")
	mustContain(t, screen(m), "Record events[1] @ 110", "batch 5")
	press(m, "[", "[")
	mustContain(t, screen(m), "Record events[1] @ 112", "no more matches that way")
	press(m, "esc")

	// The tail's records are searched too.
	press(m, "/", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
	typeText(m, "tail-90")
	mustContain(t, screen(m), `Search "tail-90" · 3 in 27 records kept`, "tail-900", "tail-902")
	press(m, "esc") // stops editing
	press(m, "esc") // closes
	if m.findView != nil || m.top() != nil {
		t.Fatal("esc did not close the search")
	}
}

// A record in the samples and in the tail shows once, with its batch.
func TestSearchShowsARecordOnce(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Tail: NewTail(100)})
	feed(m, started(1))
	press(m, "t")
	b := batch(1, 1, 0, offsets.StateAcked)
	deliverTail(m, b.Samples)
	press(m, "esc")
	feed(m, &consumer.BatchEvent{Batch: b})
	press(m, "3", "/")
	typeText(m, "seq")
	if n := len(m.findView.list.all); n != 1 || m.findView.list.all[0].Batch != 1 {
		t.Fatalf("%d matches, want the sample once", n)
	}
}

// f reads ranges on the broker keeping only matches, into the same list,
// with progress; esc stops a search that runs.
func TestSearchOnTheBroker(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	feed(m, started(2), progressEv(2, 1), batchEv(1, 2, 0, offsets.StateAcked))
	press(m, "3", "/")
	typeText(m, "V1")
	press(m, "enter", "f")
	f, ok := m.top().(*replayForm)
	if !ok || f.search != "V1" {
		t.Fatalf("f opened %T", m.top())
	}
	// Prefilled with what the kept batches cover, up to the next offsets.
	if got := f.input.Value(); got != "events:0:0-10 events:1:100-110" {
		t.Fatalf("prefilled %q", got)
	}
	mustContain(t, screen(m), "Search on the broker", `holds "V1"`)
	press(m, "ctrl+u")
	typeText(m, "events:0:0-30")
	run(m, press(m, "enter"))
	s := screen(m)
	// v1, v10..v19: 11 records of the 30 read; the samples had none.
	mustContain(t, s, "100% · 30 records read · 11 matches · done in", `Search "V1" · 0 in 4 records kept · 11 more on the broker`, "v19")
	mustNotContain(t, s, "v20")
	if n := len(m.findView.list.all); n != 11 {
		t.Fatalf("%d records in the list, want 11", n)
	}
	// The same search again adds nothing twice.
	press(m, "f", "ctrl+u")
	typeText(m, "events:0:0-30")
	run(m, press(m, "enter"))
	if n := len(m.findView.list.all); n != 11 {
		t.Fatalf("after a second search %d records in the list, want 11", n)
	}
}

// blockingReplayer reads one chunk, then waits for the context.
type blockingReplayer struct{ fakeReplayer }

func (r *blockingReplayer) Read(ctx context.Context, tasks []ReplayTask, emit func(ReplayChunk) error) error {
	recs := tailMsgs(0, tasks[0].Range.From, 5)
	if err := emit(ReplayChunk{Task: 0, Records: recs, Next: tasks[0].Range.From + 5}); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestSearchOnTheBrokerStops(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &blockingReplayer{}})
	feed(m, started(1), batchEv(1, 1, 0, offsets.StateAcked))
	press(m, "3", "/")
	typeText(m, "tail")
	press(m, "enter", "f", "ctrl+u")
	typeText(m, "events:0:0-100")
	cmd := press(m, "enter") // plan request
	for i := 0; i < 2 && cmd != nil; i++ {
		_, cmd = m.Update(cmd()) // plan, then the first chunk
	}
	if cmd == nil {
		t.Fatal("the search did not start")
	}
	_, next := m.Update(cmd()) // the first chunk's output
	mustContain(t, screen(m), "5 records read · 5 matches · reading… (esc stops)", "tail-4")
	press(m, "esc")
	s := screen(m)
	mustContain(t, s, "5 matches · stopped (esc)", "tail-4", `Search "tail"`)
	if m.findView == nil {
		t.Fatal("esc closed the search instead of stopping the broker search")
	}
	m.Update(next()) // the reader ends: nothing changes
	mustContain(t, screen(m), "stopped (esc)")
	press(m, "esc")
	if m.findView != nil {
		t.Fatal("the second esc did not close the search")
	}
}

// / in the partitions pane filters the partitions: by name, state or lag.
func TestPartitionsFilter(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	pr := progressEv(4, 1)
	pr.Partitions[1].Lag = 5000
	pr.Partitions[2].Lag = 0
	pr.Partitions[3].Paused = true
	feed(m, started(4), pr)
	rows := func() string {
		var out []string
		for i := 0; i < m.parts.rowCount(); i++ {
			out = append(out, m.parts.rows[m.parts.rowAt(i)].Partition.String())
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct{ q, want string }{
		{"lag>1000", "events[1]"},
		{"lag<=40", "events[0] events[2] events[3]"},
		{"lag=0", "events[2]"},
		{"paused", "events[3]"},
		{"live lag>0", "events[0] events[1]"},
		{"TS[2", "events[2]"},
		{"nothing", ""},
	} {
		press(m, "1", "/", "ctrl+u")
		typeText(m, tt.q)
		press(m, "enter")
		if got := rows(); got != tt.want {
			t.Errorf("%q shows %q, want %q", tt.q, got, tt.want)
		}
		if m.findView != nil {
			t.Fatal("/ in the partitions pane opened the record search")
		}
	}
	press(m, "/", "ctrl+u")
	typeText(m, "lag>x")
	mustContain(t, screen(m), "lag> needs a whole number")
	press(m, "esc")
	if got := rows(); got != "events[0] events[1] events[2] events[3]" {
		t.Fatalf("esc left %q", got)
	}
	press(m, "/")
	typeText(m, "lag>100")
	press(m, "enter")
	s := screen(m)
	mustContain(t, s, `Partitions 4 · lag 5080 · filter "lag>100" 1 of 4`, "/ lag>100  (1 of 4; esc clears)")
	// The selection is on a shown partition; s seeks it.
	if p, _ := m.parts.selected(); p.Partition.String() != "events[1]" {
		t.Fatalf("selected %s", p.Partition)
	}
	// A progress keeps the filter.
	feed(m, pr)
	if got := rows(); got != "events[1]" {
		t.Fatalf("after a progress %q", got)
	}
	checkGrid(t, m.View().Content, 140, 40)
	press(m, "esc")
	mustNotContain(t, screen(m), "filter")
}

func TestGoldenSearch(t *testing.T) {
	opts := Options{StorePath: "/home/me/.local/state/kbatch/offsets.db", Replayer: &fakeReplayer{}}
	for _, tt := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"search_140x40", 140, 40, []string{"3", "/", "s", "e", "q", "\"", ":", "1", "enter"}},
		{"search_broker_form_80x24", 80, 24, []string{"3", "/", "u", "s", "e", "r", "enter", "f"}},
		{"partitions_filter_112x45", 112, 45, []string{"/", "[", "2", "enter"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(runProgramSetup(t, tt.w, tt.h, opts, nil, goldenEvents(), tt.keys...)))
		})
	}
}

// A filtered partitions pane grows when a progress makes more partitions
// match (the wide layout fits it to its rows).
func TestPartitionsFilterFollowsLags(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	pr := progressEv(4, 1)
	feed(m, started(4), pr)
	press(m, "/")
	typeText(m, "lag>100")
	press(m, "enter")
	if n := m.parts.rowCount(); n != 0 {
		t.Fatalf("%d rows match lag>100", n)
	}
	pr = progressEv(4, 1)
	for i := range pr.Partitions {
		pr.Partitions[i].Lag = 500
	}
	feed(m, pr)
	s := screen(m)
	mustContain(t, s, "events[0]", "events[3]", `filter "lag>100" 4 of 4`)
	checkGrid(t, m.View().Content, 140, 40)
}

// Sorting (o) and filtering (/) the partitions go together: the filter
// keeps its partitions whatever the order.
func TestPartitionsFilterAndSort(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	pr := progressEv(4, 1)
	for i := range pr.Partitions {
		pr.Partitions[i].Lag = int64(100 * (i + 1))
	}
	feed(m, started(4), pr)
	press(m, "/")
	typeText(m, "lag>150")
	press(m, "enter", "o", "o")
	var got []string
	for i := 0; i < m.parts.rowCount(); i++ {
		got = append(got, m.parts.rows[m.parts.rowAt(i)].Partition.String())
	}
	if len(got) != 3 {
		t.Fatalf("after sorting, the filter shows %v, want the 3 partitions with lag > 150", got)
	}
	for _, p := range got {
		if p == "events[0]" {
			t.Fatalf("events[0] (lag 100) shows: %v", got)
		}
	}
}

// In a stream of two topics, a search whose matches all come from one of
// them still names the topic of each: orders[0], not 0.
func TestSearchNamesTheTopicInAStreamOfSeveral(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	st := startedWithOrders(1)
	b := batch(1, 1, 10, offsets.StateAcked)
	b.Ranges = append(b.Ranges, offsets.BatchRange{Range: offsets.Range{Partition: part("orders", 0), From: 0, Until: 1}, Records: 1})
	b.Records++
	b.Samples = append(b.Samples, msg("orders", 0, 0, "order-1", `{"total":3}`))
	feed(m, st, &consumer.BatchEvent{Batch: b})
	press(m, "2", "/")
	typeText(m, "order-1")
	s := screen(m)
	mustContain(t, s, "orders[0]")
	// The samples pane of a batch of one topic names it too.
	b2 := batch(2, 1, 12, offsets.StateAcked)
	press(m, "esc", "esc")
	feed(m, &consumer.BatchEvent{Batch: b2})
	mustContain(t, screen(m), "10:00:00.012") // b2's first sample
	mustContain(t, screen(m), "  events[0]  10:00:00.012")
}

// startedWithOrders is started(parts) over the topics events and orders,
// orders with one partition of 50 records.
func startedWithOrders(parts int) *consumer.Started {
	st := started(parts)
	st.Topics = []string{"events", "orders"}
	st.Starts = append(st.Starts, offsets.Start{Partition: part("orders", 0), Source: offsets.SourceStored,
		Bounds: offsets.Bounds{HighWatermark: 50}})
	return st
}
