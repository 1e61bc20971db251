package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// start starts a stream of cfg and fails the test when it cannot; the
// caller closes it.
func start(t *testing.T, cfg Config) *Stream {
	t.Helper()
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return s
}

// seedStore makes the store hold the stream "test" over topics as a
// previous run left it: next (when not nil) as the stored positions and,
// when pending is not empty, batch 1 of those ranges planned and not
// acked.
func seedStore(t *testing.T, h *harness, st *offsets.Store, topics []string, next map[offsets.Partition]int64, pending ...offsets.BatchRange) {
	t.Helper()
	if err := st.EnsureStream("test", h.kc.Brokers, topics); err != nil {
		t.Fatal(err)
	}
	if next != nil {
		if err := st.SetNext("test", next, offsets.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(pending) > 0 {
		if err := st.Plan("test", offsets.Batch{ID: 1, Ranges: pending}); err != nil {
			t.Fatal(err)
		}
	}
}

// planned is the range [from, until) of p holding every offset as a record.
func planned(p offsets.Partition, from, until int64) offsets.BatchRange {
	return offsets.BatchRange{Range: offsets.Range{Partition: p, From: from, Until: until}, Records: until - from}
}

// waitFirstBatch reads s's events until a batch event comes; the test
// fails when none came within 30 s.
func waitFirstBatch(t *testing.T, s *Stream) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-s.Events():
			if _, ok := ev.(*BatchEvent); ok {
				return
			}
		case <-deadline:
			t.Fatal("no batch after 30s")
		}
	}
}

// firstPlanned reads the events of s up to its first planned batch and
// returns that batch; nil when the stream ends before one.
func firstPlanned(s *Stream) *Batch {
	for ev := range s.Events() {
		if b, ok := ev.(*BatchEvent); ok && b.Batch.State == offsets.StatePlanned {
			return b.Batch
		}
	}
	return nil
}

// readFor reads s's events for d, handing each to fn (when not nil).
func readFor(s *Stream, d time.Duration, fn func(Event)) {
	window := time.After(d)
	for {
		select {
		case ev := <-s.Events():
			if fn != nil {
				fn(ev)
			}
		case <-window:
			return
		}
	}
}

// topicWith makes a topic of len(counts) partitions, partition p holding
// counts[p] records of size bytes each, and returns its name.
func (h *harness) topicWith(name string, size int, counts ...int) string {
	topic := h.kc.Topic(name, int32(len(counts)))
	for p, n := range counts {
		h.kc.ProduceN(topic, int32(p), n, size)
	}
	return topic
}

// storeClosedAtEnd opens the harness's store and closes it when the test
// ends.
func (h *harness) storeClosedAtEnd() *offsets.Store {
	st := h.openStore()
	h.t.Cleanup(func() { _ = st.Close() })
	return st
}

// watchFetches hands every Fetch request the fake receives to fn, then
// lets the fake answer it.
func watchFetches(h *harness, fn func(req *kmsg.FetchRequest)) {
	h.kc.Fake.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		h.kc.Fake.KeepControl()
		fn(kreq.(*kmsg.FetchRequest))
		return nil, nil, false
	})
}

// fetchedPartitions is what req asks of topic (named, or by its id).
func fetchedPartitions(req *kmsg.FetchRequest, topic string, id [16]byte) []kmsg.FetchRequestTopicPartition {
	var out []kmsg.FetchRequestTopicPartition
	for _, rt := range req.Topics {
		if rt.Topic == topic || rt.TopicID == id {
			out = append(out, rt.Partitions...)
		}
	}
	return out
}

// dial connects a client of cc that long-polls for 50 ms at most (fast
// tests), closed when the test ends.
func dial(t *testing.T, cc kafka.ClientConfig) *kafka.Client {
	t.Helper()
	c, err := kafka.DialWith(cc, kafka.Tuning{MaxWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// nextEvent is s's next event; the test fails with what when timeout
// fires first.
func nextEvent(t *testing.T, s *Stream, timeout <-chan time.Time, what string) Event {
	t.Helper()
	select {
	case ev := <-s.Events():
		return ev
	case <-timeout:
		t.Fatal(what)
	}
	return nil
}

// storedStream makes a harness, a topic (as topicWith) and a store closed
// at the test's end, and a stream config over them.
func storedStream(t *testing.T, name string, size int, counts ...int) (*harness, string, *offsets.Store, Config) {
	t.Helper()
	h := newHarness(t)
	topic := h.topicWith(name, size, counts...)
	st := h.storeClosedAtEnd()
	return h, topic, st, h.config(st, topic)
}

// readThroughFault reads the events of s until done holds for the batches
// read so far, asked again at every event and every 10 ms. Once p is read
// to offset 100, fault runs (once). A stream that ends, or 30 s without
// done, fails the test with the range of p read and state().
func readThroughFault(t *testing.T, s *Stream, p offsets.Partition, done func(bs []*Batch) bool, fault func(), state func() string) ([]*Batch, []Event) {
	t.Helper()
	var bs []*Batch
	var evs []Event
	faulted := false
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !done(bs) {
		select {
		case <-tick.C:
		case ev := <-s.Events():
			evs = append(evs, ev)
			switch ev := ev.(type) {
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			from, until, n := covered(t, bs, p)
			t.Fatalf("after 30s: [%d,%d) with %d records delivered, want [0,200); %s", from, until, n, state())
		}
		if _, until, _ := covered(t, bs, p); until >= 100 && !faulted {
			faulted = true
			fault()
		}
	}
	return bs, evs
}
