package consumer

import (
	"context"
	"fmt"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// maybeCut cuts a batch when one is due: the interval passed, a catch-up
// batch is ready (catchUpReady), a data-loss restart waits, the stop
// condition is met, or CutNow was asked. It never cuts while paused or
// while a batch waits for its ack.
func (l *loop) maybeCut(now time.Time) error {
	if !l.canCut() {
		return nil
	}
	if l.redeliver != nil {
		return l.maybeRedeliver(now)
	}
	due := l.cutNow || now.Sub(l.lastCut) >= l.cfg.Interval || l.catchUpReady()
	if !due && l.cfg.UntilEnd {
		due = l.untilEndReached(now)
	}
	if !due {
		return nil
	}
	l.cutNow = false
	l.lastCut = now
	b, recs := l.cut(now)
	if b == nil {
		return nil
	}
	return l.process(b, recs)
}

func (l *loop) untilEndReached(now time.Time) bool {
	for _, ps := range l.parts {
		if ps.target >= 0 && ps.corrupt == nil && !l.reached(ps, ps.target, now) {
			return false
		}
	}
	return true
}

// catchUpReady reports whether a catch-up batch is ready before the
// interval has passed (docs/design.md §2.8): a partition is full, and every
// partition with a backlog is full or holds all that the broker had for
// it. A partition is full when it holds MaxPerPartition records or cannot
// read more for memory (its read-ahead, or its broker's share of the
// fetcher's, is spent). One full partition does not cut a batch while
// another still has records to read: with a backlog everywhere, every
// batch holds MaxPerPartition records of every partition. Partitions that
// cannot read now (paused, broker trouble, a data-loss restart pending,
// stopped at a corrupt batch) are not waited for.
//
// Only partitions holding records can be full, so with none full this
// costs the partitions holding records; and the partition that last held
// a batch up is asked first, so a catch-up waiting for one partition does
// not look at every other one after each event.
func (l *loop) catchUpReady() bool {
	ready := false
	for ps := range l.holding {
		if len(ps.recs) > 0 && l.full(ps) {
			ready = true
			break
		}
	}
	if !ready {
		return false
	}
	if b := l.blocker; b != nil && l.backlogged(b) {
		return false
	}
	for _, ps := range l.states {
		if l.backlogged(ps) {
			l.blocker = ps
			return false
		}
	}
	l.blocker = nil
	return true
}

// full reports whether ps holds MaxPerPartition records or cannot read
// more for memory. A reader counts what it handed on as held from the
// moment it sends it, so while chunks of it are still on their way to the
// loop it may be starved with the loop holding only part of its records:
// the partition is not full until they arrived (found on a real broker
// under -race, where the fetcher read two partitions to their end while
// the loop was still taking the first chunks, and a batch meant to hold
// every record held 5,871 of 10,000: TestCatchUpWaitsForRecordsOnTheirWay).
func (l *loop) full(ps *partState) bool {
	if len(ps.recs) >= l.cfg.MaxPerPartition {
		return true
	}
	r := ps.reader
	return r != nil && r.starved() && !r.onTheirWay(ps.fetched)
}

// backlogged reports whether ps has records left to read and can read
// them now: a catch-up batch waits for it.
func (l *loop) backlogged(ps *partState) bool {
	if ps.reader == nil || ps.userPaused || ps.errored || ps.corrupt != nil || ps.restart != nil || l.full(ps) {
		return false
	}
	return ps.fetched < ps.hwm()
}

// cut takes every record held into a new batch; nil when none is held.
func (l *loop) cut(now time.Time) (*Batch, []*record.Record) {
	b := &Batch{Batch: offsets.Batch{ID: l.nextID, Time: now, State: offsets.StatePlanned}}
	parts := l.sorted(l.holding)
	n, ranges := 0, 0
	for _, ps := range parts {
		if len(ps.recs) > 0 {
			n += min(len(ps.recs), l.cfg.MaxPerPartition)
			ranges++
		}
	}
	if n == 0 {
		clear(l.holding)
		return nil, nil
	}
	samples := l.sampling(b)
	// The batch's records and ranges in one allocation each, not grown
	// partition by partition.
	recs := make([]*record.Record, 0, n)
	b.Ranges = make([]offsets.BatchRange, 0, ranges)
	for _, ps := range parts {
		if len(ps.recs) == 0 {
			delete(l.holding, ps)
			continue
		}
		n := min(len(ps.recs), l.cfg.MaxPerPartition)
		until := offsets.Next(ps.recs[n-1].Offset)
		recs = l.take(b, ps, recs, n, until, samples)
	}
	if len(b.Ranges) == 0 {
		return nil, nil
	}
	return b, recs
}

// take moves ps's first n records into b as the range [ps.from, until),
// with copies of the first samples of them in b.Samples.
func (l *loop) take(b *Batch, ps *partState, recs []*record.Record, n int, until int64, samples int) []*record.Record {
	taken := ps.recs[:n]
	var bytes int64
	for _, m := range taken {
		bytes += m.Bytes()
	}
	b.Ranges = append(b.Ranges, offsets.BatchRange{
		Range:   offsets.Range{Partition: ps.p, From: ps.from, Until: until},
		Records: int64(n), Bytes: bytes, Jump: ps.jump,
	})
	b.Records += int64(n)
	b.Bytes += bytes
	b.addAborted(ps.marks.take(ps.p, ps.from, until))
	for _, m := range taken[:min(n, samples)] {
		b.Samples = append(b.Samples, detach(m))
	}
	recs = append(recs, taken...)
	ps.recs = keepRest(ps.recs, n)
	if len(ps.recs) == 0 {
		delete(l.holding, ps)
	}
	ps.bytes -= bytes
	l.held -= bytes
	ps.from, ps.jump = until, ""
	if ps.restart != nil && len(ps.recs) == 0 {
		// Every record read before the broker reported the position out
		// of range is in a batch now: move on as the reset policy says.
		r := ps.restart
		ps.restart = nil
		ps.from, ps.jump = r.offset, r.code
		l.needsReader(ps) // started on the next tick, after this batch
	}
	if ps.reader != nil {
		ps.reader.release(int64(n), bytes)
	}
	return recs
}

// keepRest returns recs without its first n records. The records taken
// are in a batch now: their pointers are cleared so the held slice does
// not keep them alive. A small slice is reused; a large one is given up
// (a partition that held a batch's worth once need not keep room for
// that many pointers while it reads a few).
func keepRest(recs []*record.Record, n int) []*record.Record {
	rest := len(recs) - n
	if cap(recs) > 4*max(rest, 64) {
		kept := make([]*record.Record, rest, max(rest, 64))
		copy(kept, recs[n:])
		return kept
	}
	copy(recs, recs[n:])
	clear(recs[rest:])
	return recs[:rest]
}

// maybeRedeliver cuts the batch found planned at start once every one of
// its partitions has read up to the range's Until. The ranges are exactly
// the stored ones; records past them stay for the next batch.
func (l *loop) maybeRedeliver(now time.Time) error {
	pend := l.redeliver
	for _, r := range pend.Ranges {
		ps := l.parts[r.Partition]
		if ps == nil {
			continue
		}
		if !l.reached(ps, r.Until, now) {
			return nil
		}
	}
	b := &Batch{Batch: offsets.Batch{ID: pend.ID, Time: now, State: offsets.StatePlanned, Redelivered: true}}
	samples := l.sampling(b)
	var recs []*record.Record
	for _, r := range pend.Ranges {
		ps := l.parts[r.Partition]
		if ps == nil {
			continue
		}
		n := 0
		for n < len(ps.recs) && ps.recs[n].Offset < r.Until {
			n++
		}
		// from is r.From, or where reading went on when retention had
		// passed it (data loss): past r.Until, the next range starts
		// there, marked with jump.
		after, jump := ps.from, ps.jump
		ps.from = r.From
		recs = l.take(b, ps, recs, n, r.Until, samples)
		b.Ranges[len(b.Ranges)-1].Jump = r.Jump
		if after > r.Until && ps.restart == nil {
			ps.from, ps.jump = after, jump
		}
	}
	l.redeliver = nil
	l.lastCut = now
	for _, r := range pend.Ranges {
		if ps := l.parts[r.Partition]; ps != nil && ps.reader != nil {
			ps.reader.setNeed(0, 0) // this run's read-ahead from now on
		}
	}
	for _, r := range pend.Ranges {
		if ps := l.parts[r.Partition]; ps != nil && ps.afterRedeliver {
			ps.afterRedeliver = false
			l.moveTo(ps, ps.afterRedeliverTo, offsets.CodeSeek)
		}
	}
	l.notice(offsets.NewEvent(now, offsets.CodeRedelivered, offsets.Partition{Partition: -1},
		fmt.Sprintf("batch %d was planned but never acked (kbatch stopped); re-delivered with the same ranges", b.ID)))
	return l.process(b, recs)
}

// process hands b to the committer, which writes it ahead as planned and
// then (auto ack) processes it, or (manual ack) reports it planned and
// waits for Ack. A batch processed and not yet acked is acked in the same
// transaction that writes b ahead: one store transaction per batch while
// batches come back to back. The loop keeps reading meanwhile.
func (l *loop) process(b *Batch, recs []*record.Record) error {
	logCut(l.cfg.Log, b, l.held)
	l.nextID = b.ID + 1
	l.cutCount++
	l.busy = b
	j := job{b: b, recs: recs, plan: true, process: !l.cfg.ManualAck}
	if l.processed != nil {
		j.ack, j.ackStart = l.processed, l.processedStart
		l.processed = nil
	}
	l.jobs <- j
	return nil
}

// ackProcessed sends the processed batch's ack on its own, when no batch
// was cut to carry it. The committer must be idle.
func (l *loop) ackProcessed() {
	if l.processed == nil || l.busy != nil {
		return
	}
	b := l.processed
	l.processed = nil
	l.busy = b
	l.jobs <- job{ack: b, ackStart: l.processedStart}
}

// job is work for the committer goroutine: ack a processed batch, write b
// ahead as planned, process b, or several of these in that order.
type job struct {
	ack      *Batch    // a processed batch to ack (with b: in b's plan transaction)
	ackStart time.Time // when ack's write-ahead (or its manual ack) began
	b        *Batch
	recs     []*record.Record
	plan     bool // write b ahead as planned
	process  bool // process b; it is acked later
}

// resultKind says what a jobResult reports.
type resultKind int

const (
	resAcked     resultKind = iota // b is acked
	resPlanned                     // b is written ahead and waits for a manual ack
	resProcessed                   // b is processed and waits to be acked
)

// jobResult is one answer of the committer; a job that acks one batch and
// plans another answers twice, the ack first.
type jobResult struct {
	kind    resultKind
	b       *Batch
	recs    []*record.Record
	err     error
	start   time.Time // resProcessed: when b's write-ahead (or manual ack) began
	ackedAt time.Time
	took    time.Duration // resAcked: from write-ahead to ack
}

// committer runs jobs in order, off the loop, so reading goes on while a
// batch is written ahead, processed (sink, fsync) and acked. It runs each
// job to the end even when the stream is being closed, so a quit never
// leaves a batch half-written.
func (l *loop) committer() {
	defer close(l.results)
	st, name := l.cfg.Store, l.cfg.Name
	for j := range l.jobs {
		start := time.Now()
		if j.ack != nil {
			r := jobResult{kind: resAcked, b: j.ack, ackedAt: start}
			var err error
			switch {
			case st == nil:
			case j.plan:
				err = st.AckAndPlan(name, j.ack.ID, r.ackedAt, j.b.Batch)
			default:
				err = st.Ack(name, j.ack.ID, r.ackedAt)
			}
			if err != nil {
				r.err = fmt.Errorf("acking batch %d: %w", j.ack.ID, err)
				if j.plan {
					r.err = fmt.Errorf("acking batch %d and writing batch %d ahead: %w", j.ack.ID, j.b.ID, err)
				}
			}
			r.took = time.Since(j.ackStart)
			l.results <- r
			if err != nil {
				continue
			}
		} else if j.plan && st != nil {
			if err := st.Plan(name, j.b.Batch); err != nil {
				l.results <- jobResult{kind: resPlanned, b: j.b, err: fmt.Errorf("writing batch %d ahead: %w", j.b.ID, err)}
				continue
			}
		}
		switch {
		case j.b == nil:
		case j.process:
			r := jobResult{kind: resProcessed, b: j.b, start: start}
			if l.cfg.Processor != nil {
				if err := l.cfg.Processor.Process(context.WithoutCancel(l.ctx), j.b, j.recs); err != nil {
					r.err = fmt.Errorf("processing batch %d: %w (it stays planned and is re-delivered on the next start)", j.b.ID, err)
				}
			}
			l.results <- r
		default:
			l.results <- jobResult{kind: resPlanned, b: j.b, recs: j.recs}
		}
	}
}

// onResult takes one answer of the committer: a batch acked, waiting for
// its manual ack, or processed (then acked with the next batch's plan, or
// on its own right after). An error ends the stream; what was planned and
// not acked is re-delivered on the next start.
func (l *loop) onResult(r jobResult) error {
	if l.busy == r.b || r.err != nil || r.kind != resAcked {
		l.busy = nil // the job's last answer
	}
	if r.err != nil {
		l.processed = nil
		return r.err
	}
	switch r.kind {
	case resPlanned:
		l.waiting, l.waitingRecs = r.b, r.recs
		planned := *r.b
		l.emit(&BatchEvent{Batch: &planned})
		return nil
	case resProcessed:
		l.processed, l.processedStart = r.b, r.start
		return nil
	}
	b := r.b
	acked := *b
	acked.State, acked.AckedAt, acked.Duration = offsets.StateAcked, r.ackedAt, r.took
	for _, rg := range b.Ranges {
		if ps := l.parts[rg.Partition]; ps != nil {
			ps.stored = rg.Until
		}
	}
	// The ack stored again the seeks made after b was cut (Store.Seek).
	for p, sk := range l.seeks {
		if b.ID <= sk.through {
			if ps := l.parts[p]; ps != nil {
				ps.stored = sk.offset
			}
		}
		if b.ID >= sk.through {
			delete(l.seeks, p)
		}
	}
	l.batches++
	l.records += b.Records
	l.emit(&BatchEvent{Batch: &acked})
	l.offerGroup()
	return nil
}
