package consumer

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// maybeCut cuts a batch when one is due: the interval passed, a partition
// or the byte budget is full, a data-loss restart waits, the stop
// condition is met, or CutNow was asked. It never cuts while paused or
// while a batch waits for its ack.
func (l *loop) maybeCut(now time.Time) error {
	if !l.canCut() {
		return nil
	}
	if l.redeliver != nil {
		return l.maybeRedeliver(now)
	}
	due := l.cutNow || now.Sub(l.lastCut) >= l.cfg.Interval
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
		if ps.target >= 0 && !l.reached(ps, ps.target, now) {
			return false
		}
	}
	return true
}

// cut takes every record held into a new batch; nil when none is held.
func (l *loop) cut(now time.Time) (*Batch, []*sarama.ConsumerMessage) {
	b := &Batch{Batch: offsets.Batch{ID: l.nextID, Time: now, State: offsets.StatePlanned}}
	var recs []*sarama.ConsumerMessage
	for _, p := range l.order {
		ps := l.parts[p]
		if len(ps.recs) == 0 {
			continue
		}
		n := min(len(ps.recs), l.cfg.MaxPerPartition)
		until := ps.recs[n-1].Offset + 1
		recs = l.take(b, ps, recs, n, until)
		if len(ps.recs) >= l.cfg.MaxPerPartition {
			l.cutNow = true
		}
	}
	if len(b.Ranges) == 0 {
		return nil, nil
	}
	return b, recs
}

// take moves ps's first n records into b as the range [ps.from, until).
func (l *loop) take(b *Batch, ps *partState, recs []*sarama.ConsumerMessage, n int, until int64) []*sarama.ConsumerMessage {
	taken := ps.recs[:n]
	var bytes int64
	for _, m := range taken {
		bytes += msgBytes(m)
	}
	b.Ranges = append(b.Ranges, offsets.BatchRange{
		Range:   offsets.Range{Partition: ps.p, From: ps.from, Until: until},
		Records: int64(n), Bytes: bytes, Jump: ps.jump,
	})
	b.Records += int64(n)
	b.Bytes += bytes
	b.Samples = append(b.Samples, taken[:min(n, l.cfg.Samples)]...)
	recs = append(recs, taken...)
	rest := ps.recs[n:]
	ps.recs = make([]*sarama.ConsumerMessage, len(rest), max(len(rest), 64))
	copy(ps.recs, rest)
	ps.bytes -= bytes
	ps.from, ps.jump = until, ""
	if ps.restart != nil {
		r := ps.restart
		ps.restart = nil
		ps.from, ps.jump = r.offset, r.code
		ps.recs = ps.recs[:0]
		ps.bytes = 0
		ps.needReader = true // started on the next tick, after this batch
	}
	if ps.flowPaused {
		ps.flowPaused = false
		ps.setPaused(ps.userPaused || l.pausedAll)
	}
	return recs
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
	var recs []*sarama.ConsumerMessage
	for _, r := range pend.Ranges {
		ps := l.parts[r.Partition]
		if ps == nil {
			continue
		}
		n := 0
		for n < len(ps.recs) && ps.recs[n].Offset < r.Until {
			n++
		}
		ps.from = r.From
		recs = l.take(b, ps, recs, n, r.Until)
		b.Ranges[len(b.Ranges)-1].Jump = r.Jump
	}
	l.redeliver = nil
	l.lastCut = now
	l.notice(offsets.NewEvent(now, offsets.CodeRedelivered, offsets.Partition{Partition: -1},
		fmt.Sprintf("batch %d was planned but never acked (kbatch stopped); re-delivered with the same ranges", b.ID)))
	return l.process(b, recs)
}

// process writes b ahead as planned, then (auto ack) hands it to the
// processor and acks it, or (manual ack) waits for Ack.
func (l *loop) process(b *Batch, recs []*sarama.ConsumerMessage) error {
	if l.cfg.Store != nil {
		if err := l.cfg.Store.Plan(l.cfg.Name, b.Batch); err != nil {
			return fmt.Errorf("writing batch %d ahead: %w", b.ID, err)
		}
	}
	l.nextID = b.ID + 1
	if l.cfg.ManualAck {
		l.waiting, l.waitingRecs = b, recs
		planned := *b
		l.emit(&BatchEvent{Batch: &planned})
		return nil
	}
	return l.commit(b, recs)
}

// commit processes and acks b. It runs to the end even when the stream is
// being closed, so a quit never leaves a batch half-written.
func (l *loop) commit(b *Batch, recs []*sarama.ConsumerMessage) error {
	start := time.Now()
	if l.cfg.Processor != nil {
		if err := l.cfg.Processor.Process(context.WithoutCancel(l.ctx), b, recs); err != nil {
			return fmt.Errorf("processing batch %d: %w (it stays planned and is re-delivered on the next start)", b.ID, err)
		}
	}
	now := time.Now()
	if l.cfg.Store != nil {
		if err := l.cfg.Store.Ack(l.cfg.Name, b.ID, now); err != nil {
			return fmt.Errorf("acking batch %d: %w", b.ID, err)
		}
	}
	acked := *b
	acked.State, acked.AckedAt, acked.Duration = offsets.StateAcked, now, now.Sub(start)
	for _, r := range b.Ranges {
		if ps := l.parts[r.Partition]; ps != nil {
			ps.stored = r.Until
		}
	}
	if len(l.seekedWhileWaiting) > 0 && l.cfg.Store != nil {
		e := offsets.NewEvent(now, offsets.CodeSeek, offsets.Partition{Partition: -1}, "seek made while the batch waited for its ack kept")
		if err := l.cfg.Store.SetNext(l.cfg.Name, l.seekedWhileWaiting, e); err != nil {
			return err
		}
	}
	for p, off := range l.seekedWhileWaiting {
		l.parts[p].stored = off
		delete(l.seekedWhileWaiting, p)
	}
	l.batches++
	l.records += b.Records
	l.emit(&BatchEvent{Batch: &acked})
	return nil
}
