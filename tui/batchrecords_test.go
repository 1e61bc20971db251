package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// logReplayer serves the records of a log held in the test: every offset
// for which has returns true holds a record (false: compacted away or a
// transaction marker). It hands them out in chunks of 64, as fetches do,
// and counts the records it emitted. Reads may run at once (G pressed
// while the first page is read).
type logReplayer struct {
	has     func(p offsets.Partition, off int64) bool
	mu      sync.Mutex
	emitted int
}

func (r *logReplayer) Plan(context.Context, []string) ([]ReplayTask, error) { return nil, nil }

func (r *logReplayer) Read(ctx context.Context, tasks []ReplayTask, emit func(ReplayChunk) error) error {
	for i, t := range tasks {
		var recs []*krecord.Record
		flush := func(next int64) error {
			r.mu.Lock()
			r.emitted += len(recs)
			r.mu.Unlock()
			err := emit(ReplayChunk{Task: i, Records: recs, Next: next})
			recs = nil
			return err
		}
		for o := t.Range.From; o < t.Range.Until; o++ {
			if r.has == nil || r.has(t.Range.Partition, o) {
				recs = append(recs, msg(t.Range.Topic, t.Range.Partition.Partition, o, "k", fmt.Sprintf("v%d", o)))
			}
			if len(recs) == 64 {
				if err := flush(o + 1); err != nil {
					return err
				}
			}
		}
		if err := flush(t.Range.Until); err != nil {
			return err
		}
	}
	return nil
}

// bigBatch is one batch of n records on events[0] from offset 0 and m on
// events[1] from 1000.
func bigBatch(n, m int64) consumer.Event {
	b := &consumer.Batch{Batch: offsets.Batch{ID: 1, Time: t0, State: offsets.StateAcked}}
	b.Ranges = []offsets.BatchRange{
		{Range: offsets.Range{Partition: part("events", 0), From: 0, Until: n}, Records: n},
		{Range: offsets.Range{Partition: part("events", 1), From: 1000, Until: 1000 + m}, Records: m},
	}
	b.Records = n + m
	for o := int64(0); o < 5; o++ {
		b.Samples = append(b.Samples, msg("events", 0, o, "k", "v"))
	}
	return &consumer.BatchEvent{Batch: b}
}

func openRecordsOf(t *testing.T, rd Replayer, ev consumer.Event) (*Model, *fakeStream, *recordsView) {
	t.Helper()
	m, fs := newTestModel(t, 140, 40, Options{Replayer: rd})
	feed(m, started(2), ev)
	run(m, press(m, "2", "enter"))
	v, ok := m.top().(*recordsView)
	if !ok {
		t.Fatalf("enter on a batch opened %T, not its records", m.top())
	}
	return m, fs, v
}

func checkWindow(t *testing.T, v *recordsView) {
	t.Helper()
	if n := len(v.list.all); n > windowPages*pageRecords {
		t.Fatalf("the view keeps %d records, more than %d pages of %d", n, windowPages, pageRecords)
	}
	for i := 1; i < len(v.list.all); i++ {
		a, b := v.list.all[i-1], v.list.all[i]
		if v.index[a.Partition] > v.index[b.Partition] || a.Partition == b.Partition && a.Offset >= b.Offset {
			t.Fatalf("records out of order: %s@%d before %s@%d", a.Partition, a.Offset, b.Partition, b.Offset)
		}
	}
}

// Every record of a batch of 6000 + 300 can be reached: j walks the
// first partition's records one by one across pages, G shows the last
// offset, g the first, and no more than the window is ever kept.
func TestBatchRecordsPageThroughEveryRecord(t *testing.T) {
	rd := &logReplayer{}
	m, fs, v := openRecordsOf(t, rd, bigBatch(6000, 300))
	if r := v.list.selected(); r == nil || r.Offset != 0 {
		t.Fatalf("first selected %+v", r)
	}
	for want := int64(0); want < 6000; want++ {
		r := v.list.selected()
		if r == nil || r.Partition != part("events", 0) || r.Offset != want {
			t.Fatalf("after %d j: selected %+v, want events[0]@%d", want, r, want)
		}
		run(m, press(m, "j"))
		checkWindow(t, v)
	}
	if r := v.list.selected(); r.Partition != part("events", 1) || r.Offset != 1000 {
		t.Fatalf("after the first range: %s@%d, want events[1]@1000", r.Partition, r.Offset)
	}
	run(m, press(m, "G"))
	if r := v.list.selected(); r.Partition != part("events", 1) || r.Offset != 1299 {
		t.Fatalf("G selected %s@%d, want events[1]@1299", r.Partition, r.Offset)
	}
	mustContain(t, screen(m), "Batch 1 · all records · events[1] @ 1299")
	checkWindow(t, v)
	// k from the end crosses back into the first range.
	for i := 0; i < 300; i++ {
		run(m, press(m, "k"))
		checkWindow(t, v)
	}
	if r := v.list.selected(); r.Partition != part("events", 0) || r.Offset != 5999 {
		t.Fatalf("300 k from the end: %s@%d, want events[0]@5999", r.Partition, r.Offset)
	}
	run(m, press(m, "g"))
	if r := v.list.selected(); r.Offset != 0 {
		t.Fatalf("g selected @%d", r.Offset)
	}
	if calls := fs.Calls(); len(calls) != 0 {
		t.Fatalf("browsing a batch drove the stream: %v", calls)
	}
}

// Compacted stretches (a range whose offsets mostly hold no record) are
// paged over in both directions without losing or repeating a record.
func TestBatchRecordsCompactedGaps(t *testing.T) {
	// events[0] keeps every 7th offset and nothing in [2000, 5000);
	// events[1] keeps nothing at all.
	rd := &logReplayer{has: func(p offsets.Partition, o int64) bool {
		return p.Partition == 0 && o%7 == 0 && (o < 2000 || o >= 5000)
	}}
	m, _, v := openRecordsOf(t, rd, bigBatch(6000, 300))
	seen := walkRecords(t, m, v, "j")
	var want []int64
	for o := int64(0); o < 6000; o++ {
		if o%7 == 0 && (o < 2000 || o >= 5000) {
			want = append(want, o)
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("walked %d records, want %d (first difference somewhere in %v…)", len(seen), len(want), seen[:min(10, len(seen))])
	}
	run(m, press(m, "G"))
	if r := v.list.selected(); r.Offset != want[len(want)-1] {
		t.Fatalf("G selected @%d, want @%d", r.Offset, want[len(want)-1])
	}
	back := walkRecords(t, m, v, "k")
	if len(back) != len(want) || back[0] != want[len(want)-1] || back[len(back)-1] != 0 {
		t.Fatalf("walked back over %d records (from @%d to @%d), want %d", len(back), back[0], back[len(back)-1], len(want))
	}
}

// walkRecords presses key (j or k) until the selection stops moving,
// checking the window at each step, and returns the offsets selected on
// the way.
func walkRecords(t *testing.T, m *Model, v *recordsView, key string) []int64 {
	t.Helper()
	var seen []int64
	for {
		r := v.list.selected()
		if len(seen) > 0 && seen[len(seen)-1] == r.Offset {
			return seen
		}
		seen = append(seen, r.Offset)
		run(m, press(m, key))
		checkWindow(t, v)
	}
}

// A page read keeps no more than a page in memory, whatever the reader
// hands out in a chunk.
func TestBatchRecordsReadOnlyAPage(t *testing.T) {
	rd := &logReplayer{}
	_, _, v := openRecordsOf(t, rd, bigBatch(6000, 0))
	if len(v.list.all) != pageRecords {
		t.Fatalf("first page holds %d records, want %d", len(v.list.all), pageRecords)
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.emitted > pageRecords+64 {
		t.Fatalf("the first page read %d records from the broker", rd.emitted)
	}
}

// The records pane says it holds samples and which key lists them all;
// enter on a partition lists its records from the log start.
func TestSamplesPaneNamesTheWholeBatch(t *testing.T) {
	rd := &logReplayer{}
	m, _ := newTestModel(t, 140, 40, Options{Replayer: rd})
	feed(m, started(2), bigBatch(6000, 300))
	mustContain(t, screen(m), "Records · batch 1 · 5 of 6300 records sampled · b all records")
	run(m, press(m, "3", "b"))
	if _, ok := m.top().(*recordsView); !ok {
		t.Fatalf("b in the records pane opened %T", m.top())
	}
	press(m, "esc")
	run(m, press(m, "1", "enter"))
	v, ok := m.top().(*recordsView)
	if !ok {
		t.Fatalf("enter on a partition opened %T", m.top())
	}
	st, _ := m.parts.status(part("events", 0))
	if got := v.ranges; len(got) != 1 || got[0].From != st.LogStart || got[0].Until != st.HighWatermark || st.HighWatermark == 0 {
		t.Fatalf("partition records over %v, want events[0] %d → %d", got, st.LogStart, st.HighWatermark)
	}
	mustContain(t, screen(m), "events[0] · all records · events[0] @ 0")
}

// enter on a partition says its replicas and settings beside its range,
// as kbatch topics does.
func TestPartitionRecordsSayReplicasAndSettings(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Replayer: &logReplayer{},
		DescribePartition: func(_ context.Context, p offsets.Partition) (string, error) {
			return "replicas 1,2,3 · isr 1,3 · cleanup.policy compact · retention forever (" + p.String() + ")", nil
		}})
	feed(m, started(2), bigBatch(60, 0))
	runCmd(m, press(m, "1", "enter"))
	mustContain(t, screen(m), "events[0] 0 → 60 · replicas 1,2,3 · isr 1,3 · cleanup.policy compact · retention forever (events[0])")
}

// Counts agree in number: "1 range", "1 record"; samples say how many of
// the batch's records they are.
func TestPluralsAndSampleCounts(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	b := batch(1, 1, 10, offsets.StateAcked)
	b.Records = 8 // 2 of them kept as samples
	feed(m, started(1), &consumer.BatchEvent{Batch: b})
	mustContain(t, screen(m), "Records · batch 1 · 2 of 8 records sampled")
	press(m, "tab", "enter")
	s := screen(m)
	mustContain(t, s, "1 range [from, until)", "2 of 8 records sampled")
	mustNotContain(t, s, "1 ranges")
	one := batch(2, 1, 12, offsets.StateAcked)
	one.Records, one.Ranges[0].Records, one.Samples = 1, 1, one.Samples[:1]
	press(m, "esc")
	feed(m, &consumer.BatchEvent{Batch: one})
	press(m, "g", "enter")
	mustContain(t, screen(m), "1 record ·", "→ 14 · 1 record", "1 of 1 record sampled:")
}

// A stream of two topics names the topic in PARTITION even when a batch's
// samples all come from one of them.
func TestPartitionColumnNamesTheTopicOfATwoTopicStream(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	st := started(2)
	st.Topics = []string{"events", "orders"}
	feed(m, st, batchEv(1, 2, 10, offsets.StateAcked))
	rows := 0
	for _, line := range strings.Split(screen(m), "\n") {
		if strings.Contains(line, "user-1") {
			rows++
			mustContain(t, line, "events[1]")
		}
	}
	if rows == 0 {
		t.Fatalf("no record row of events[1]:\n%s", screen(m))
	}
}

// Records of aborted transactions (a stream reading uncommitted) are
// marked in the records pane and say so in their detail; the others are
// not.
func TestAbortedRecordsAreMarked(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	b := batch(1, 2, 0, offsets.StateAcked)
	b.Aborted = []offsets.Range{{Partition: part("events", 1), From: 100, Until: 101}}
	feed(m, started(2), &consumer.BatchEvent{Batch: b})
	press(m, "3")
	s := screen(m)
	if n := strings.Count(s, abortedMark); n != 1 {
		t.Fatalf("%d records marked aborted, want 1:\n%s", n, s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, abortedMark) && !strings.Contains(l, `{"seq":100}`) {
			t.Fatalf("the wrong record is marked: %q", l)
		}
	}
	press(m, "enter")
	mustNotContain(t, screen(m), "aborted transaction")
	press(m, "esc", "j", "j", "enter")
	mustContain(t, screen(m), "Record events[1] @ 100", "aborted transaction")
}
