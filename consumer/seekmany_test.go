package consumer

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

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
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
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
		var ev Event
		select {
		case ev = <-s.Events():
		case <-timeout:
			t.Fatalf("not every partition in a batch after the seeks (%d seek events, %d partitions)", seeks, len(first))
		}
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
	h := newHarness(t)
	topic := h.kc.Topic("events", 1)
	h.kc.ProduceN(topic, 0, 300, 20)
	st := h.openStore()
	defer st.Close()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.MaxPerPartition, cfg.ManualAck = offsets.ResetEarliest, 100, true
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waiting := false
	timeout := time.After(30 * time.Second)
	for {
		var ev Event
		select {
		case ev = <-s.Events():
		case <-timeout:
			t.Fatal("no progress with the batch waiting and the rest read ahead")
		}
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
