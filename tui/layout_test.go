package tui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// twoTopics is a stream over events[0..1] and sensor-data[0..2], with
// progress, two batches over all five and a sample of each topic.
func twoTopics() []consumer.Event {
	parts := []offsets.Partition{part("events", 0), part("events", 1), part("sensor-data", 0), part("sensor-data", 1), part("sensor-data", 2)}
	st := &consumer.Started{Stream: "demo", Topics: []string{"events", "sensor-data"}}
	pr := &consumer.Progress{Time: t0, Rate: 300, ByteRate: 40e3}
	for i, p := range parts {
		st.Starts = append(st.Starts, offsets.Start{Partition: p, NextOffset: 1000, Source: offsets.SourceResetEarly,
			Bounds: offsets.Bounds{LogStart: 250, HighWatermark: 1000}})
		pr.Partitions = append(pr.Partitions, consumer.PartitionStatus{Partition: p, Source: offsets.SourceResetEarly,
			NextOffset: 1000 + int64(i), Stored: 1000, Bounds: offsets.Bounds{LogStart: 250 + int64(i), HighWatermark: 1234567}, Lag: 1233567, Rate: 60})
	}
	evs := []consumer.Event{st, pr}
	for id := uint64(1); id <= 2; id++ {
		b := &consumer.Batch{Batch: offsets.Batch{ID: id, Time: t0, State: offsets.StateAcked}}
		for _, p := range parts {
			b.Ranges = append(b.Ranges, offsets.BatchRange{Range: offsets.Range{Partition: p, From: 1000, Until: 1010}, Records: 10})
			b.Samples = append(b.Samples, msg(p.Topic, p.Partition, 1000, "sensor-008", `{"v":1}`))
		}
		evs = append(evs, &consumer.BatchEvent{Batch: b})
	}
	return evs
}

// checkGrid fails unless s is exactly h lines of exactly w columns.
func checkGrid(t *testing.T, s string, w, h int) {
	t.Helper()
	lines := strings.Split(s, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), h, s)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d columns, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

// The partitions pane shows every column docs/design.md §6 lists, is as tall as
// its rows, and the events pane's empty message is whole.
func TestWidePartitionsPane(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	evs := twoTopics()
	feed(m, evs...)
	feed(m, evs[1]) // a second progress: two trend marks
	s := screen(m)
	lines := strings.Split(s, "\n")
	head := lines[3]
	for _, col := range []string{"PARTITION", "SOURCE", "NEXT", "LOG START", "HWM", "LAG", "REC/S", "STATE", "TREND"} {
		if !strings.Contains(head, col) {
			t.Fatalf("partitions header lacks %s: %q", col, head)
		}
	}
	mustContain(t, lines[8], "sensor-data[2]", "reset-earliest", "1004", "254", "1234567", "1233567", "60", "live", "██")
	if !strings.HasPrefix(lines[9], "┗") {
		t.Fatalf("partitions pane is not fitted to its 5 rows:\n%s", s)
	}
	mustContain(t, s, "no events: seeks, resets, data loss and broker errors show here")
	checkGrid(t, m.View().Content, 140, 40)
}

// Every screen of every size is exactly the terminal's size: nothing
// wraps, nothing is left over, whatever is open.
func TestEverySizeFillsTheScreen(t *testing.T) {
	views := map[string][]string{
		"main":    nil,
		"tab3":    {"3"},
		"help":    {"?"},
		"seek":    {"s", "x", "enter"},
		"record":  {"3", "enter"},
		"batch":   {"2", "enter"},
		"filter":  {"/", "s"},
		"replay":  {"2", "r"},
		"events4": {"4"},
		"tail":    {"t", "z"},
		"search":  {"3", "/", "s", "e", "q", "enter", "V"},
		"pfilter": {"/", "l"},
		"broker":  {"3", "/", "s", "enter", "f"},
	}
	for _, size := range [][2]int{{60, 16}, {80, 24}, {100, 30}, {119, 31}, {120, 32}, {140, 40}, {200, 60}, {59, 40}, {300, 15}, {112, 45}, {80, 38}} {
		for name, keys := range views {
			t.Run(fmt.Sprintf("%dx%d/%s", size[0], size[1], name), func(t *testing.T) {
				m, _ := newTestModel(t, size[0], size[1], Options{ManualAck: true, Replayer: &fakeReplayer{}, Tail: NewTail(10),
					StorePath: "/home/someone/with/a/very/long/state/directory/kbatch/offsets.db"})
				feed(m, twoTopics()...)
				press(m, keys...)
				checkGrid(t, m.View().Content, size[0], size[1])
			})
		}
	}
}

// The footer drops pane keys before ? and q, and keeps a and n in
// manual-ack mode.
func TestFooterKeepsTheEssentials(t *testing.T) {
	for _, w := range []int{60, 80, 140} {
		m, _ := newTestModel(t, w, 24, Options{ManualAck: true, Replayer: &fakeReplayer{}})
		feed(m, twoTopics()...)
		lines := strings.Split(screen(m), "\n")
		footer := lines[len(lines)-1]
		mustContain(t, footer, "a ack batch", "n next batch", "? help", "q quit")
		mustNotContain(t, footer, "…")
	}
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, twoTopics()...)
	run(m, press(m, "space"))
	mustContain(t, screen(m), "space resume all")
}

// A long store path keeps its file name on a narrow screen; three brokers
// become the first and a count.
func TestHeaderOnANarrowScreen(t *testing.T) {
	brokers := []string{"kafka-1.example.com:9092", "kafka-2.example.com:9092", "kafka-3.example.com:9092"}
	m, _ := newTestModel(t, 80, 24, Options{StorePath: "/home/someone/.local/state/kbatch/offsets.db", Brokers: brokers})
	mustContain(t, screen(m), "brokers kafka-1.example.com:9092 +2", "store …", "/kbatch/offsets.db", "LIVE")
	m, _ = newTestModel(t, 80, 24, Options{StorePath: "/home/someone/.local/state/kbatch/offsets.db", Brokers: brokers, Cluster: "prod"})
	mustContain(t, screen(m), "cluster prod brokers kafka-1.example.com:9092 +2  topics")
}

func TestSparkRender(t *testing.T) {
	var s spark
	if got := s.render(5); got != "" {
		t.Fatalf("empty spark %q", got)
	}
	for _, v := range []float64{0, 10, 20, 40} {
		s.add(v)
	}
	if got := s.render(8); got != "▁▂▄█" { // linear up to the 90th percentile (40)
		t.Fatalf("render(8) = %q", got)
	}
	if got := s.render(2); got != "▄█" { // the latest two, scaled to them
		t.Fatalf("render(2) = %q", got)
	}
	// One burst among steady values is a full block; it does not
	// flatten the rest.
	for _, v := range []float64{2000, 40, 40, 20, 40, 40, 40, 40, 40, 40, 40} {
		s.add(v)
	}
	if got := s.render(12); got != "████▄███████" {
		t.Fatalf("render after a burst = %q", got)
	}
	for i := 0; i < sparkHistory+3; i++ {
		s.add(0)
	}
	if got := s.render(3); got != "▁▁▁" {
		t.Fatalf("idle render = %q", got)
	}
	if got := len([]rune(s.render(500))); got != sparkHistory {
		t.Fatalf("render(500) has %d marks, want the %d kept", got, sparkHistory)
	}
}

func TestLayoutColumns(t *testing.T) {
	cols := []column{
		{title: "A", width: 4, priority: 0},
		{title: "B", width: 6, priority: 2},
		{title: "C", width: 5, priority: 1, flex: true, maxWidth: 8},
	}
	titles := func(cs []column) string {
		var s []string
		for _, c := range cs {
			s = append(s, fmt.Sprintf("%s%d/%d", c.title, c.width, c.gap))
		}
		return strings.Join(s, " ")
	}
	for _, tt := range []struct {
		w    int
		want string
	}{
		{100, "A4/2 B6/2 C8/2"}, // two spaces apart, C capped at 8
		{20, "A4/2 B6/2 C5/2"},  // 4+2+6+2+5 = 19, one blank at the end
		{18, "A4/1 B6/1 C5/1"},  // one space apart
		{12, "A4/1 C6/1"},       // B goes first
		{4, ""},
	} {
		if got := titles(layoutColumns(cols, tt.w)); got != tt.want {
			t.Errorf("layoutColumns(%d) = %q, want %q", tt.w, got, tt.want)
		}
	}
	row := renderRow(layoutColumns(cols, 20), []string{"a", "b", "c"})
	if row != "a     b       c    " {
		t.Errorf("row %q", row)
	}
}

// Content-sized columns grow with their content and do not shrink back,
// so the table does not jitter as lags come and go.
func TestColumnsFollowContentAndStay(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(2), progressEv(2, 1))
	width := func(title string) int {
		for _, c := range m.parts.cols {
			if c.title == title {
				return c.width
			}
		}
		return -1
	}
	if w := width("LAG"); w != 3 {
		t.Fatalf("LAG is %d wide, want 3 (the title)", w)
	}
	big := progressEv(2, 1)
	big.Partitions[1].Lag = 123456789
	feed(m, big)
	if w := width("LAG"); w != 9 {
		t.Fatalf("LAG is %d wide, want 9", w)
	}
	feed(m, progressEv(2, 1))
	if w := width("LAG"); w != 9 {
		t.Fatalf("LAG shrank to %d", w)
	}
}

// Records of two topics show whole partition labels.
func TestRecordsShowWholePartitionLabels(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, twoTopics()...)
	mustContain(t, screen(m), "sensor-data[2]  ", "events[0]")
	mustNotContain(t, screen(m), "senso…")
}

func TestManualAckWaitingStatus(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{ManualAck: true})
	feed(m, started(2), batchEv(1, 2, 0, offsets.StatePlanned))
	mustContain(t, screen(m), "batch 1 (4 records) waits for its ack: a acks it")
}

// The batches title says when the selection holds a batch instead of
// following new ones.
func TestBatchesTitleSaysHolding(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, started(1), batchEv(1, 1, 0, offsets.StateAcked), batchEv(2, 1, 2, offsets.StateAcked))
	mustContain(t, screen(m), "Batches 2 · latest 2")
	mustNotContain(t, screen(m), "holding")
	press(m, "2", "j")
	feed(m, batchEv(3, 1, 4, offsets.StateAcked))
	mustContain(t, screen(m), "Batches 3 · latest 3 · holding 1 (g: follow)")
	press(m, "g")
	mustNotContain(t, screen(m), "holding")
}

// NO_COLOR (the Ascii profile) keeps attributes but no colour; with every
// colour available the screen still uses only the 16 ANSI colours.
func TestColourProfiles(t *testing.T) {
	sgr := regexp.MustCompile(`\x1b\[([0-9;:]*)m`)
	colour := func(p string) bool {
		n, err := strconv.Atoi(p)
		return err == nil && (n >= 30 && n <= 37 || n >= 40 && n <= 47 || n >= 90 && n <= 97 || n >= 100 && n <= 107)
	}
	for _, tt := range []struct {
		profile colorprofile.Profile
		bad     func(param string) bool
	}{
		{colorprofile.Ascii, func(p string) bool { return colour(p) || p == "38" || p == "48" || p == "58" }},
		{colorprofile.TrueColor, func(p string) bool { return p == "38" || p == "48" || p == "58" || strings.Contains(p, ":") }},
	} {
		r := runProgramProfile(t, tt.profile, 140, 40, Options{ManualAck: true}, twoTopics(), "2", "j")
		attrs := 0
		for _, m := range sgr.FindAllSubmatch(r.raw, -1) {
			for _, p := range strings.Split(string(m[1]), ";") {
				if tt.bad(p) {
					t.Fatalf("%v: SGR %q", tt.profile, m[1])
				}
				if p == "7" {
					attrs++
				}
			}
		}
		if attrs == 0 {
			t.Fatalf("%v: no reverse video: the selection would not show", tt.profile)
		}
	}
}

func TestHeaderShowsClusterAndUnverifiedTLS(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Cluster: "prod", InsecureTLS: true, Brokers: []string{"b:9092"}})
	view := screen(m)
	for _, want := range []string{"cluster prod", "TLS NOT VERIFIED"} {
		if !strings.Contains(view, want) {
			t.Errorf("header lacks %q:\n%s", want, view)
		}
	}
}
