package sparkwatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// sparkFakeSampler records the ranges asked for and returns one record per
// range, at its From.
type sparkFakeSampler struct {
	mu    sync.Mutex
	asked [][]offsets.Range
}

func (f *sparkFakeSampler) Sample(_ context.Context, ranges []offsets.Range) ([]*record.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, ranges)
	var out []*record.Record
	for i := len(ranges) - 1; i >= 0; i-- { // out of order on purpose
		r := ranges[i]
		out = append(out, &record.Record{Topic: r.Topic, Partition: r.Partition.Partition, Offset: r.From})
	}
	return out, nil
}

// A checkpoint written while the watch polls it: each new batch shows up
// as planned, then acked when its commit appears, with the ranges of the
// files; lag is measured against the cluster.
func TestSparkWatchLive(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("orders", 2)
	kc.ProduceN(topic, 0, 30, 20)
	kc.ProduceN(topic, 1, 10, 20)
	cc := kafka.ClientConfig{Brokers: kc.Brokers}
	client, err := kafka.Dial(cc)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	c := newSparkCheckpoint(t)
	c.initial(topic, 0, 0)
	c.offsets(0, time.Now().Add(-10*time.Second), topic, 5, 3)
	c.commit(0)

	sampler := &sparkFakeSampler{}
	w, err := Start(context.Background(), Config{Dir: c.dir, Source: -1, Client: client, Brokers: kc.Brokers,
		Interval: 20 * time.Millisecond, BoundsInterval: 50 * time.Millisecond, Last: 100, Samples: 2, Sampler: sampler, MaxBatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	st := (<-w.Events()).(*consumer.Started)
	if st.Starts[0].NextOffset != 5 || st.Starts[0].HighWatermark != 30 || st.Starts[1].NextOffset != 3 || st.Starts[1].HighWatermark != 10 {
		t.Fatalf("started %+v", st.Starts)
	}
	next := func(want func(consumer.Event) bool, what string) consumer.Event {
		t.Helper()
		return waitForEvent(t, w.Events(), what, nil, want)
	}
	batch := func(id uint64, state offsets.BatchState) *consumer.Batch {
		t.Helper()
		ev := next(func(ev consumer.Event) bool {
			b, ok := ev.(*consumer.BatchEvent)
			return ok && b.Batch.ID == id && b.Batch.State == state
		}, fmt.Sprintf("batch %d %s", id, state))
		return ev.(*consumer.BatchEvent).Batch
	}
	rng := func(p int32, from, until int64) offsets.BatchRange {
		return offsets.BatchRange{Range: offsets.Range{Partition: sparkTP(topic, p), From: from, Until: until}, Records: until - from}
	}

	b0 := batch(0, offsets.StateAcked)
	if !reflect.DeepEqual(b0.Ranges, []offsets.BatchRange{rng(0, 0, 5), rng(1, 0, 3)}) {
		t.Fatalf("batch 0 ranges %+v", b0.Ranges)
	}
	// The newest batch at start gets samples, partitions in range order.
	if len(b0.Samples) != 2 || b0.Samples[0].Partition != 0 || b0.Samples[1].Partition != 1 {
		t.Errorf("batch 0 samples %+v", b0.Samples)
	}
	lag := func(want map[int32]int64) {
		t.Helper()
		next(func(ev consumer.Event) bool {
			pr, ok := ev.(*consumer.Progress)
			if !ok || len(pr.Partitions) != 2 {
				return false
			}
			for _, s := range pr.Partitions {
				if s.Lag != want[s.Partition.Partition] {
					return false
				}
			}
			return true
		}, fmt.Sprintf("progress with lag %v", want))
	}
	lag(map[int32]int64{0: 25, 1: 7})

	// Spark plans batch 1: partition 1 has nothing new.
	c.offsets(1, time.Now(), topic, 12, 3)
	b1 := batch(1, offsets.StatePlanned)
	if !reflect.DeepEqual(b1.Ranges, []offsets.BatchRange{rng(0, 5, 12)}) || b1.Records != 7 {
		t.Fatalf("batch 1 ranges %+v", b1.Ranges)
	}
	lag(map[int32]int64{0: 18, 1: 7})
	c.commit(1)
	if b := batch(1, offsets.StateAcked); !reflect.DeepEqual(b.Ranges, b1.Ranges) {
		t.Fatalf("committed batch 1 ranges %+v", b.Ranges)
	}

	// More records arrive; lag follows the high watermark.
	kc.ProduceN(topic, 1, 5, 20)
	lag(map[int32]int64{0: 18, 1: 12})

	// A batch written and committed between two polls.
	c.offsets(2, time.Now(), topic, 30, 15)
	c.commit(2)
	b2 := batch(2, offsets.StateAcked)
	if !reflect.DeepEqual(b2.Ranges, []offsets.BatchRange{rng(0, 12, 30), rng(1, 3, 15)}) {
		t.Fatalf("batch 2 ranges %+v", b2.Ranges)
	}
	end := next(func(ev consumer.Event) bool { _, ok := ev.(*consumer.Ended); return ok }, "end").(*consumer.Ended)
	if end.Reason != "batches" || end.Batches != 3 || end.Records != 8+7+30 {
		t.Errorf("end %+v", end)
	}

	// Samples were asked for the first two offsets of each range, only.
	sampler.mu.Lock()
	defer sampler.mu.Unlock()
	var asked []string
	for _, rs := range sampler.asked {
		for _, r := range rs {
			asked = append(asked, r.String())
		}
	}
	sort.Strings(asked)
	p0, p1 := sparkTP(topic, 0).String(), sparkTP(topic, 1).String()
	want := []string{p0 + " 0 → 2", p0 + " 12 → 14", p0 + " 5 → 7", p1 + " 0 → 2", p1 + " 3 → 5"}
	if !reflect.DeepEqual(asked, want) {
		t.Errorf("sampled %q, want %q", asked, want)
	}
}

func hasMethod[I any](v any) bool { _, ok := v.(I); return ok }

func TestSparkWatchIsReadOnly(t *testing.T) {
	c := newSparkCheckpoint(t)
	c.initial("e", 0)
	c.offsets(0, time.Now(), "e", 5)
	before := sparkListTree(t, c.dir)
	w, err := Start(context.Background(), Config{Dir: c.dir, Source: -1, Last: 100, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// No controls: the batches are Spark's (the screen shows the view
	// read-only when given none).
	for name, has := range map[string]bool{
		"PauseAll": hasMethod[interface{ PauseAll() error }](w),
		"Seek": hasMethod[interface {
			Seek(offsets.Partition, offsets.Spec) (int64, error)
		}](w),
		"Ack":    hasMethod[interface{ Ack(uint64) error }](w),
		"CutNow": hasMethod[interface{ CutNow() error }](w),
	} {
		if has {
			t.Errorf("a Watch has %s", name)
		}
	}
	// Let it poll a few times (a progress per poll), then close it.
	for polls := 0; polls < 3; {
		if _, ok := (<-w.Events()).(*consumer.Progress); ok {
			polls++
		}
	}
	closed := make(chan error)
	go func() { closed <- w.Close() }()
	evs := sparkCollect(t, w)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if end := evs[len(evs)-1].(*consumer.Ended); end.Reason != "closed" {
		t.Errorf("end %+v", end)
	}
	if after := sparkListTree(t, c.dir); !reflect.DeepEqual(before, after) {
		t.Errorf("the checkpoint changed:\n%v\n%v", before, after)
	}
}

// listTree lists every file under dir with its size and modification time.
func sparkListTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %s %s", path, fi.Size(), fi.Mode(), fi.ModTime()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A batch file that cannot be parsed is reported once and read again on
// the next polls (it may be a partial copy); it shows once it is whole.
// One that stays malformed is skipped, with the batch after it, whose start
// it is, and the watch carries on.
func TestSparkWatchMalformedBatch(t *testing.T) {
	c := newSparkCheckpoint(t)
	c.initial("e", 0)
	c.offsets(0, time.Now(), "e", 5)
	c.commit(0)
	w, err := Start(context.Background(), Config{Dir: c.dir, Source: -1, Last: 100, Interval: 100 * time.Millisecond, MaxBatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var evs []consumer.Event
	wait := func(what string, want func(consumer.Event) bool) {
		t.Helper()
		waitForEvent(t, w.Events(), what, func(ev consumer.Event) { evs = append(evs, ev) }, want)
	}
	isNotice := func(code string) func(consumer.Event) bool {
		return func(ev consumer.Event) bool { n, ok := ev.(*consumer.Notice); return ok && n.Code == code }
	}
	isBatch := func(id uint64) func(consumer.Event) bool {
		return func(ev consumer.Event) bool { b, ok := ev.(*consumer.BatchEvent); return ok && b.Batch.ID == id }
	}

	// Half a file, as a copy in progress leaves it, then the whole file.
	sparkWriteFile(t, filepath.Join(c.dir, "offsets", "1"), "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":17")
	wait("unreadable notice", isNotice(CodeSparkUnreadable))
	c.offsets(1, time.Now(), "e", 8)
	c.commit(1)
	wait("batch 1", isBatch(1))

	// Garbage that stays: batches 2 and 3 are skipped, 4 shows.
	c.write("offsets/2", "v1\n{not json")
	c.offsets(3, time.Now(), "e", 12)
	c.commit(3)
	c.offsets(4, time.Now(), "e", 20)
	c.commit(4)
	wait("batch 4", isBatch(4))
	wait("end", func(ev consumer.Event) bool { _, ok := ev.(*consumer.Ended); return ok })

	// A poll between offsets/1 and commits/1 shows batch 1 planned, then
	// committed: each batch counts once.
	var ids []uint64
	for _, b := range sparkBatchesOf(evs) {
		if len(ids) == 0 || ids[len(ids)-1] != b.ID {
			ids = append(ids, b.ID)
		}
	}
	if !reflect.DeepEqual(ids, []uint64{0, 1, 4}) {
		t.Errorf("batches %v, want 0 1 4", ids)
	}
	var skipped []string
	unreadable := 0
	for _, n := range sparkNoticesOf(evs) {
		if n.Code != CodeSparkUnreadable {
			t.Errorf("notice %+v", n)
		}
		if strings.HasPrefix(n.Message, "spark batch ") {
			skipped = append(skipped, n.Message[:len("spark batch 2")])
		} else {
			unreadable++
		}
	}
	// One notice per trouble (the partial file, the garbage), one per
	// batch skipped.
	if unreadable != 2 || !reflect.DeepEqual(skipped, []string{"spark batch 2", "spark batch 3"}) {
		t.Errorf("notices %+v", sparkNoticesOf(evs))
	}
}

// waitForEvent reads events until want takes one and returns it, handing
// each event read to seen first (when not nil); the test fails when the
// events end, or none is wanted within 60 s, naming what it waited for.
func waitForEvent(t *testing.T, events <-chan consumer.Event, what string, seen func(consumer.Event), want func(consumer.Event) bool) consumer.Event {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the watch ended before %s", what)
			}
			if seen != nil {
				seen(ev)
			}
			if want(ev) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s", what)
		}
	}
}
