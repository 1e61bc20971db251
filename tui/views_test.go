package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

func TestReplayFromBatchDetail(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked))
	press(m, "2", "enter")
	mustContain(t, screen(m), "Batch 1", "r replay")
	press(m, "r")
	f, ok := m.top().(*replayForm)
	if !ok {
		t.Fatal("r in the batch detail opened no replay form")
	}
	if got := f.input.Value(); got != "events:0:10-12 events:1:110-112" {
		t.Fatalf("prefill %q", got)
	}
	press(m, "esc")
	mustContain(t, screen(m), "Batch 1")
}

// Every key a binding answers to is explained in the help.
func TestHelpListsEveryKey(t *testing.T) {
	m, _ := newTestModel(t, 200, 60, Options{})
	press(m, "?")
	s := screen(m)
	k := m.c.keys
	for _, b := range []struct {
		name string
		keys []string
	}{
		{"Up", k.Up.Keys()}, {"Down", k.Down.Keys()}, {"Top", k.Top.Keys()}, {"Bottom", k.Bottom.Keys()},
		{"PageUp", k.PageUp.Keys()}, {"PageDown", k.PageDown.Keys()}, {"Enter", k.Enter.Keys()}, {"Back", k.Back.Keys()},
		{"Next", k.Next.Keys()}, {"Prev", k.Prev.Keys()}, {"PauseAll", k.PauseAll.Keys()}, {"PausePart", k.PausePart.Keys()},
		{"Seek", k.Seek.Keys()}, {"Replay", k.Replay.Keys()}, {"Ack", k.Ack.Keys()}, {"Step", k.Step.Keys()},
		{"Filter", k.Filter.Keys()}, {"Copy", k.Copy.Keys()}, {"Write", k.Write.Keys()}, {"SparkExport", k.SparkExport.Keys()},
		{"Help", k.Help.Keys()}, {"Quit", k.Quit.Keys()}, {"Decoded", k.Decoded.Keys()},
	} {
		for _, key := range b.keys {
			name := map[string]string{"up": "↑", "down": "↓"}[key]
			if name == "" {
				name = key
			}
			if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(name) + `(\s|,)`).MatchString(s) {
				t.Errorf("help does not explain %s key %q:\n%s", b.name, key, s)
			}
		}
	}
	mustContain(t, s, "1-4", "needs --ack manual", "90th percentile")
}

// The replay list follows the order of the ranges, whatever order the
// partitions were read in, and each range says how many records it had.
func TestReplayKeepsTheRangesOrder(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	tasks := []ReplayTask{
		{Spec: "events:0:10-12", Range: offsets.Range{Partition: part("events", 0), From: 10, Until: 12}},
		{Spec: "events:1:20-23", Range: offsets.Range{Partition: part("events", 1), From: 20, Until: 23}},
	}
	v := newReplayView(m.c, 1, []string{"events:0:10-12", "events:1:20-23"}, tasks, t0, &m.nextID)
	v.SetSize(136, 30)
	chunk := func(task int, p int32, from, until int64) replayItem {
		c := ReplayChunk{Task: task, Next: until}
		for o := from; o < until; o++ {
			c.Records = append(c.Records, msg("events", p, o, "k", fmt.Sprint("v", o)))
		}
		return replayItem{chunk: c}
	}
	v.add([]replayItem{chunk(1, 1, 20, 22)}, t0)
	v.add([]replayItem{chunk(0, 0, 10, 12), chunk(1, 1, 22, 23), {done: true}}, t0)
	var got []int64
	for _, r := range v.recs {
		got = append(got, r.Offset)
	}
	if fmt.Sprint(got) != "[10 11 20 21 22]" {
		t.Fatalf("records in order %v", got)
	}
	s := ansi.Strip(v.View())
	mustContain(t, s, "events[0] 10 → 12 · 2 records", "events[1] 20 → 23 · 3 records", "100%")
	if i, j := strings.Index(s, "v10"), strings.Index(s, "v20"); i < 0 || j < i {
		t.Fatalf("list not in range order:\n%s", s)
	}
}

// The record detail wraps long values with their indent, shows a final
// line break as \r\n, and fits a hex dump to narrow screens.
func TestRecordDetailText(t *testing.T) {
	long := strings.Repeat("word ", 30) + "end\r\n"
	bin := string([]byte{0xff, 0xca, 0xfe, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	th := newTheme()
	r := newRecord(msg("events", 0, 5, "k", long), 1)
	s := ansi.Strip(recordDetail(&th, r, time.UTC, 60))
	mustContain(t, s, `word end\r\n`, "headers    1 · 9 B", "  source = web")
	for _, l := range strings.Split(s, "\n") {
		if ansi.StringWidth(l) > 60 {
			t.Fatalf("line wider than 60: %q", l)
		}
		if strings.Contains(l, "word") && !strings.HasPrefix(l, "  word") {
			t.Fatalf("a wrapped line lost its indent: %q", l)
		}
	}
	r = newRecord(msg("events", 0, 6, "k", bin), 1)
	narrow := ansi.Strip(recordDetail(&th, r, time.UTC, 60))
	mustContain(t, narrow, "binary, hex", "00000000  ff ca fe 00 01 02 03 04  |........|", "00000010  0d")
	wide := ansi.Strip(recordDetail(&th, r, time.UTC, 100))
	mustContain(t, wide, "00000000  ff ca fe 00 01 02 03 04  05 06 07 08 09 0a 0b 0c  |................|")
}

// The seek and replay forms are boxes over the live screen: the panes
// stay in sight around them.
func TestFormsAreDialogs(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &fakeReplayer{}})
	feed(m, twoTopics()...)
	press(m, "j", "s")
	s := screen(m)
	mustContain(t, s, "Seek events[1]", "offset>", "> events[1]", "Events 0", "Partitions 5")
	checkGrid(t, m.View().Content, 140, 40)
	press(m, "esc", "2", "r")
	s = screen(m)
	mustContain(t, s, "ranges> ", "Partitions 5", "Events 0")
	checkGrid(t, m.View().Content, 140, 40)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	s = screen(m)
	mustContain(t, s, "ranges> ", "1 Partitions  2 Batches")
	checkGrid(t, m.View().Content, 80, 24)
}

// e shows the selected batch (or the one in the detail) as Spark options
// and copies them.
func TestSparkExport(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), batchEv(1, 2, 10, offsets.StateAcked), batchEv(2, 2, 12, offsets.StateAcked))
	press(m, "e")
	mustContain(t, screen(m), "e exports the selected batch")
	press(m, "2", "j")
	if cmd := press(m, "e"); cmd == nil {
		t.Fatal("e gave no clipboard command")
	}
	s := screen(m)
	mustContain(t, s, "Spark options · batch 1", "startingOffsets=", "endingOffsets=", "copied batch 1's startingOffsets/endingOffsets")
	press(m, "esc", "enter", "e") // from the batch detail
	mustContain(t, screen(m), "Spark options · batch 1")
}

// The record detail names the timestamp's type, as the batch carried it.
func TestRecordDetailTimestampType(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	b := batch(1, 1, 10, offsets.StateAcked)
	b.Samples[1].LogAppendTime = true
	feed(m, started(1), &consumer.BatchEvent{Batch: b})
	press(m, "3", "enter")
	mustContain(t, screen(m), "10:00:00.010 UTC · CreateTime")
	press(m, "esc", "j", "enter")
	mustContain(t, screen(m), "10:00:00.011 UTC · LogAppendTime")
}

// Help at 80×24 is longer than the screen: its title says there is more
// and which way, and follows the scrolling.
func TestHelpScrollsWithAMoreMark(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Options{})
	feed(m, started(1))
	press(m, "?")
	mustContain(t, screen(m), "Help · every key · ↓ more · lines 1-")
	press(m, "j")
	mustContain(t, screen(m), "↑↓ more · lines 2-")
	press(m, "G")
	mustContain(t, screen(m), "↑ more · lines ")
	m2, _ := newTestModel(t, 140, 120, Options{})
	press(m2, "?")
	mustNotContain(t, screen(m2), "more ·")
}
