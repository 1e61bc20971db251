package consumer

import (
	"fmt"
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
		return l.seek(c.p, c.offset)
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

// seek moves ps to offset: held records are dropped, the reader restarts
// there, and the move is an event and a stored position.
func (l *loop) seek(p offsets.Partition, offset int64) error {
	ps := l.parts[p]
	if ps == nil {
		return fmt.Errorf("unknown partition %s", p)
	}
	from := ps.position()
	e := offsets.NewEvent(time.Now(), offsets.CodeSeek, p, fmt.Sprintf("%s: seek from %d to %d", p, from, offset))
	e.From, e.To = from, offset
	l.held -= ps.bytes
	ps.bytes = 0
	ps.recs = ps.recs[:0]
	ps.restart = nil
	ps.from, ps.jump = offset, offsets.CodeSeek
	ps.source = offsets.SourceExplicit
	l.startReader(ps, offset)
	if l.cfg.Store != nil {
		if err := l.cfg.Store.SetNext(l.cfg.Name, map[offsets.Partition]int64{p: offset}, e); err != nil {
			return err
		}
		ps.stored = offset
		if l.waiting != nil || l.busy != nil || l.processed != nil {
			l.seekedWhileWaiting[p] = seekMark{offset: offset, before: l.nextID}
		}
	}
	l.emit(&Notice{e})
	return nil
}

// seekMark is a seek made while batches were in flight: the acks of the
// batches cut before it (ids below before) would move offset back.
type seekMark struct {
	offset int64
	before uint64
}

// emitProgress sends every partition's status.
func (l *loop) emitProgress(now time.Time) {
	pr := &Progress{Time: now, Paused: l.pausedAll, Waiting: l.waiting != nil, Partitions: make([]PartitionStatus, 0, len(l.order))}
	for _, p := range l.order {
		ps := l.parts[p]
		rate, brate := ps.rate.roll()
		pr.Rate += rate
		pr.ByteRate += brate
		b := ps.bounds
		b.HighWatermark = ps.hwm()
		next := ps.position()
		pr.Partitions = append(pr.Partitions, PartitionStatus{
			Partition: p, Source: ps.source, NextOffset: next, Stored: ps.stored, Bounds: b,
			Lag: max(0, b.HighWatermark-next), Rate: rate,
			Paused: l.pausedAll || ps.userPaused, Errored: ps.errored, Buffered: len(ps.recs), LastRecord: ps.lastRecord,
		})
	}
	// Progress is advisory: drop it rather than stall the loop.
	select {
	case l.s.events <- pr:
	default:
	}
}
