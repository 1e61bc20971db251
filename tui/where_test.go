package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

// / with a query that starts with ? evaluates it as an expression over
// every kept record: a record it fails on (no field seq) does not match;
// an expression that does not compile says where, and matches nothing.
func TestSearchExpression(t *testing.T) {
	m := sixBatches(t, Options{})
	press(m, "2", "/")
	typeText(m, `?value.seq > 105 && partition == 1 && headers.source == "web"`)
	evaluated(m)
	s := screen(m)
	// Partition 1 holds seq 102, 104 … 112: 106, 108, 110, 112 match; the
	// "plain value" records have no seq.
	mustContain(t, s, `Search "?value.seq > 105 && partition == 1 && headers.source == "web"" · 4 in 24 records kept`, `{"seq":106}`, `{"seq":112}`)
	mustNotContain(t, s, `{"seq":104}`, `{"seq":12}`, "plain value")
	press(m, "ctrl+u")
	typeText(m, `?value.seq >`)
	mustContain(t, screen(m), `Search "?value.seq >": column 12: Syntax error: the expression ends too early`)
	if n := len(m.findView.list.all); n != 0 {
		t.Fatalf("an expression that does not compile matched %d records", n)
	}
	// A query without ? is a substring, whatever it holds.
	press(m, "ctrl+u")
	typeText(m, `"seq":11`)
	mustContain(t, screen(m), `· 2 in 24 records kept`)
}

// An expression reads the decoded value where a schema applies.
func TestSearchExpressionDecoded(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec})
	feed(m, orderBatch(1, 4))
	press(m, "3", "/")
	typeText(m, `?value.customer == "alice" && value.order_id != "o-1"`)
	evaluated(m)
	s := screen(m)
	mustContain(t, s, `· 3 in 5 records kept`, `"order_id":"o-3"`)
	mustNotContain(t, s, `"order_id":"o-1"`, "not framed")
}

// f runs an expression on the broker: the reader evaluates it on its own
// goroutine and hands over the matches; one that does not compile starts
// no search.
func TestSearchExpressionOnTheBroker(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	feed(m, started(2), progressEv(2, 1), batchEv(1, 2, 0, offsets.StateAcked))
	press(m, "3", "/")
	typeText(m, `?value.startsWith("v1") && offset > 10`)
	press(m, "enter", "f", "ctrl+u")
	typeText(m, "events:0:0-30")
	run(m, press(m, "enter"))
	s := screen(m)
	mustContain(t, s, "100% · 30 records read · 9 matches · done in", "v11", "v19")
	mustNotContain(t, s, "v10 ", "v20")
	if n := len(m.findView.list.all); n != 9 {
		t.Fatalf("%d records in the list, want 9 (v11 … v19)", n)
	}

	press(m, "/", "ctrl+u")
	typeText(m, `?offset >`)
	press(m, "enter")
	if cmd := press(m, "f"); cmd != nil {
		run(m, cmd)
	}
	if _, ok := m.top().(*replayForm); ok {
		press(m, "ctrl+u")
		typeText(m, "events:0:0-30")
		run(m, press(m, "enter"))
	}
	mustContain(t, screen(m), "column")
	if b := m.findView.broker; b != nil && b.query == `?offset >` {
		t.Fatal("a broker search started with an expression that does not compile")
	}
}

// The tail view's filter takes an expression too.
func TestTailFilterExpression(t *testing.T) {
	m := tailTyped(t, 50, 100, 50, `?offset >= 140 && offset < 145 && key.endsWith("2") == false`)
	press(m, "enter")
	evaluated(m)
	s := screen(m)
	mustContain(t, s, "tail-140", "tail-144", `4 of 50`)
	mustNotContain(t, s, "tail-142", "tail-139", "tail-145")
}

// The replay view's filter takes an expression too.
func TestReplayFilterExpression(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked))
	press(m, "tab", "r")
	run(m, press(m, "enter"))
	mustContain(t, screen(m), "Replay events:0:10-12 events:1:110-112", "v111")
	press(m, "/")
	typeText(m, `?partition == 1 && value == "v110"`)
	press(m, "enter")
	evaluated(m)
	s := screen(m)
	mustContain(t, s, `/ ?partition == 1 && value == "v110"  (1 of 4 records; esc clears)`, "v110")
	mustNotContain(t, s, "v111", "v10 ", "v11 ")
	press(m, "/", "backspace")
	mustContain(t, screen(m), "not an expression kbatch can run: column 28: Syntax error")
}

// evaluated runs the expression evaluations the model started, each as
// bubbletea runs a command, until none is left.
func evaluated(m *Model) {
	for len(m.c.running) > 0 {
		m.Update(m.c.running[0].run())
	}
}

// An expression is evaluated off the screen's goroutine, on every record
// of a long tail: the key press returns with "filtering…" and no match
// yet, and the matches show when the evaluation answers.
func TestTailExpressionEvaluatesInTheBackground(t *testing.T) {
	n := 25_000
	m := tailTyped(t, n, 0, n, `?offset < 600`)
	press(m, "enter")
	if len(m.c.running) == 0 {
		t.Fatal("no evaluation was started off the screen's goroutine")
	}
	s := screen(m)
	mustContain(t, s, `(filtering… 0 so far in 25000 records; esc clears)`, "filtering…")
	mustNotContain(t, s, "tail-599")
	evaluated(m)
	// The oldest records are searched too: offsets 0 … 599.
	mustContain(t, screen(m), `(600 of 25000 records; esc clears)`)
	if n := len(m.tailView.list.shown); n != 600 {
		t.Fatalf("%d matches, want 600", n)
	}
	press(m, "esc", "/")
	typeText(m, "tail-1")
	press(m, "enter")
	if len(m.c.running) != 0 {
		t.Fatal("a substring was evaluated off the screen's goroutine")
	}
	want := 0
	for o := range n {
		if strings.HasPrefix(fmt.Sprint(o), "1") {
			want++
		}
	}
	mustContain(t, screen(m), fmt.Sprintf(`(%d of %d records; esc clears)`, want, n))
}

// The answer of an evaluation for a query typed over since is dropped:
// only the last query's matches show.
func TestStaleExpressionResultDropped(t *testing.T) {
	m := tailTyped(t, 500, 0, 300, `?offset < 10`)
	if len(m.c.running) == 0 {
		t.Fatal("no evaluation running")
	}
	stale := m.c.running[len(m.c.running)-1] // ?offset < 10
	typeText(m, `0`)                         // ?offset < 100
	m.Update(stale.run())
	l := m.tailView.list
	if len(l.shown) != 0 || !l.filtering() {
		t.Fatalf("the stale answer showed: %d matches, filtering %v", len(l.shown), l.filtering())
	}
	evaluated(m)
	if len(l.shown) != 100 || l.filtering() {
		t.Fatalf("%d matches (filtering %v), want 100", len(l.shown), l.filtering())
	}
}

// Records that arrive while a filter is on are evaluated in the
// background too, also while an evaluation is in flight, and records
// dropped from the ring's front meanwhile drop out of the matches.
func TestTailExpressionNewRecords(t *testing.T) {
	m := tailTyped(t, 100, 0, 50, `?offset % 10 == 0`)
	press(m, "enter")
	// In flight on 0 … 49; 50 … 119 arrive and 0 … 19 leave the ring.
	deliverTail(m, tailMsgs(0, 50, 70))
	evaluated(m)
	l := m.tailView.list
	var got []int64
	for _, i := range l.shown {
		got = append(got, l.all[i].Offset)
	}
	if fmt.Sprint(got) != "[20 30 40 50 60 70 80 90 100 110]" {
		t.Fatalf("matches %v, want 20 … 110 by tens", got)
	}
	deliverTail(m, tailMsgs(0, 120, 5))
	if !l.filtering() {
		t.Fatal("new records were not handed to an evaluation")
	}
	evaluated(m)
	mustContain(t, screen(m), `(10 of 100 records; esc clears)`) // 30 … 120: 20 left the ring
}

// The search of what the screen keeps evaluates an expression off the
// screen's goroutine and says so meanwhile.
func TestSearchExpressionInTheBackground(t *testing.T) {
	m := sixBatches(t, Options{})
	press(m, "2", "/")
	typeText(m, `?value.seq > 105`)
	mustContain(t, screen(m), `Search "?value.seq > 105" · filtering 24 records kept…`, "filtering…")
	evaluated(m)
	mustContain(t, screen(m), `Search "?value.seq > 105" · `)
	mustNotContain(t, screen(m), "filtering")
}

// When a schema arrives the filter is evaluated again, and the selection
// stays where it was once the matches are in.
func TestExpressionKeepsSelectionWhenSchemasArrive(t *testing.T) {
	m := tailTyped(t, 100, 0, 100, `?offset % 2 == 0`)
	press(m, "enter")
	evaluated(m)
	l := m.tailView.list
	l.cur.sel = 7
	l.schemasChanged()
	if !l.filtering() {
		t.Fatal("no evaluation after the schemas changed")
	}
	evaluated(m)
	if l.cur.sel != 7 || len(l.shown) != 50 {
		t.Fatalf("selection %d of %d matches, want 7 of 50", l.cur.sel, len(l.shown))
	}
}

// A pasted expression that does not compile is the user's text, and so
// is CEL's message quoting it: the filter's status, which the records,
// tail and all-records panes put in their titles, shows an ESC in it
// escaped, never raw.
func TestFilterStatusOfABadExpressionIsEscaped(t *testing.T) {
	l := &recordList{common: &common{}, query: "?value == \x1b[31mX"}
	s := l.filterStatus()
	if strings.Contains(s, "\x1b") || !strings.HasPrefix(s, `filter "?value == \x1b[31mX": column`) {
		t.Fatalf("filter status %q: want the query and CEL's message escaped", s)
	}
}

// tailTyped is a model whose tail view, a ring of ring records, got n
// records from offset from (partition 0), with expr typed in its filter
// and not yet entered.
func tailTyped(t *testing.T, ring int, from int64, n int, expr string) *Model {
	t.Helper()
	m, _ := newTestModel(t, 140, 40, Options{Tail: NewTail(ring)})
	feed(m, started(1))
	press(m, "t")
	deliverTail(m, tailMsgs(0, from, n))
	press(m, "/")
	typeText(m, expr)
	return m
}

// sixBatches is a 140×40 model with opts over a stream of two partitions
// that acked batches 1 to 6, two records a partition each.
func sixBatches(t *testing.T, opts Options) *Model {
	t.Helper()
	m, _ := newTestModel(t, 140, 40, opts)
	feed(m, started(2))
	for id := uint64(1); id <= 6; id++ {
		feed(m, batchEv(id, 2, int64(2*id), offsets.StateAcked))
	}
	return m
}
