package consumer

import (
	"fmt"
	"slices"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

func (l *loop) onCommand(c command) error {
	switch c.kind {
	case cmdPauseAll, cmdResumeAll:
		l.pausedAll = c.kind == cmdPauseAll
		for _, ps := range l.parts {
			ps.setPaused(l.pausedAll || ps.userPaused)
		}
		return nil
	case cmdPause, cmdResume:
		ps := l.parts[c.p]
		if ps == nil {
			return fmt.Errorf("unknown partition %s", c.p)
		}
		ps.userPaused = c.kind == cmdPause
		ps.setPaused(l.pausedAll || ps.userPaused)
		return nil
	case cmdSeek:
		return l.seek([]SeekTarget{{Partition: c.p, Offset: c.offset}})
	case cmdSeekAll:
		return l.seek(c.targets)
	case cmdAck:
		if l.waiting == nil {
			return fmt.Errorf("no batch is waiting for an ack")
		}
		if c.id != l.waiting.ID {
			return fmt.Errorf("batch %d is not the one waiting (batch %d is)", c.id, l.waiting.ID)
		}
		b, recs := l.waiting, l.waitingRecs
		l.waiting, l.waitingRecs = nil, nil
		l.lastCut = time.Now()
		l.busy = b
		l.jobs <- job{b: b, recs: recs, process: true}
		return nil
	case cmdCut:
		l.cutNow = true
		return nil
	}
	return fmt.Errorf("unknown command %d", c.kind)
}

// seek moves each target's partition to its offset, in order: held
// records are dropped, the reader restarts there, and each move is an
// event and a stored position, all stored in one transaction. A partition
// the batch re-delivered at start still has to read keeps reading it and
// moves right after that batch. The store keeps the seek across the acks
// of the batches cut before it (Store.Seek). An unknown partition moves
// nothing.
func (l *loop) seek(ts []SeekTarget) error {
	for _, t := range ts {
		if l.parts[t.Partition] == nil {
			return fmt.Errorf("unknown partition %s", t.Partition)
		}
	}
	type move struct {
		ps           *partState
		offset       int64
		through      uint64
		redelivering bool
		event        offsets.Event
	}
	moves := make([]move, 0, len(ts))
	movedTo := map[*partState]int64{} // a partition moved twice moves on from the first
	now := time.Now()
	for _, t := range ts {
		ps := l.parts[t.Partition]
		if t.Bounds.HighWatermark > 0 {
			// The bounds the seek was resolved against are fresher than
			// a paused partition's: NEXT never shows above its HWM.
			ps.bounds.LogStart = max(ps.bounds.LogStart, t.Bounds.LogStart)
			ps.bounds.HighWatermark = max(ps.bounds.HighWatermark, t.Bounds.HighWatermark)
		}
		from, movedBefore := movedTo[ps]
		m := move{ps: ps, offset: t.Offset, through: l.nextID - 1} // the last batch cut
		m.redelivering = l.redeliver != nil && hasRange(l.redeliver, ps.p)
		if !movedBefore || m.redelivering {
			from = ps.position() // one re-delivering moves after the batch: not yet
		}
		movedTo[ps] = t.Offset
		msg := fmt.Sprintf("%s: seek from %d to %d", ps.p, from, t.Offset)
		if m.redelivering {
			m.through = max(m.through, l.redeliver.ID)
			msg += fmt.Sprintf(", after batch %d is re-delivered", l.redeliver.ID)
		}
		if t.Note != "" {
			msg += "; " + t.Note
		}
		m.event = offsets.NewEvent(now, offsets.CodeSeek, ps.p, msg)
		m.event.From, m.event.To = from, t.Offset
		moves = append(moves, m)
	}
	if l.cfg.Store != nil {
		l.flushEvents() // the events before the seeks, first
		sm := make([]offsets.SeekMove, len(moves))
		for i, m := range moves {
			sm[i] = offsets.SeekMove{Partition: m.ps.p, Offset: m.offset, Through: m.through, Event: m.event}
		}
		if err := l.cfg.Store.SeekAll(l.cfg.Name, sm); err != nil {
			return err
		}
	}
	for _, m := range moves {
		ps := m.ps
		if l.cfg.Store != nil {
			ps.stored = m.offset
			if l.waiting != nil || l.busy != nil || l.processed != nil || m.redelivering {
				l.seeks[ps.p] = seekMark{offset: m.offset, through: m.through}
			}
		}
		if m.redelivering {
			ps.afterRedeliver, ps.afterRedeliverTo = true, m.offset
		} else {
			l.moveTo(ps, m.offset, offsets.CodeSeek)
		}
		l.emit(&Notice{m.event})
	}
	return nil
}

// moveTo drops ps's held records and starts reading at offset; the next
// range is marked as jumped for code.
func (l *loop) moveTo(ps *partState, offset int64, code string) {
	l.held -= ps.bytes
	ps.bytes = 0
	clear(ps.recs)
	ps.recs = ps.recs[:0]
	ps.restart = nil
	ps.from, ps.jump = offset, code
	ps.source = offsets.SourceExplicit
	l.startReader(ps, offset)
}

func hasRange(b *offsets.Batch, p offsets.Partition) bool {
	for _, r := range b.Ranges {
		if r.Partition == p {
			return true
		}
	}
	return false
}

// seekMark mirrors a seek the store keeps (Store.Seek): the acks of the
// batches up to through store offset again.
type seekMark struct {
	offset  int64
	through uint64
}

// emitProgress sends every partition's status.
func (l *loop) emitProgress(now time.Time) {
	pr := &Progress{Time: now, Paused: l.pausedAll, Waiting: l.waiting != nil, Partitions: make([]PartitionStatus, 0, len(l.states))}
	inFlight := l.inFlight()
	for _, ps := range l.states {
		p := ps.p
		rate, brate := ps.rate.roll()
		pr.Rate += rate
		pr.ByteRate += brate
		b := ps.bounds
		b.HighWatermark = ps.hwm()
		next := ps.position()
		acked, ahead := ackedPosition(ps, inFlight)
		// With nothing held, the offsets read past NEXT hold no record
		// (transaction markers, aborted batches): they are no lag, or a
		// log that ends in a marker would show LAG 1 for good.
		read := next
		if len(ps.recs) == 0 && ps.restart == nil {
			read = max(next, ps.fetched)
		}
		st := PartitionStatus{Acked: acked, Ahead: ahead,
			Partition: p, Source: ps.source, NextOffset: next, Stored: ps.stored, Bounds: b,
			Read: read, Rate: rate,
			Paused: l.pausedAll || ps.userPaused, Errored: ps.errored, Corrupt: ps.corrupt != nil, CorruptAt: corruptAt(ps), Buffered: len(ps.recs), LastRecord: ps.lastRecord,
		}
		st.Lag = StatusLag(st)
		pr.Partitions = append(pr.Partitions, st)
	}
	// Progress is advisory: drop it rather than stall the loop.
	select {
	case l.s.events <- pr:
	default:
	}
}

// flight is a partition's part of the batches cut and not yet acked.
type flight struct {
	from    int64 // the lowest From of its ranges
	records int64 // the records of its ranges, but the re-delivered batch's
}

// inFlight gathers the ranges of the batches cut and not yet acked (and
// of the batch to re-deliver) per partition, once per progress report:
// looking them up per partition would cost partitions × ranges.
func (l *loop) inFlight() map[offsets.Partition]flight {
	var seen []*offsets.Batch
	var m map[offsets.Partition]flight
	for _, b := range []*offsets.Batch{batchOf(l.waiting), batchOf(l.busy), batchOf(l.processed), l.redeliver} {
		if b == nil || slices.Contains(seen, b) {
			continue
		}
		seen = append(seen, b)
		if m == nil {
			m = make(map[offsets.Partition]flight, len(b.Ranges))
		}
		for _, r := range b.Ranges {
			f, ok := m[r.Partition]
			if !ok || r.From < f.from {
				f.from = r.From
			}
			if b != l.redeliver {
				f.records += r.Records
			}
			m[r.Partition] = f
		}
	}
	return m
}

// ackedPosition returns ps's acked next offset and the records read past
// it (PartitionStatus.Acked and Ahead), given the batches in flight.
func ackedPosition(ps *partState, inFlight map[offsets.Partition]flight) (int64, int64) {
	acked, ahead := ps.from, int64(len(ps.recs))
	if f, ok := inFlight[ps.p]; ok {
		acked = min(acked, f.from)
		ahead += f.records
	}
	return acked, ahead
}

func batchOf(b *Batch) *offsets.Batch {
	if b == nil {
		return nil
	}
	return &b.Batch
}
