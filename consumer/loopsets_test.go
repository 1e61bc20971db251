package consumer

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// catchUpReadyEvery is a reference version of catchUpReady that looks at
// every partition instead of the set of partitions holding records.
func catchUpReadyEvery(l *loop) bool {
	ready := false
	for _, ps := range l.parts {
		full := len(ps.recs) >= l.cfg.MaxPerPartition || (ps.reader != nil && ps.reader.starved() && ps.reader.sent.Load() <= ps.fetched)
		switch {
		case full && len(ps.recs) > 0:
			ready = true
		case full, ps.reader == nil, ps.userPaused, ps.errored, ps.restart != nil:
		case ps.fetched < ps.hwm():
			return false
		}
	}
	return ready
}

// TestCatchUpReadySameAsEveryPartition drives the loop's sets through
// random states (records arriving and cut, partitions paused, failing,
// starved, reading on) and checks that catchUpReady, which looks only at
// the partitions holding records and at the last one that held a batch
// up, always says what a look at every partition says.
func TestCatchUpReadySameAsEveryPartition(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	l := benchLoop(12)
	l.cfg.MaxPerPartition = 4
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // notices (reconnected) are dropped, not waited on
	l.ctx = ctx
	for _, ps := range l.states {
		ps.bounds.HighWatermark = 0
		ps.reader = &reader{p: ps.p, maxHeld: 6, maxHeldBytes: 1 << 20}
	}
	for step := 0; step < 20_000; step++ {
		ps := l.states[rng.Intn(len(l.states))]
		switch rng.Intn(10) {
		case 0, 1: // records arrive
			n := 1 + rng.Intn(3)
			msgs := make([]*record.Record, n)
			for i := range msgs {
				msgs[i] = &record.Record{Offset: ps.position() + int64(i), Value: []byte("v")}
			}
			ps.reader.held += int64(n)
			if err := l.onChunk(chunk{p: ps.p, gen: ps.gen, msgs: msgs, bytes: int64(n), next: msgs[n-1].Offset + 1}); err != nil {
				t.Fatal(err)
			}
		case 2: // more to read
			ps.bounds.HighWatermark += int64(1 + rng.Intn(5))
		case 3: // the reader reads on to the high watermark
			ps.fetched = max(ps.fetched, ps.bounds.HighWatermark)
		case 4:
			ps.userPaused = !ps.userPaused
		case 5:
			ps.errored = !ps.errored
		case 6:
			if ps.restart == nil {
				ps.restart = &restart{offset: ps.position()}
			} else {
				ps.restart = nil
			}
		case 7: // a batch is cut
			if b, _ := l.cut(time.Now()); b != nil {
				for _, r := range b.Ranges {
					l.parts[r.Partition].reader.held -= r.Records
				}
			}
		case 8: // a seek drops what the partition held
			// (moveTo without the fetcher behind it: the records
			// go, the partition stays in the holding set.)
			at := ps.position()
			l.held -= ps.bytes
			ps.bytes = 0
			clear(ps.recs)
			ps.recs = ps.recs[:0]
			ps.from, ps.jump, ps.fetched = at, offsets.CodeSeek, at
			ps.reader = &reader{p: ps.p, maxHeld: 6, maxHeldBytes: 1 << 20}
		case 9: // the reader hands on records that have not arrived yet
			ps.reader.sent.Store(max(ps.fetched, ps.reader.sent.Load()) + int64(rng.Intn(3)))
		}
		if got, want := l.catchUpReady(), catchUpReadyEvery(l); got != want {
			t.Fatalf("step %d: catchUpReady %v, every partition says %v", step, got, want)
		}
		for _, ps := range l.states {
			if _, in := l.holding[ps]; len(ps.recs) > 0 && !in {
				t.Fatalf("step %d: %s holds %d records and is not in the holding set", step, ps.p, len(ps.recs))
			}
		}
	}
}

// TestCatchUpWaitsForRecordsOnTheirWay: two partitions of 5,000 records
// each, a batch of up to 5,000 per partition. The fetcher read both to
// their end, so both readers hold their read-ahead (starved), but the loop
// has taken only the first chunks. The records on their way belong in
// this batch: it is not ready until they arrived, and then holds all
// 10,000 (docs/design.md §2.8), not 1,882 + 3,989 cut at once.
func TestCatchUpWaitsForRecordsOnTheirWay(t *testing.T) {
	l := benchLoop(2)
	l.cfg.MaxPerPartition = 5000
	p0, p1 := l.states[0], l.states[1]
	msgs := func(from, until int64) []*record.Record {
		out := make([]*record.Record, 0, until-from)
		for o := from; o < until; o++ {
			out = append(out, &record.Record{Offset: o, Value: []byte("v")})
		}
		return out
	}
	arrive := func(ps *partState, from, until int64) {
		t.Helper()
		if err := l.onChunk(chunk{p: ps.p, gen: ps.gen, msgs: msgs(from, until), bytes: until - from, next: until}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ps := range l.states {
		ps.bounds.HighWatermark = 5000
		// Everything was read and handed on: the reader is at its
		// read-ahead of 5,000 records.
		ps.reader = &reader{p: ps.p, maxHeld: 5000, maxHeldBytes: 1 << 30, held: 5000}
		ps.reader.sent.Store(5000)
		ps.reader.hwm.Store(5000)
	}
	arrive(p0, 0, 1882)
	arrive(p1, 0, 3989)
	if l.catchUpReady() {
		t.Fatalf("catch-up batch ready with %d + %d of 10,000 records read, the rest on their way", len(p0.recs), len(p1.recs))
	}
	arrive(p1, 3989, 5000)
	if l.catchUpReady() {
		t.Fatal("catch-up batch ready while 3,118 records of partition 0 are on their way")
	}
	arrive(p0, 1882, 5000)
	if !l.catchUpReady() {
		t.Fatal("catch-up batch not ready with every record arrived")
	}
	b, _ := l.cut(time.Now())
	if b == nil || b.Records != 10000 {
		t.Fatalf("batch %+v, want 10,000 records", b)
	}
}

// TestProgressCountsBatchesInFlight checks Acked and Ahead with ranges of
// one partition in several batches in flight at once (the batch being
// acked, the one processed, the batch to re-deliver), as gathered once per
// report.
func TestProgressCountsBatchesInFlight(t *testing.T) {
	l := benchLoop(3)
	events := make(chan Event, 1)
	l.s.events = events
	p0, p1, p2 := l.order[0], l.order[1], l.order[2]
	l.parts[p0].from, l.parts[p1].from, l.parts[p2].from = 30, 50, 7
	l.parts[p0].recs = []*record.Record{{Offset: 30}, {Offset: 31}}
	rg := func(p offsets.Partition, from, until int64) offsets.BatchRange {
		return offsets.BatchRange{Range: offsets.Range{Partition: p, From: from, Until: until}, Records: until - from}
	}
	l.busy = &Batch{Batch: offsets.Batch{ID: 2, Ranges: []offsets.BatchRange{rg(p0, 20, 30), rg(p1, 45, 50)}}}
	l.processed = &Batch{Batch: offsets.Batch{ID: 1, Ranges: []offsets.BatchRange{rg(p0, 10, 20)}}}
	l.redeliver = &offsets.Batch{ID: 1, Ranges: []offsets.BatchRange{rg(p1, 40, 45)}}
	l.emitProgress(time.Now())
	pr := (<-events).(*Progress)
	want := map[offsets.Partition][2]int64{p0: {10, 2 + 10 + 10}, p1: {40, 5}, p2: {7, 0}}
	for _, st := range pr.Partitions {
		if w := want[st.Partition]; st.Acked != w[0] || st.Ahead != w[1] {
			t.Errorf("%s: acked %d ahead %d, want %d and %d", st.Partition, st.Acked, st.Ahead, w[0], w[1])
		}
	}
}

// TestKeepRestClearsTaken checks that the records cut into a batch are
// not kept alive by the partition's slice, and that a large slice is
// given up for a small rest.
func TestKeepRestClearsTaken(t *testing.T) {
	recs := make([]*record.Record, 5, 8)
	for i := range recs {
		recs[i] = &record.Record{Offset: int64(i)}
	}
	rest := keepRest(recs, 3)
	if len(rest) != 2 || rest[0].Offset != 3 || rest[1].Offset != 4 {
		t.Fatalf("rest %v", rest)
	}
	for i, m := range recs[2:5] {
		if m != nil {
			t.Errorf("slot %d still points at offset %d", i+2, m.Offset)
		}
	}
	big := make([]*record.Record, 1000)
	for i := range big {
		big[i] = &record.Record{Offset: int64(i)}
	}
	rest = keepRest(big, 999)
	if len(rest) != 1 || rest[0].Offset != 999 || cap(rest) >= 1000 {
		t.Fatalf("rest of a large slice: len %d cap %d", len(rest), cap(rest))
	}
}
