package offsets

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// testBatch is a batch over events partitions 0..n-1, each range
// [from, from+10).
func testBatch(id uint64, n int, from int64) Batch {
	b := Batch{ID: id, Time: testNow.Add(time.Duration(id) * time.Second)}
	for i := range n {
		b.Ranges = append(b.Ranges, BatchRange{Range: Range{Partition: ev(int32(i)), From: from, Until: from + 10},
			Records: 10, Bytes: 100})
		b.Records += 10
		b.Bytes += 100
	}
	return b
}

func mustEnsure(t testing.TB, s *Store, name string) {
	t.Helper()
	must(t, s.EnsureStream(name, []string{"127.0.0.1:9092"}, []string{"events"}))
}

func TestStreams(t *testing.T) {
	s := openTest(t)
	if got, err := s.Streams(); err != nil || len(got) != 0 {
		t.Fatalf("Streams of a new store = %v, %v", got, err)
	}
	if err := s.EnsureStream("", nil, nil); err == nil {
		t.Error("EnsureStream with an empty name succeeded")
	}
	mustEnsure(t, s, "orders")
	mustEnsure(t, s, "events")
	must(t, s.Plan("events", testBatch(1, 2, 0)))
	must(t, s.Ack("events", 1, testNow))
	// Re-ensuring with other brokers keeps positions and the batch log.
	must(t, s.EnsureStream("events", []string{"k1:9092", "k2:9092"}, []string{"events", "more"}))
	got, err := s.Streams()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "events" || got[1].Name != "orders" {
		t.Fatalf("Streams = %+v, want events then orders", got)
	}
	e := got[0]
	if !reflect.DeepEqual(e.Brokers, []string{"k1:9092", "k2:9092"}) || !reflect.DeepEqual(e.Topics, []string{"events", "more"}) ||
		e.LastBatch != 1 || !reflect.DeepEqual(e.Next, map[Partition]int64{ev(0): 10, ev(1): 10}) || e.Updated.IsZero() {
		t.Errorf("events stream = %+v", e)
	}
	if got[1].Next == nil || len(got[1].Next) != 0 {
		t.Errorf("orders Next = %#v, want an empty map", got[1].Next)
	}
	one, ok, err := s.Stream("events")
	if err != nil || !ok || !reflect.DeepEqual(one, e) {
		t.Errorf("Stream(events) = %+v, %v, %v; want %+v", one, ok, err, e)
	}
	if _, ok, err := s.Stream("nope"); ok || err != nil {
		t.Errorf("Stream(nope) = %v, %v; want not found, no error", ok, err)
	}
}

// streamWrites makes each write to one stream of s (a batch planned and
// acked, an event with message msg, a next offset set) and returns their
// errors by method.
func streamWrites(s *Store, stream, msg string) map[string]error {
	return map[string]error{
		"Plan":     s.Plan(stream, Batch{ID: 1}),
		"Ack":      s.Ack(stream, 1, testNow),
		"AddEvent": s.AddEvent(stream, NewEvent(testNow, CodeSeek, ev(0), msg)),
		"SetNext":  s.SetNext(stream, map[Partition]int64{ev(0): 1}, Event{}),
	}
}

func TestUnknownStream(t *testing.T) {
	s := openTest(t)
	writes := streamWrites(s, "nope", "")
	for name, err := range writes {
		if !errors.Is(err, ErrUnknownStream) {
			t.Errorf("%s on an unknown stream = %v, want ErrUnknownStream", name, err)
		}
	}
	if p, err := s.Pending("nope"); p != nil || err != nil {
		t.Errorf("Pending(nope) = %v, %v", p, err)
	}
	if b, err := s.Batches("nope", 0); b != nil || err != nil {
		t.Errorf("Batches(nope) = %v, %v", b, err)
	}
	if e, err := s.Events("nope", 0); e != nil || err != nil {
		t.Errorf("Events(nope) = %v, %v", e, err)
	}
	if _, ok, err := s.Batch("nope", 1); ok || err != nil {
		t.Errorf("Batch(nope, 1) = %v, %v", ok, err)
	}
}

func TestPlanAck(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	must(t, s.SetNext("events", map[Partition]int64{ev(0): 0, ev(1): 0, ev(5): 77}, Event{}))
	b1 := testBatch(1, 2, 0)
	b1.State, b1.Redelivered = StateAcked, false // Plan stores planned whatever it is given
	must(t, s.Plan("events", b1))
	p, err := s.Pending("events")
	if err != nil || p == nil || p.State != StatePlanned || !reflect.DeepEqual(p.Ranges, b1.Ranges) || p.Redelivered {
		t.Fatalf("Pending = %+v, %v; want b1 planned", p, err)
	}
	info, _, _ := s.Stream("events")
	if want := map[Partition]int64{ev(0): 0, ev(1): 0, ev(5): 77}; !reflect.DeepEqual(info.Next, want) || info.LastBatch != 0 {
		t.Errorf("after Plan: Next = %v, LastBatch %d; want %v, 0", info.Next, info.LastBatch, want)
	}

	ackAt := testNow.Add(time.Minute)
	must(t, s.Ack("events", 1, ackAt))
	info, _, _ = s.Stream("events")
	if want := map[Partition]int64{ev(0): 10, ev(1): 10, ev(5): 77}; !reflect.DeepEqual(info.Next, want) || info.LastBatch != 1 ||
		!info.Updated.Equal(ackAt) {
		t.Errorf("after Ack: %+v; want Next %v, LastBatch 1, Updated %v", info, want, ackAt)
	}
	if p, err := s.Pending("events"); p != nil || err != nil {
		t.Errorf("Pending after Ack = %+v, %v", p, err)
	}
	got, ok, err := s.Batch("events", 1)
	if err != nil || !ok || got.State != StateAcked || !got.AckedAt.Equal(ackAt) || !got.Time.Equal(b1.Time) ||
		got.Records != 20 || got.Bytes != 200 || !reflect.DeepEqual(got.Ranges, b1.Ranges) {
		t.Errorf("Batch(1) = %+v, %v, %v", got, ok, err)
	}
	if err := s.Ack("events", 1, ackAt.Add(time.Hour)); err != nil {
		t.Errorf("second Ack of batch 1: %v, want a no-op", err)
	}
	if got, _, _ := s.Batch("events", 1); !got.AckedAt.Equal(ackAt) {
		t.Errorf("second Ack changed AckedAt to %v", got.AckedAt)
	}

	for name, err := range map[string]error{
		"Plan 3":  s.Plan("events", testBatch(3, 1, 10)),
		"Plan 1":  s.Plan("events", testBatch(1, 1, 10)),
		"Ack 2":   s.Ack("events", 2, testNow), // never planned
		"Ack 0":   s.Ack("events", 0, testNow),
		"Ack 9":   s.Ack("events", 9, testNow),
		"Plan 2x": s.Plan("events", Batch{ID: 2, Ranges: []BatchRange{{Range: Range{Partition: ev(0), From: 20, Until: 10}}}}),
	} {
		if err == nil {
			t.Errorf("%s succeeded", name)
		} else if name != "Plan 2x" && !errors.Is(err, ErrBatchOrder) {
			t.Errorf("%s = %v, want ErrBatchOrder", name, err)
		}
	}
}

// TestCrashBetweenPlanAndAck is the crash of docs/design.md §2.4: the process dies
// after Plan; on restart the same ranges come back as pending, the next
// offsets have not moved, and re-planning marks the batch re-delivered.
func TestCrashBetweenPlanAndAck(t *testing.T) {
	s := openTest(t)
	path := s.Path()
	mustEnsure(t, s, "events")
	must(t, s.Plan("events", testBatch(1, 3, 0)))
	must(t, s.Ack("events", 1, testNow))
	b2 := testBatch(2, 3, 10)
	must(t, s.Plan("events", b2))
	if err := s.Close(); err != nil { // the "crash": no Ack
		t.Fatal(err)
	}

	s = mustOpen(t, path)
	defer s.Close()
	p, err := s.Pending("events")
	if err != nil || p == nil || p.ID != 2 || !reflect.DeepEqual(p.Ranges, b2.Ranges) {
		t.Fatalf("Pending after restart = %+v, %v; want batch 2 with %v", p, err, b2.Ranges)
	}
	info, _, _ := s.Stream("events")
	if want := map[Partition]int64{ev(0): 10, ev(1): 10, ev(2): 10}; !reflect.DeepEqual(info.Next, want) || info.LastBatch != 1 {
		t.Errorf("after restart: Next %v, LastBatch %d; want %v, 1", info.Next, info.LastBatch, want)
	}
	must(t, s.Plan("events", *p))
	if p, _ := s.Pending("events"); p == nil || !p.Redelivered {
		t.Errorf("re-planned batch = %+v, want Redelivered", p)
	}
	must(t, s.Ack("events", 2, testNow))
	info, _, _ = s.Stream("events")
	if want := map[Partition]int64{ev(0): 20, ev(1): 20, ev(2): 20}; !reflect.DeepEqual(info.Next, want) {
		t.Errorf("after re-delivered Ack: Next %v, want %v", info.Next, want)
	}
}

func TestBatchLogCap(t *testing.T) {
	s := openTest(t)
	s.maxBatches = 5
	mustEnsure(t, s, "events")
	for id := uint64(1); id <= 12; id++ {
		must(t, s.Plan("events", testBatch(id, 1, int64(id-1)*10)))
		if id < 12 {
			must(t, s.Ack("events", id, testNow))
		}
	}
	all, err := s.Batches("events", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, b := range all {
		ids = append(ids, b.ID)
	}
	if want := []uint64{12, 11, 10, 9, 8}; !reflect.DeepEqual(ids, want) {
		t.Errorf("batch ids = %v, want %v", ids, want)
	}
	if all[0].State != StatePlanned || all[1].State != StateAcked {
		t.Errorf("states = %s, %s; want planned, acked", all[0].State, all[1].State)
	}
	if two, _ := s.Batches("events", 2); len(two) != 2 || two[0].ID != 12 {
		t.Errorf("Batches(limit 2) = %+v", two)
	}
	if _, ok, _ := s.Batch("events", 7); ok {
		t.Error("batch 7 was not pruned")
	}
}

// TestConcurrentUse runs readers beside a writer; -race checks the rest.
func TestConcurrentUse(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Batches("events", 10); err != nil {
					t.Error(err)
				}
				if _, _, err := s.Stream("events"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for id := uint64(1); id <= 20; id++ {
		must(t, s.Plan("events", testBatch(id, 4, int64(id-1)*10)))
		must(t, s.Ack("events", id, testNow))
	}
	close(stop)
	wg.Wait()
	if info, _, _ := s.Stream("events"); info.Next[ev(3)] != 200 {
		t.Errorf("Next = %v", info.Next)
	}
}

// TestAckWithAndWithoutThePlannedBatchInMemory acks one batch planned by
// the same Store (which keeps it in memory) and one planned before the
// store was reopened (decoded from the file): both move the same offsets
// and leave the same acked batch.
func TestAckWithAndWithoutThePlannedBatchInMemory(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	must(t, s.Plan("events", testBatch(1, 3, 0)))
	must(t, s.Ack("events", 1, testNow))
	must(t, s.Plan("events", testBatch(2, 3, 10)))
	path := s.Path()
	must(t, s.Close())
	s2 := mustOpen(t, path)
	defer s2.Close()
	must(t, s2.Ack("events", 2, testNow.Add(time.Second)))
	for id, from := range map[uint64]int64{1: 0, 2: 10} {
		b, ok, err := s2.Batch("events", id)
		want := testBatch(id, 3, from)
		if err != nil || !ok || b.State != StateAcked || !reflect.DeepEqual(b.Ranges, want.Ranges) || b.Records != want.Records {
			t.Errorf("batch %d: %+v, %v, %v", id, b, ok, err)
		}
	}
	info, _, err := s2.Stream("events")
	if err != nil || info.LastBatch != 2 || !reflect.DeepEqual(info.Next, map[Partition]int64{ev(0): 20, ev(1): 20, ev(2): 20}) {
		t.Fatalf("stream %+v, %v", info, err)
	}
}

// AckAndPlan acks one batch and writes the next ahead in one transaction:
// both land, or (a bad next batch) neither does.
func TestAckAndPlan(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	must(t, s.Plan("events", testBatch(1, 2, 0)))
	ackAt := testNow.Add(time.Minute)
	for name, next := range map[string]Batch{
		"next is not id+1": testBatch(3, 2, 10),
		"bad range":        {ID: 2, Ranges: []BatchRange{{Range: Range{Partition: ev(0), From: 20, Until: 10}}}},
	} {
		if err := s.AckAndPlan("events", 1, ackAt, next); err == nil {
			t.Errorf("%s: AckAndPlan succeeded", name)
		}
		info, _, _ := s.Stream("events")
		if p, _ := s.Pending("events"); info.LastBatch != 0 || p == nil || p.ID != 1 {
			t.Fatalf("%s: after a refused AckAndPlan, LastBatch %d and pending %+v; want 0 and batch 1", name, info.LastBatch, p)
		}
	}
	must(t, s.AckAndPlan("events", 1, ackAt, testBatch(2, 2, 10)))
	info, _, _ := s.Stream("events")
	if want := map[Partition]int64{ev(0): 10, ev(1): 10}; !reflect.DeepEqual(info.Next, want) || info.LastBatch != 1 {
		t.Errorf("after AckAndPlan: Next %v, LastBatch %d; want %v, 1", info.Next, info.LastBatch, want)
	}
	if b, _, _ := s.Batch("events", 1); b.State != StateAcked || !b.AckedAt.Equal(ackAt) {
		t.Errorf("batch 1 after AckAndPlan: %+v", b)
	}
	p, err := s.Pending("events")
	if err != nil || p == nil || p.ID != 2 || p.State != StatePlanned || p.Redelivered {
		t.Fatalf("pending after AckAndPlan = %+v, %v; want batch 2 planned", p, err)
	}
	// The ack of the batch planned that way works as after Plan.
	must(t, s.Ack("events", 2, ackAt))
	if info, _, _ := s.Stream("events"); info.LastBatch != 2 || info.Next[ev(0)] != 20 {
		t.Errorf("after acking batch 2: %+v", info)
	}
}

// Wide batches are capped by ranges too: the log keeps maxRanges worth of
// the newest batches' ranges, and never fewer than minBatchesKept.
func TestBatchLogCapByRanges(t *testing.T) {
	s := openTest(t)
	s.maxBatches, s.maxRanges = 100, 40
	mustEnsure(t, s, "events")
	plan := func(id uint64, parts int) {
		t.Helper()
		must(t, s.Plan("events", testBatch(id, parts, 0)))
		must(t, s.Ack("events", id, testNow))
	}
	for id := uint64(1); id <= 30; id++ {
		plan(id, 1) // 1 range each: 30 kept (under both caps)
	}
	if all, _ := s.Batches("events", 0); len(all) != 30 {
		t.Fatalf("%d narrow batches kept, want 30", len(all))
	}
	for id := uint64(31); id <= 40; id++ {
		plan(id, 2) // 2 ranges each: 40/2 = 20 newest kept
	}
	all, _ := s.Batches("events", 0)
	if len(all) != 20 || all[0].ID != 40 || all[19].ID != 21 {
		t.Fatalf("%d batches kept (newest %d), want 20 from 21 to 40", len(all), all[0].ID)
	}
	plan(41, 10) // 40/10 = 4, but at least minBatchesKept
	if all, _ := s.Batches("events", 0); len(all) != minBatchesKept {
		t.Fatalf("%d batches kept after a wide one, want %d", len(all), minBatchesKept)
	}
}

// A seek made while batches cut before it are unacked survives their acks,
// each of which stores the seek's offset again, in its own transaction.
func TestSeekSurvivesTheAcksOfBatchesCutBeforeIt(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	if err := s.Plan("events", testBatch(1, 2, 0)); err != nil { // [0,10) on events[0] and [1]
		t.Fatal(err)
	}
	// The stream has cut batch 2 too (not yet planned) when the seek comes.
	must(t, s.Seek("events", ev(0), 50, 2, NewEvent(testNow, CodeSeek, ev(0), "seek")))
	next := func() (int64, int64, map[Partition]int64) {
		info, _, _ := s.Stream("events")
		return info.Next[ev(0)], info.Next[ev(1)], info.Seeks
	}
	if p0, _, seeks := next(); p0 != 50 || seeks[ev(0)] != 50 {
		t.Fatalf("after the seek: next %d, seeks %v", p0, seeks)
	}
	must(t, s.AckAndPlan("events", 1, testNow, testBatch(2, 2, 10)))
	if p0, p1, seeks := next(); p0 != 50 || p1 != 10 || seeks[ev(0)] != 50 {
		t.Fatalf("after acking batch 1: next %d and %d, seeks %v; want 50 (the seek), 10, the seek kept", p0, p1, seeks)
	}
	must(t, s.Ack("events", 2, testNow))
	if p0, p1, seeks := next(); p0 != 50 || p1 != 20 || seeks != nil {
		t.Fatalf("after acking batch 2: next %d and %d, seeks %v; want 50, 20, none left", p0, p1, seeks)
	}
	// A seek with nothing cut and unacked is stored and not kept.
	must(t, s.Seek("events", ev(1), 5, 2, Event{}))
	if _, p1, seeks := next(); p1 != 5 || seeks != nil {
		t.Fatalf("a seek with every batch acked: next %d, seeks %v", p1, seeks)
	}
}

// A seek kept for a pending batch, then `offsets set` of
// the same partition: the set wins; the batch's ack does not store the
// seek again over it.
func TestSetNextForgetsAKeptSeek(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	if err := s.Plan("events", testBatch(1, 1, 0)); err != nil { // events[0] [0,10)
		t.Fatal(err)
	}
	for _, p := range []Partition{ev(0), ev(1)} {
		must(t, s.Seek("events", p, 50, 1, NewEvent(testNow, CodeSeek, p, "seek")))
	}
	must(t, s.SetNext("events", map[Partition]int64{ev(1): 70}, NewEvent(testNow, CodeSet, ev(1), "offsets set")))
	must(t, s.Ack("events", 1, testNow))
	info, _, _ := s.Stream("events")
	if info.Next[ev(1)] != 70 || info.Next[ev(0)] != 50 || info.Seeks != nil {
		t.Fatalf("after the ack: next %v, seeks %v; want events[1] at 70 (the set), events[0] at 50 (its seek), none kept", info.Next, info.Seeks)
	}
}

// ResetSeeks keeps, for a restart that re-delivers the pending batch, only
// the seeks of that batch's partitions; DropPending removes the batch and
// every kept seek, so the id is free for a new batch.
func TestResetSeeksAndDropPending(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	pending := testBatch(1, 1, 0)
	must(t, s.Plan("events", pending))
	for _, p := range []Partition{ev(0), ev(1)} {
		must(t, s.Seek("events", p, 50, 3, Event{}))
	}
	must(t, s.ResetSeeks("events", &pending))
	if info, _, _ := s.Stream("events"); !reflect.DeepEqual(info.Seeks, map[Partition]int64{ev(0): 50}) {
		t.Fatalf("seeks after ResetSeeks %v, want events[0]'s alone", info.Seeks)
	}
	if err := s.DropPending("events", 2, Event{}); !errors.Is(err, ErrBatchOrder) {
		t.Fatalf("dropping batch 2: %v, want ErrBatchOrder", err)
	}
	must(t, s.DropPending("events", 1, NewEvent(testNow, CodeDropped, Partition{}, "dropped")))
	if p, _ := s.Pending("events"); p != nil {
		t.Fatalf("pending after DropPending %+v", p)
	}
	b := testBatch(1, 1, 100)
	must(t, s.Plan("events", b))
	got, _, _ := s.Batch("events", 1)
	if info, _, _ := s.Stream("events"); got.Redelivered || got.Ranges[0].From != 100 || info.Seeks != nil {
		t.Fatalf("new batch 1 %+v, seeks %v; want a new batch from 100, no seek kept", got, info.Seeks)
	}
}

// A next offset moved without an ack is marked with why (StreamInfo.Moved)
// until a range of the partition is acked: SetNext marks a partition that
// had another offset with the event's code, SetStarts with each one's own,
// a seek with "seek", a kept seek again at the ack that re-applies it.
func TestMovedMarksUntilAnAck(t *testing.T) {
	s := openTest(t)
	mustEnsure(t, s, "events")
	moved := func() map[Partition]string {
		info, _, _ := s.Stream("events")
		return info.Moved
	}
	must(t, s.SetNext("events", map[Partition]int64{ev(0): 5, ev(1): 5}, NewEvent(testNow, CodeSet, ev(0), "first")))
	if m := moved(); m != nil {
		t.Fatalf("moved %v after first positions, want none (nothing was there)", m)
	}
	if err := s.SetStarts("events", map[Partition]int64{ev(0): 50, ev(1): 5, ev(2): 7},
		map[Partition]string{ev(0): CodeDataLoss}, NewEvent(testNow, CodeReset, Partition{}, "starts")); err != nil {
		t.Fatal(err)
	}
	if m := moved(); !reflect.DeepEqual(m, map[Partition]string{ev(0): CodeDataLoss}) {
		t.Fatalf("moved %v, want events[0] data-loss alone (events[1] did not move, events[2] is new)", m)
	}
	must(t, s.Plan("events", testBatch(1, 1, 50)))
	must(t, s.Seek("events", ev(1), 2, 1, Event{}))
	if m := moved(); !reflect.DeepEqual(m, map[Partition]string{ev(0): CodeDataLoss, ev(1): CodeSeek}) {
		t.Fatalf("moved %v after the seek", m)
	}
	must(t, s.Ack("events", 1, testNow))
	if m := moved(); !reflect.DeepEqual(m, map[Partition]string{ev(1): CodeSeek}) {
		t.Fatalf("moved %v after acking events[0]'s range, want the kept seek's alone", m)
	}
}

// SeekAll is Seek of each move in turn, in one transaction: over random
// moves (partitions moved twice, before and after acked batches) the
// stream's next offsets, kept seeks and events are what the single seeks
// leave.
func TestSeekAllIsSeekOfEachMove(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 30; round++ {
		one, all := openTest(t), openTest(t)
		for _, s := range []*Store{one, all} {
			mustEnsure(t, s, "events")
			must(t, s.Plan("events", testBatch(1, 2, 0)))
			must(t, s.Ack("events", 1, testNow))
		}
		var moves []SeekMove
		for i := 0; i < 1+rng.IntN(12); i++ {
			p := ev(int32(rng.IntN(4)))
			moves = append(moves, SeekMove{Partition: p, Offset: int64(rng.IntN(100)), Through: uint64(rng.IntN(3)),
				Event: NewEvent(testNow.Add(time.Duration(i)*time.Second), CodeSeek, p, fmt.Sprintf("seek %d", i))})
		}
		for _, m := range moves {
			must(t, one.Seek("events", m.Partition, m.Offset, m.Through, m.Event))
		}
		must(t, all.SeekAll("events", moves))
		a, _, _ := one.Stream("events")
		b, _, _ := all.Stream("events")
		if !reflect.DeepEqual(a.Next, b.Next) || !reflect.DeepEqual(a.Seeks, b.Seeks) || !a.Updated.Equal(b.Updated) {
			t.Fatalf("round %d, moves %+v:\nSeek each: next %v seeks %v updated %v\nSeekAll:   next %v seeks %v updated %v",
				round, moves, a.Next, a.Seeks, a.Updated, b.Next, b.Seeks, b.Updated)
		}
		ea, _ := one.Events("events", 100)
		eb, _ := all.Events("events", 100)
		if !reflect.DeepEqual(ea, eb) {
			t.Fatalf("round %d: events differ:\n%v\n%v", round, ea, eb)
		}
	}
	s := openTest(t)
	mustEnsure(t, s, "events")
	if err := s.SeekAll("events", []SeekMove{{Partition: ev(0), Offset: 3}, {Partition: ev(1), Offset: -1}}); err == nil {
		t.Fatal("a negative offset among the moves was stored")
	}
	if info, _, _ := s.Stream("events"); len(info.Next) != 0 {
		t.Fatalf("a refused SeekAll stored %v", info.Next)
	}
}

// The picker's start choice survives closing and opening the store, and
// needs the stream to exist.
func TestStartChoiceIsRemembered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.db")
	st := mustOpen(t, path)
	if err := st.SetStartChoice("events", "-100"); !errors.Is(err, ErrUnknownStream) {
		t.Fatalf("choice for an unknown stream: %v", err)
	}
	must(t, st.EnsureStream("events", []string{"b:9092"}, []string{"events"}))
	must(t, st.SetStartChoice("events", "@-1h"))
	must(t, st.Close())
	st = mustOpen(t, path)
	defer st.Close()
	info, ok, err := st.Stream("events")
	if err != nil || !ok || info.StartChoice != "@-1h" || info.LastBatch != 0 || len(info.Next) != 0 {
		t.Fatalf("after reopening: %+v %v %v", info, ok, err)
	}
}
