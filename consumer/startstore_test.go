package consumer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/offsets"
)

// A partition added while running is announced as read from its log
// start; its start is stored at once, so a restart before it had a batch
// reads its records (written while stopped too) from there, not from
// reset-latest. A restart that skipped them would, with --batches N and no
// other traffic, wait for a batch for ever.
func TestNewPartitionStartIsStored(t *testing.T) {
	h, topic, st, cfg := storedStream(t, "events", 20, 10)
	p1 := offsets.Partition{Topic: topic, Partition: 1}
	cfg.Reset = offsets.ResetLatest
	s := start(t, cfg)
	h.kc.AddPartitions(topic, 2)
	timeout := time.After(time.Minute)
	for seen := false; !seen; {
		select {
		case ev := <-s.Events():
			if n, ok := ev.(*Notice); ok && n.Code == offsets.CodeNewPartition {
				seen = true
			}
		case <-timeout:
			t.Fatal("no new-partition event")
		}
	}
	_ = s.Close()
	for range s.Events() {
	}
	if info, _, _ := st.Stream("test"); info.Next[p1] != 0 || !hasKey(info.Next, p1) {
		t.Errorf("stored next offsets %v, want %s at 0", info.Next, p1)
	}
	produceToNew(t, h, p1, 5)

	cfg = h.config(st, topic)
	cfg.Reset = offsets.ResetLatest
	cfg.MaxBatches = 1
	evs := runWithin(t, cfg, 30*time.Second)
	for _, s := range evs[0].(*Started).Starts {
		if s.Partition == p1 && (s.NextOffset != 0 || s.Source != offsets.SourceStored) {
			t.Errorf("restart puts %s at %d (%s), want 0 (stored)", p1, s.NextOffset, s.Source)
		}
	}
	if f, u, n := covered(t, batches(evs), p1); f != 0 || u != 5 || n != 5 {
		t.Errorf("%s read [%d,%d) %d records after the restart, want [0,5) 5; events:%s", p1, f, u, n, describe(evs))
	}
}

func hasKey(m map[offsets.Partition]int64, p offsets.Partition) bool {
	_, ok := m[p]
	return ok
}

// produceToNew writes n records to a partition just added, once the
// set-up client's metadata knows it.
func produceToNew(t *testing.T, h *harness, p offsets.Partition, n int) {
	t.Helper()
	cl := h.kc.Client()
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: p.Topic, Partition: p.Partition, Value: []byte("v")}
		}
		err := cl.ProduceSync(context.Background(), recs...).FirstErr()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("produce to %s: %v", p, err)
		}
		cl.ForceMetadataRefresh()
		time.Sleep(50 * time.Millisecond)
	}
}

// With a planned batch pending at start, the partitions
// it does not hold still get their start stored: the next start puts them
// at the same place, not at a newer reset-latest.
func TestStartsStoredWithAPendingBatch(t *testing.T) {
	h := newHarness(t)
	topic := h.topicWith("events", 20, 100, 50)
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
	st := h.storeClosedAtEnd()
	seedStore(t, h, st, []string{topic}, map[offsets.Partition]int64{p0: 0}, planned(p0, 0, 100))
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetLatest
	cfg.MaxBatches = 1
	evs := runWithin(t, cfg, time.Minute)
	if bs := batches(evs); len(bs) != 1 || !bs[0].Redelivered {
		t.Fatalf("batches %s, want the re-delivered one", describe(evs))
	}
	// p1 has no stored offset in a topic the stream read before: it is a
	// new partition and starts at its log start, 0 (ResolveStarts).
	info, _, _ := st.Stream("test")
	if n1, ok := info.Next[p1]; !ok || n1 != 0 || info.Next[p0] != 100 {
		t.Fatalf("stored next offsets %v, want %s at 0 (where it started) and %s at 100", info.Next, p1, p0)
	}
}

// A pending batch the user overrides with -o is not
// re-delivered; the new batch that takes its id is a new batch, stored and
// reported as such, and the store says the old one was dropped.
func TestOverriddenPendingBatchIsNotStoredAsRedelivered(t *testing.T) {
	h := newHarness(t)
	topic := h.topicWith("events", 20, 300)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	st := h.storeClosedAtEnd()
	seedStore(t, h, st, []string{topic}, nil, planned(p0, 0, 100))
	cfg := h.config(st, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=200")}
	cfg.MaxBatches = 1
	evs := runWithin(t, cfg, time.Minute)
	bs := batches(evs)
	if len(bs) != 1 || bs[0].ID != 1 || bs[0].Redelivered || bs[0].Ranges[0].From != 200 {
		t.Fatalf("batches %s, want a new batch 1 from 200", describe(evs))
	}
	b, ok, err := st.Batch("test", 1)
	if err != nil || !ok || b.Redelivered || b.Ranges[0].From != 200 || b.State != offsets.StateAcked {
		t.Fatalf("stored batch 1 %+v (%v, %v), want the new batch from 200, acked, not redelivered", b, ok, err)
	}
	evsStored, err := st.Events("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	dropped := false
	for _, e := range evsStored {
		if e.Code == offsets.CodeDropped {
			dropped = true
		}
	}
	if !dropped {
		t.Errorf("no %q event in the store: %+v", offsets.CodeDropped, evsStored)
	}
}

// A seek made while a batch waits, then a quit, then
// `offsets set` of the seeked partition: the set wins. The ack of the batch
// re-delivered at the next start does not store the seek again.
func TestOffsetsSetBeatsAKeptSeek(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 2)
	h.kc.ProduceN(topic, 0, 300, 20)
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.MaxPerPartition, cfg.ManualAck = offsets.ResetEarliest, 100, true
	s := start(t, cfg)
	if b := firstPlanned(s); b == nil || len(b.Ranges) != 1 || b.Ranges[0].Partition != p0 {
		t.Fatalf("batch 1 %+v, want events[0] alone", b)
	}
	h.kc.ProduceN(topic, 1, 100, 20)
	if _, err := s.Seek(p1, offsets.Spec{Kind: offsets.SpecOffset, Offset: 40}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	for range s.Events() {
	}
	// offsets set events:1=70, as the command does.
	if err := st.SetNext("test", map[offsets.Partition]int64{p1: 70}, offsets.NewEvent(time.Now(), offsets.CodeSet, p1, "offsets set")); err != nil {
		t.Fatal(err)
	}
	cfg = h.config(st, topic)
	cfg.Reset, cfg.MaxPerPartition, cfg.MaxBatches = offsets.ResetEarliest, 100, 1
	evs := runWithin(t, cfg, time.Minute)
	if bs := batches(evs); len(bs) != 1 || !bs[0].Redelivered {
		t.Fatalf("batches %s, want batch 1 re-delivered", describe(evs))
	}
	if info, _, _ := st.Stream("test"); info.Next[p1] != 70 || info.Seeks != nil {
		t.Fatalf("stored %s at %d, kept seeks %v; want 70 (offsets set) and none", p1, info.Next[p1], info.Seeks)
	}
}

// A partition added while kbatch was stopped has no stored offset, but its
// topic was read before: the restart reads it from its log start (source
// new-partition), so the records written to it meanwhile are not skipped
// by --reset latest.
func TestPartitionAddedWhileStoppedIsReadFromItsStart(t *testing.T) {
	h, topic, st, cfg := storedStream(t, "events", 20, 10)
	p1 := offsets.Partition{Topic: topic, Partition: 1}
	cfg.Reset = offsets.ResetEarliest
	cfg.MaxBatches = 1
	runWithin(t, cfg, 30*time.Second)

	h.kc.AddPartitions(topic, 2)
	produceToNew(t, h, p1, 7)

	cfg = h.config(st, topic)
	cfg.Reset = offsets.ResetLatest
	cfg.MaxBatches = 1
	evs := runWithin(t, cfg, 30*time.Second)
	var found bool
	for _, s := range evs[0].(*Started).Starts {
		if s.Partition == p1 {
			found = true
			if s.NextOffset != 0 || s.Source != offsets.SourceNewPartition {
				t.Errorf("restart puts %s at %d (%s), want 0 (new-partition)", p1, s.NextOffset, s.Source)
			}
		}
	}
	if !found {
		t.Fatalf("no start for %s", p1)
	}
	if f, u, n := covered(t, batches(evs), p1); f != 0 || u != 7 || n != 7 {
		t.Errorf("%s read [%d,%d) %d records after the restart, want [0,7) 7; events:%s", p1, f, u, n, describe(evs))
	}
}

// The start's reset event lists the first offsets.MaxListed partitions in
// partition order (2 before 10) and counts the others: on a topic of
// 10,000 partitions one event listing all would take 300 KB.
func TestStartEventListsSomePartitions(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 25)
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetLatest
	s := start(t, cfg)
	_ = s.Close()
	for range s.Events() {
	}
	evs, err := st.Events("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	for _, e := range evs {
		if e.Code == offsets.CodeReset {
			msg = e.Message
		}
	}
	want := fmt.Sprintf("start positions: %s[0]=0 (reset-latest), %s[1]=0 (reset-latest), %s[2]=0 (reset-latest)", topic, topic, topic)
	if !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, fmt.Sprintf("%s[19]=0 (reset-latest) and 5 more", topic)) {
		t.Errorf("reset event %q, want it to start %q and end with partition 19 and 5 more", msg, want)
	}
}

// A stream taken over (--name) with other topics, its planned batch on the
// old topic: the batch is dropped with a reason, not "re-delivered with
// the same ranges" with no range at all and acked empty over the planned
// ranges in the log; the old topic's stored position stays where it was.
func TestPendingBatchOfAnotherTopicIsDropped(t *testing.T) {
	h := newHarness(t)
	old, now := h.kc.Topic("old", 1), h.kc.Topic("new", 1)
	h.kc.ProduceN(old, 0, 50, 20)
	h.kc.ProduceN(now, 0, 30, 20)
	p0 := offsets.Partition{Topic: old, Partition: 0}
	st := h.storeClosedAtEnd()
	seedStore(t, h, st, []string{old}, nil, planned(p0, 0, 50))
	cfg := h.config(st, now)
	cfg.NameExplicit, cfg.Reset, cfg.MaxBatches = true, offsets.ResetEarliest, 1
	evs := runWithin(t, cfg, time.Minute)
	bs := batches(evs)
	if len(bs) != 1 || bs[0].ID != 1 || bs[0].Redelivered || len(bs[0].Ranges) != 1 || bs[0].Ranges[0].Topic != now {
		t.Fatalf("batches %s, want a new batch 1 of %s", describe(evs), now)
	}
	var dropped, redelivered bool
	for _, ev := range evs {
		if n, ok := ev.(*Notice); ok {
			dropped = dropped || (n.Code == offsets.CodeDropped && strings.Contains(n.Message, old+"[0] is not among this run's partitions"))
			redelivered = redelivered || n.Code == offsets.CodeRedelivered
		}
	}
	if !dropped || redelivered {
		t.Errorf("dropped event %v, redelivered event %v; want a dropped one naming %s[0] and no redelivery: %s", dropped, redelivered, old, describe(evs))
	}
	info, _, err := st.Stream("test")
	if err != nil {
		t.Fatal(err)
	}
	if next, ok := info.Next[p0]; ok && next != 0 {
		t.Errorf("%s's stored position moved to %d", p0, next)
	}
}

// A batch line's ranges are a JSON array even when there are none.
func TestBatchLineRangesAreAnArray(t *testing.T) {
	buf, err := AppendEventJSON(nil, &BatchEvent{Batch: &Batch{Batch: offsets.Batch{ID: 1}}})
	if line := string(buf); err != nil || !strings.Contains(line, `"ranges":[]`) {
		t.Errorf("batch line %s (%v), want \"ranges\":[]", buf, err)
	}
}
