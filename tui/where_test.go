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
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2))
	for id := uint64(1); id <= 6; id++ {
		feed(m, batchEv(id, 2, int64(2*id), offsets.StateAcked))
	}
	press(m, "2", "/")
	typeText(m, `?value.seq > 105 && partition == 1 && headers.source == "web"`)
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
	m, _ := newTestModel(t, 140, 40, Options{Tail: NewTail(50)})
	feed(m, started(1))
	press(m, "t")
	deliverTail(m, tailMsgs(0, 100, 50))
	press(m, "/")
	typeText(m, `?offset >= 140 && offset < 145 && key.endsWith("2") == false`)
	press(m, "enter")
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
	s := screen(m)
	mustContain(t, s, `/ ?partition == 1 && value == "v110"  (1 of 4 records; esc clears)`, "v110")
	mustNotContain(t, s, "v111", "v10 ", "v11 ")
	press(m, "/", "backspace")
	mustContain(t, screen(m), "not an expression kbatch can run: column 28: Syntax error")
}

// An expression is evaluated on the newest maxExprRecords of a long tail
// only, so a key press never waits for a million evaluations; the status
// says so. A substring still searches them all.
func TestTailExpressionOnTheNewest(t *testing.T) {
	n := maxExprRecords + 500
	m, _ := newTestModel(t, 140, 40, Options{Tail: NewTail(n)})
	feed(m, started(1))
	press(m, "t")
	deliverTail(m, tailMsgs(0, 0, n))
	press(m, "/")
	typeText(m, `?offset < 600`)
	press(m, "enter")
	// Offsets 500 … 599 are among the newest; 0 … 499 are not searched.
	mustContain(t, screen(m), fmt.Sprintf(`filter "?offset < 600" 100 of the newest %d of %d`, maxExprRecords, n))
	press(m, "esc", "/")
	typeText(m, "tail-1")
	press(m, "enter")
	want := 0
	for o := range n {
		if strings.HasPrefix(fmt.Sprint(o), "1") {
			want++
		}
	}
	mustContain(t, screen(m), fmt.Sprintf(`filter "tail-1" %d of %d`, want, n))
}
