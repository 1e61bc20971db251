package consumer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

type procFunc func(b *Batch, recs []*record.Record)

func (f procFunc) Process(_ context.Context, b *Batch, recs []*record.Record) error {
	f(b, recs)
	return nil
}

// A seek made while a batch waits for its manual ack, then a quit: the
// restart re-delivers that batch with its ranges, its ack keeps the seek's
// stored position, and the next batch starts at the seek, marked so.
func TestSeekWhileWaitingSurvivesARestart(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 1)
	h.kc.ProduceN(topic, 0, 300, 20)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	st := h.openStore()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.MaxPerPartition, cfg.ManualAck = offsets.ResetEarliest, 100, true
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range s.Events() {
		if b, ok := ev.(*BatchEvent); ok && b.Batch.State == offsets.StatePlanned {
			break
		}
	}
	if _, err := s.Seek(p0, offsets.Spec{Kind: offsets.SpecOffset, Offset: 250}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	for range s.Events() {
	}
	_ = st.Close()

	st = h.openStore()
	defer st.Close()
	cfg = h.config(st, topic)
	cfg.Reset, cfg.MaxPerPartition, cfg.MaxBatches = offsets.ResetEarliest, 100, 2
	bs := batches(run(t, cfg))
	if len(bs) != 2 {
		t.Fatalf("%d batches after the restart, want 2", len(bs))
	}
	if r := bs[0].Ranges[0]; !bs[0].Redelivered || r.From != 0 || r.Until != 100 {
		t.Fatalf("first batch after the restart %+v (redelivered %v), want batch 1 [0,100) again", r, bs[0].Redelivered)
	}
	if r := bs[1].Ranges[0]; r.From != 250 || r.Until != 300 || r.Jump != offsets.CodeSeek {
		t.Fatalf("second batch %+v, want [250,300) marked as a seek", r)
	}
	if info, _, _ := st.Stream("test"); info.Next[p0] != 300 || info.Seeks != nil {
		t.Fatalf("stored next %d, kept seeks %v; want 300 and none", info.Next[p0], info.Seeks)
	}
}

// A seek made at start while the pending batch is still being re-read (one
// of its partitions is not there yet): the partition finishes the batch's
// range, its ack keeps the seek's position, and the next batch starts at
// the seek, marked so.
func TestSeekBeforeTheRedeliveredBatchIsCut(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 2)
	h.kc.ProduceN(topic, 0, 300, 20)
	h.kc.ProduceN(topic, 1, 50, 20)
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
	st := h.openStore()
	defer st.Close()
	if err := st.EnsureStream("test", h.kc.Brokers, []string{topic}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetNext("test", map[offsets.Partition]int64{p0: 0, p1: 0}, offsets.Event{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Plan("test", offsets.Batch{ID: 1, Ranges: []offsets.BatchRange{
		{Range: offsets.Range{Partition: p0, From: 0, Until: 100}, Records: 100},
		{Range: offsets.Range{Partition: p1, From: 0, Until: 100}, Records: 100},
	}}); err != nil {
		t.Fatal(err)
	}
	cfg := h.config(st, topic)
	cfg.Reset, cfg.MaxPerPartition = offsets.ResetEarliest, 100
	var mu sync.Mutex
	seen := map[uint64][]int64{}
	cfg.Processor = procFunc(func(b *Batch, recs []*record.Record) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range recs {
			if m.Partition == 0 {
				seen[b.ID] = append(seen[b.ID], m.Offset)
			}
		}
	})
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The re-delivery waits for events[1], which holds 50 of its 100.
	if _, err := s.Seek(p0, offsets.Spec{Kind: offsets.SpecOffset, Offset: 250}); err != nil {
		t.Fatal(err)
	}
	h.kc.ProduceN(topic, 1, 60, 20)
	timeout := time.After(30 * time.Second)
	for {
		var ev Event
		select {
		case ev = <-s.Events():
		case <-timeout:
			t.Fatal("no second batch")
		}
		b, ok := ev.(*BatchEvent)
		if !ok || b.Batch.State != offsets.StateAcked {
			continue
		}
		info, _, _ := st.Stream("test")
		switch b.Batch.ID {
		case 1:
			mu.Lock()
			n := len(seen[1])
			mu.Unlock()
			if n != 100 || info.Next[p0] != 250 {
				t.Fatalf("re-delivered batch: %d records of events[0], stored next %d; want 100 and the seek's 250", n, info.Next[p0])
			}
		case 2:
			for _, r := range b.Batch.Ranges {
				if r.Partition == p0 && (r.From != 250 || r.Jump != offsets.CodeSeek) {
					t.Fatalf("batch 2 range %+v, want it to start at the seek's 250, marked so", r)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, o := range seen[2] {
				if o < 250 {
					t.Fatalf("batch 2 holds events[0] offset %d, below the seek", o)
				}
			}
			return
		}
	}
}
