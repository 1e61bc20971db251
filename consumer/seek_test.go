package consumer

import (
	"context"
	"fmt"
	"strings"
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
	topic := h.topicWith("events", 20, 300)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	st := h.openStore()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.MaxPerPartition, cfg.ManualAck = offsets.ResetEarliest, 100, true
	s := start(t, cfg)
	if firstPlanned(s) == nil {
		t.Fatal("the stream ended before its first batch")
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
	topic := h.topicWith("events", 20, 300, 50)
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
	st := h.storeClosedAtEnd()
	seedStore(t, h, st, []string{topic}, map[offsets.Partition]int64{p0: 0, p1: 0}, planned(p0, 0, 100), planned(p1, 0, 100))
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
	s := start(t, cfg)
	defer s.Close()
	// The re-delivery waits for events[1], which holds 50 of its 100.
	if _, err := s.Seek(p0, offsets.Spec{Kind: offsets.SpecOffset, Offset: 250}); err != nil {
		t.Fatal(err)
	}
	h.kc.ProduceN(topic, 1, 60, 20)
	timeout := time.After(30 * time.Second)
	for {
		ev := nextEvent(t, s, timeout, "no second batch")
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

// One rule for every seek: a target outside [log start, high watermark]
// moves to the nearest end and says so; one inside says nothing.
func TestResolveTargetClampsWithANote(t *testing.T) {
	p := offsets.Partition{Topic: "events", Partition: 0}
	b := offsets.Bounds{LogStart: 100, HighWatermark: 10203}
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		spec offsets.Spec
		tOff int64
		want int64
		note string // a part of the note; "" for none
	}{
		{"inside", offsets.Spec{Kind: offsets.SpecOffset, Offset: 500}, -1, 500, ""},
		{"the high watermark", offsets.Spec{Kind: offsets.SpecOffset, Offset: 10203}, -1, 10203, ""},
		{"too large", offsets.Spec{Kind: offsets.SpecOffset, Offset: 99999999}, -1, 10203, "offset 99999999 is past the high watermark: moved to 10203"},
		{"below the log start", offsets.Spec{Kind: offsets.SpecOffset, Offset: 5}, -1, 100, "offset 5 is below the log start: moved to 100"},
		{"-N inside", offsets.Spec{Kind: offsets.SpecFromEnd, Offset: 3}, -1, 10200, ""},
		{"-999999", offsets.Spec{Kind: offsets.SpecFromEnd, Offset: 999999}, -1, 100, "-999999 reaches before the log start: moved to 100"},
		{"a time with records", offsets.Spec{Kind: offsets.SpecTime, Time: future}, 4000, 4000, ""},
		{"@2099", offsets.Spec{Kind: offsets.SpecTime, Time: future}, -1, 10203, "no record at or after 2099-01-01T00:00:00Z: moved to the high watermark 10203"},
		{"earliest", offsets.Spec{Kind: offsets.SpecEarliest}, -1, 100, ""},
		{"latest", offsets.Spec{Kind: offsets.SpecLatest}, -1, 10203, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ResolveTarget(p, tt.spec, b, tt.tOff)
			if got.Offset != tt.want || got.Bounds != b {
				t.Fatalf("offset %d bounds %+v, want %d %+v", got.Offset, got.Bounds, tt.want, b)
			}
			if tt.note == "" && got.Note != "" || !strings.Contains(got.Note, tt.note) {
				t.Fatalf("note %q, want one holding %q", got.Note, tt.note)
			}
			if got.Note != "" && got.Offset != b.LogStart && got.Offset != b.HighWatermark {
				t.Fatalf("a noted target %d is not at an end of %+v", got.Offset, b)
			}
		})
	}
}

// seekCounter counts the store's seek writes.
type seekCounter struct {
	*offsets.Store
	mu           sync.Mutex
	calls, moves int
}

func (c *seekCounter) SeekAll(stream string, moves []offsets.SeekMove) error {
	c.mu.Lock()
	c.calls++
	c.moves += len(moves)
	c.mu.Unlock()
	return c.Store.SeekAll(stream, moves)
}

func (c *seekCounter) counts() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.moves
}

// S: every partition of a topic seeks at once, each range marked as a
// jump, each move its own seek event carrying the rule's note.
func TestSeekTargetsMovesEveryPartition(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 3)
	var parts []offsets.Partition
	for i := int32(0); i < 3; i++ {
		h.kc.ProduceN(topic, i, 50, 20)
		parts = append(parts, offsets.Partition{Topic: topic, Partition: i})
	}
	st := &seekCounter{Store: h.openStore()}
	defer st.Close()
	cfg := h.config(nil, topic)
	cfg.Store = st
	cfg.Reset, cfg.ManualAck = offsets.ResetLatest, true
	s := start(t, cfg)
	defer s.Close()
	ts, err := s.ResolveSeek(parts, offsets.Spec{Kind: offsets.SpecFromEnd, Offset: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if tg.Offset != 0 || tg.Bounds.HighWatermark != 50 || tg.Note == "" {
			t.Fatalf("target %+v, want 0 of [0,50) with a note", tg)
		}
	}
	if n, err := s.SeekTargets(ts); err != nil || n != 3 {
		t.Fatalf("SeekTargets moved %d: %v", n, err)
	}
	if calls, moves := st.counts(); calls != 1 || moves != 3 {
		t.Fatalf("the seeks were %d store writes of %d moves, want one of 3", calls, moves)
	}
	stored, _, _ := st.Stream(cfg.Name)
	for _, p := range parts {
		if stored.Next[p] != 0 {
			t.Fatalf("stored next %v, want 0 for every partition", stored.Next)
		}
	}
	// Each partition's first range after the seeks starts at 0, marked;
	// a batch may hold only the partitions read so far, so the batches
	// are acked until every partition had one.
	seeks := 0
	first := map[offsets.Partition]bool{}
	timeout := time.After(30 * time.Second)
	for len(first) < 3 {
		ev := nextEvent(t, s, timeout, fmt.Sprintf("not every partition in a batch after the seeks (%d seek events, %d partitions)", seeks, len(first)))
		switch e := ev.(type) {
		case *Notice:
			if e.Code == offsets.CodeSeek {
				seeks++
				if !strings.Contains(e.Message, "reaches before the log start") {
					t.Fatalf("seek event %q without the rule's note", e.Message)
				}
			}
		case *BatchEvent:
			if e.Batch.State != offsets.StatePlanned {
				continue
			}
			if seeks != 3 {
				t.Fatalf("%d seek events before the batch, want 3", seeks)
			}
			for _, r := range e.Batch.Ranges {
				if first[r.Partition] {
					continue
				}
				first[r.Partition] = true
				if r.From != 0 || r.Jump != offsets.CodeSeek {
					t.Fatalf("first range %+v after the seek, want from 0 marked as a seek", r)
				}
			}
			if err := s.Ack(e.Batch.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// While a batch waits for its manual ack, the progress tells the acked
// position and the records read past it, not only the read position.
func TestProgressTellsAckedPositionWhileABatchWaits(t *testing.T) {
	_, _, _, cfg := storedStream(t, "events", 20, 300)
	cfg.Reset, cfg.MaxPerPartition, cfg.ManualAck = offsets.ResetEarliest, 100, true
	s := start(t, cfg)
	defer s.Close()
	waiting := false
	timeout := time.After(30 * time.Second)
	for {
		ev := nextEvent(t, s, timeout, "no progress with the batch waiting and the rest read ahead")
		switch e := ev.(type) {
		case *BatchEvent:
			waiting = waiting || e.Batch.State == offsets.StatePlanned
		case *Progress:
			if !waiting || !e.Waiting {
				continue
			}
			ps := e.Partitions[0]
			if ps.Acked != 0 {
				t.Fatalf("acked position %d while batch 1 [0,100) waits, want 0", ps.Acked)
			}
			if ps.Ahead != ps.NextOffset-ps.Acked {
				t.Fatalf("ahead %d, want next %d - acked %d (no gaps in this topic)", ps.Ahead, ps.NextOffset, ps.Acked)
			}
			if ps.NextOffset == 300 {
				return
			}
		}
	}
}
