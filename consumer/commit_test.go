package consumer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// countingStore counts the store's batch transactions.
type countingStore struct {
	*offsets.Store
	mu                    sync.Mutex
	plans, acks, ackPlans int
}

func (c *countingStore) Plan(stream string, b offsets.Batch) error {
	c.mu.Lock()
	c.plans++
	c.mu.Unlock()
	return c.Store.Plan(stream, b)
}

func (c *countingStore) Ack(stream string, id uint64, at time.Time) error {
	c.mu.Lock()
	c.acks++
	c.mu.Unlock()
	return c.Store.Ack(stream, id, at)
}

func (c *countingStore) AckAndPlan(stream string, id uint64, at time.Time, next offsets.Batch) error {
	c.mu.Lock()
	c.ackPlans++
	c.mu.Unlock()
	return c.Store.AckAndPlan(stream, id, at, next)
}

// While batches come back to back (a catch-up), a batch's ack shares the
// next batch's write-ahead transaction: about one store transaction per
// batch instead of two, with every batch acked and the positions right.
func TestBatchesBackToBackShareTheirStoreTransaction(t *testing.T) {
	h := newHarness(t)
	topic := h.topicWith("events", 20, 1000, 1000)
	st := h.storeClosedAtEnd()
	cs := &countingStore{Store: st}
	cfg := h.config(nil, topic)
	cfg.Store = cs
	cfg.Reset, cfg.UntilEnd, cfg.MaxPerPartition = offsets.ResetEarliest, true, 100
	evs := run(t, cfg)
	bs := batches(evs)
	if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
		t.Fatalf("ended %+v", e)
	}
	for _, p := range []int32{0, 1} {
		if from, until, n := covered(t, bs, offsets.Partition{Topic: topic, Partition: p}); from != 0 || until != 1000 || n != 1000 {
			t.Fatalf("partition %d: [%d, %d) with %d records, want [0, 1000) with 1000", p, from, until, n)
		}
	}
	for _, b := range bs {
		if b.State != offsets.StateAcked {
			t.Fatalf("batch %d reported %s", b.ID, b.State)
		}
	}
	n := len(bs)
	if n < 10 {
		t.Fatalf("%d batches, want at least 10 (100 records per partition each)", n)
	}
	cs.mu.Lock()
	plans, acks, ackPlans := cs.plans, cs.acks, cs.ackPlans
	cs.mu.Unlock()
	if plans+ackPlans != n || acks+ackPlans != n {
		t.Fatalf("%d batches: %d plans, %d acks, %d ack-and-plans; every batch must be planned and acked once", n, plans, acks, ackPlans)
	}
	if ackPlans < n/2 {
		t.Errorf("%d batches took %d store transactions (%d ack-and-plans); want most acks to share the next plan's", n, plans+acks+ackPlans, ackPlans)
	}
	info, _, err := st.Stream("test")
	if err != nil || info.LastBatch != uint64(n) || info.Next[offsets.Partition{Topic: topic, Partition: 0}] != 1000 ||
		info.Next[offsets.Partition{Topic: topic, Partition: 1}] != 1000 {
		t.Fatalf("stored %+v, %v; want last batch %d and next 1000 on both partitions", info, err, n)
	}
	if p, err := st.Pending("test"); p != nil || err != nil {
		t.Fatalf("pending %+v, %v", p, err)
	}
}

// --batches N counts batches cut, so the batch an ack could carry along is
// not cut beyond N.
func TestMaxBatchesStopsAtN(t *testing.T) {
	_, topic, st, cfg := storedStream(t, "events", 20, 1000)
	cfg.Reset, cfg.MaxBatches, cfg.MaxPerPartition = offsets.ResetEarliest, 3, 100
	evs := run(t, cfg)
	if e := ended(t, evs); e.Err != nil || e.Reason != "batches" || e.Batches != 3 {
		t.Fatalf("ended %+v, want 3 batches", e)
	}
	info, _, _ := st.Stream("test")
	if p, _ := st.Pending("test"); info.LastBatch != 3 || p != nil || info.Next[offsets.Partition{Topic: topic, Partition: 0}] != 300 {
		t.Fatalf("stored last batch %d, next %v, pending %+v; want 3, 300, none", info.LastBatch, info.Next, p)
	}
}

// gate holds the processing of one batch until released; then (next,
// when set) of another.
type gate struct {
	id      uint64
	entered chan struct{}
	release chan struct{}
	next    *gate
}

func (g *gate) Process(ctx context.Context, b *Batch, recs []*record.Record) error {
	if b.ID == g.id {
		close(g.entered)
		<-g.release
	}
	if g.next != nil {
		return g.next.Process(ctx, b, recs)
	}
	return nil
}

// A seek made while a batch cut before it is in flight survives that
// batch's ack, which stores the batch's end for the partition: the stored
// position is the seek's, and the next batch starts there.
func TestSeekWhileABatchIsInFlightKeepsTheStoredPosition(t *testing.T) {
	_, topic, st, cfg := storedStream(t, "events", 20, 300)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	cfg.Reset, cfg.MaxPerPartition = offsets.ResetEarliest, 100
	// Batch 4 is held too, so that the store still says what batch 3's
	// ack wrote when batch 3's event is read (on a real broker the
	// stream once acked batch 4 first).
	g4 := &gate{id: 4, entered: make(chan struct{}), release: make(chan struct{})}
	g := &gate{id: 2, entered: make(chan struct{}), release: make(chan struct{}), next: g4}
	cfg.Processor = g
	s := start(t, cfg)
	defer s.Close()
	defer close(g4.release)
	<-g.entered // batch 2 [100,200) is being processed, batch 1 acked
	if _, err := s.Seek(p0, offsets.Spec{Kind: offsets.SpecOffset, Offset: 50}); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	for ev := range s.Events() {
		b, ok := ev.(*BatchEvent)
		if !ok || b.Batch.State != offsets.StateAcked {
			continue
		}
		switch b.Batch.ID {
		case 2:
			info, _, _ := st.Stream("test")
			if got := info.Next[p0]; got != 50 {
				t.Fatalf("stored next after batch 2's ack is %d, want the seek's 50", got)
			}
		case 3:
			if r := b.Batch.Ranges[0]; r.From != 50 || r.Jump != offsets.CodeSeek {
				t.Fatalf("batch 3 range %+v, want from 50 marked as a seek", r)
			}
			info, _, _ := st.Stream("test")
			if got := info.Next[p0]; got != b.Batch.Ranges[0].Until {
				t.Fatalf("stored next after batch 3's ack is %d, want its until %d", got, b.Batch.Ranges[0].Until)
			}
			return
		}
	}
	t.Fatal("the stream ended before batch 3")
}
