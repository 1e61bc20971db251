package consumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// loop owns a stream's state. Everything below runs on its goroutine.
type loop struct {
	ctx   context.Context
	s     *Stream
	cfg   Config
	parts map[offsets.Partition]*partState
	order []offsets.Partition
	// states is parts in the order of order.
	states []*partState
	// holding holds every partition with records held (and maybe some
	// that had them when the last batch was cut), and needReaders every
	// partition whose reader is to be started again on a tick: cutting and
	// ticking cost what changed, not the partition count.
	holding     map[*partState]struct{}
	needReaders map[*partState]struct{}
	// blocker is the partition that last held a catch-up batch up
	// (catchUpReady).
	blocker *partState
	in      chan []chunk
	fetch   *fetcher

	gen       uint64
	nextID    uint64
	pausedAll bool
	lastCut   time.Time
	cutNow    bool

	// busy is the batch of the job the committer is working on; waiting
	// is the planned batch waiting for a manual ack; processed is a batch
	// processed and not yet acked (it is acked with the next batch's plan,
	// or on its own). busy and waiting are never both set.
	busy           *Batch
	jobs           chan job
	results        chan jobResult
	waiting        *Batch
	waitingRecs    []*record.Record
	processed      *Batch
	processedStart time.Time
	// cutCount counts the batches cut: --batches stops cutting at N, and
	// the stream ends once those N are acked.
	cutCount int
	// redeliver is the pending batch found at start, re-read first.
	redeliver *offsets.Batch
	// seeks mirrors the seeks the store keeps until the batches cut before
	// them are acked, for the stored positions shown.
	seeks map[offsets.Partition]seekMark

	// held is the bytes of the records held for the next batch, over
	// all partitions (the sum of their partState.bytes).
	held int64
	// ids are the topics' ids (KIP-516) the stream reads them under; a
	// new id means the topic was deleted and created again (onRecreated).
	ids map[string]string

	refresh chan refreshResult
	// nudge asks the refresher for a refresh now: a reader's broker has
	// no topic of the id it reads under (kafka.ErrUnknownTopicID).
	nudge chan struct{}
	// looked and probed bring back the broker calls the loop started on
	// goroutines of their own: no call to a broker runs on the loop, which
	// serves the commands (docs/design.md §2.9).
	looked chan lookupResult
	probed chan probeResult
	// events are the notices to write to the store, in one transaction
	// at the end of the loop's turn.
	events  []offsets.Event
	batches int
	records int64
	// group commits the acked positions to a consumer group
	// (--commit-group); nil without. groupBase are the start positions
	// of the partitions no batch moved yet (startGroup).
	group     *groupCommits
	groupBase map[offsets.Partition]int64
}

type refreshResult struct {
	started time.Time // when the refresh asked the cluster
	bounds  map[offsets.Partition]offsets.Bounds
	// ids are the topics' ids as the cluster gave them before the
	// bounds were read; nil when it did not.
	ids map[string]string
	err error
}

// lookupResult is the bounds of a partition whose position the broker
// said is out of range, looked up for the reader of generation gen.
type lookupResult struct {
	p      offsets.Partition
	gen    uint64
	pos    int64
	bounds map[offsets.Partition]offsets.Bounds
	err    error
	// recreated is the topic's new id when it is not the one the stream
	// reads it under: bounds are then those of every partition of the
	// new topic.
	recreated string
	// diverged is set when the log no longer holds what the reader read
	// below read in leader epoch epoch: it differs from at on.
	diverged bool
	at, read int64
	epoch    int32
}

// probeResult is the answer of a kafka.NoRecordsBetween probe started at at.
type probeResult struct {
	p            offsets.Partition
	at           time.Time
	from, target int64
	empty        bool
}

func newLoop(ctx context.Context, s *Stream, starts []offsets.Start, bounds map[offsets.Partition]offsets.Bounds, pending *offsets.Batch, ids map[string]string) (*loop, error) {
	cfg := s.cfg
	if ids == nil {
		ids = map[string]string{}
	}
	l := &loop{
		ctx:         ctx,
		ids:         ids,
		s:           s,
		cfg:         cfg,
		parts:       make(map[offsets.Partition]*partState, len(starts)),
		holding:     map[*partState]struct{}{},
		needReaders: map[*partState]struct{}{},
		in:          make(chan []chunk, 16),
		redeliver:   pending,
		seeks:       map[offsets.Partition]seekMark{},
		refresh:     make(chan refreshResult, 1),
		nudge:       make(chan struct{}, 1),
		looked:      make(chan lookupResult),
		probed:      make(chan probeResult),
		jobs:        make(chan job, 1),
		results:     make(chan jobResult, 1),
		nextID:      1,
		lastCut:     time.Now(),
	}
	stored := map[offsets.Partition]int64{}
	var keptSeeks map[offsets.Partition]int64
	if cfg.Store != nil {
		info, _, err := cfg.Store.Stream(cfg.Name)
		if err != nil {
			return nil, err
		}
		stored = info.Next
		l.nextID = info.LastBatch + 1
		keptSeeks = info.Seeks
	}
	if pending != nil {
		l.nextID = pending.ID
	}
	for _, st := range starts {
		ps := &partState{p: st.Partition, source: st.Source, from: st.NextOffset, jump: st.Jump, bounds: bounds[st.Partition], stored: -1, target: -1}
		if v, ok := stored[st.Partition]; ok {
			ps.stored = v
		}
		if cfg.UntilEnd {
			ps.target = ps.bounds.HighWatermark
		}
		l.parts[st.Partition] = ps
		l.order = append(l.order, st.Partition)
		l.states = append(l.states, ps)
	}
	// Seeks kept from the last run: the store applies them again at the
	// ack of the batch re-delivered now, and its partitions move to them
	// once it is cut. Without a batch to re-deliver they are spent.
	if len(keptSeeks) > 0 {
		if err := cfg.Store.ResetSeeks(cfg.Name, pending); err != nil {
			return nil, err
		}
		for p, off := range keptSeeks {
			if ps := l.parts[p]; ps != nil && pending != nil && hasRange(pending, p) {
				ps.afterRedeliver, ps.afterRedeliverTo = true, off
				l.seeks[p] = seekMark{offset: off, through: pending.ID}
			}
		}
	}
	l.fetch = newFetcher(cfg.Client, l.in, readAheadBytes(cfg.MaxBatchBytes), len(l.order))
	l.fetch.log = cfg.Log
	l.startReaders()
	return l, nil
}

// startReaders starts every partition's reader where it was resolved to
// start. No request is sent per partition: the fetcher finds each
// partition's leader in the client's metadata and fetches them together.
func (l *loop) startReaders() {
	for _, ps := range l.states {
		l.gen++
		ps.gen = l.gen
		ps.fetched = ps.from
		ps.reader = l.newReader(ps.p, ps.gen, ps.from)
	}
}

// shutdown stops every reader and the fetcher, and waits for it.
func (l *loop) shutdown() {
	for _, ps := range l.parts {
		if ps.reader != nil {
			ps.reader.close()
		}
	}
	l.fetch.close()
}

func (l *loop) run() {
	defer close(l.s.done)
	defer close(l.s.events)
	tick := time.NewTicker(tickEvery(l.cfg.Interval))
	defer tick.Stop()
	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	go l.refresher()
	go l.committer()
	l.startGroup()

	err := l.work(tick.C, progress.C)
	// Whatever ended the loop, let the committer finish its job, and ack
	// a batch that was processed.
	for l.busy != nil || l.processed != nil {
		if l.busy == nil {
			l.ackProcessed()
		}
		if rerr := l.onResult(<-l.results); err == nil {
			err = rerr
		}
	}
	close(l.jobs)
	for range l.results {
	}
	l.shutdown()
	l.closeGroup()
	l.flushEvents()
	if err == nil && l.ctx.Err() == nil {
		err = l.corruptError() // --until-end, --batches: a partition stopped short
	}
	end := &Ended{Batches: l.batches, Records: l.records, Err: err}
	switch {
	case err != nil:
		end.Reason = "error"
	case l.ctx.Err() != nil:
		end.Reason = "closed"
	case l.cfg.MaxBatches > 0 && l.batches >= l.cfg.MaxBatches:
		end.Reason = "batches"
	default:
		end.Reason = "until-end"
	}
	l.finalEmit(end)
}

func tickEvery(interval time.Duration) time.Duration {
	if t := interval / 4; t < 100*time.Millisecond {
		return max(t, 10*time.Millisecond)
	}
	return 100 * time.Millisecond
}

// work runs until the stream is done, closed, or fails.
func (l *loop) work(tick, progress <-chan time.Time) error {
	for {
		if l.finished() {
			return nil
		}
		select {
		case <-l.ctx.Done():
			return nil
		case cs := <-l.in:
			// One fetch answer: every partition's records are held
			// before a batch is cut from them.
			for _, c := range cs {
				if err := l.onChunk(c); err != nil {
					return err
				}
			}
		case cmd := <-l.s.cmds:
			cmd.reply <- l.onCommand(cmd)
		case now := <-tick:
			if err := l.onTick(now); err != nil {
				return err
			}
		case now := <-progress:
			l.emitProgress(now)
		case r := <-l.refresh:
			if err := l.onRefresh(r); err != nil {
				return err
			}
		case r := <-l.results:
			if err := l.onResult(r); err != nil {
				return err
			}
		case r := <-l.looked:
			if err := l.onLookup(r); err != nil {
				return err
			}
		case r := <-l.probed:
			l.onProbe(r)
		case r := <-l.groupResults():
			l.onGroupResult(r)
		}
		if err := l.maybeCut(time.Now()); err != nil {
			return err
		}
		// A processed batch no new batch took along is acked on its own.
		l.ackProcessed()
		l.flushEvents()
	}
}

// finished reports whether a stop condition holds and nothing is left to
// cut.
func (l *loop) finished() bool {
	if l.waiting != nil || l.busy != nil || l.processed != nil || l.redeliver != nil {
		return false
	}
	if l.cfg.MaxBatches > 0 && l.batches >= l.cfg.MaxBatches {
		return true
	}
	if !l.cfg.UntilEnd {
		return false
	}
	now := time.Now()
	for _, ps := range l.parts {
		if len(ps.recs) > 0 {
			return false
		}
		if ps.corrupt != nil {
			continue // cannot get further: the end reports it (corruptError)
		}
		if ps.target >= 0 && !l.reached(ps, ps.target, now) {
			return false
		}
	}
	return true
}

// corruptError is the stream's error when it ends by itself (--until-end,
// --batches) with a partition stopped at a corrupt batch: the first such
// partition's, in partition order, and how many others there are.
func (l *loop) corruptError() error {
	var first *partState
	n := 0
	for _, ps := range l.states {
		if ps.corrupt == nil {
			continue
		}
		if n++; first == nil {
			first = ps
		}
	}
	if first == nil {
		return nil
	}
	return &CorruptError{Partition: first.p, Batch: first.corrupt, Others: n - 1}
}

func (l *loop) onChunk(c chunk) error {
	ps := l.parts[c.p]
	if ps == nil || c.gen != ps.gen {
		return nil // from a reader a seek or reset replaced
	}
	if c.err != nil {
		return l.onReadError(ps, c)
	}
	ps.fetched = max(ps.fetched, c.next)
	ps.marks.add(c.gen, c.txn)
	if ps.errored {
		ps.errored = false
		at := c.next
		if len(c.msgs) > 0 {
			at = c.msgs[0].Offset
		}
		l.notice(offsets.NewEvent(time.Now(), offsets.CodeReconnected, ps.p, fmt.Sprintf("%s: reading again at offset %d", ps.p, at)))
	}
	if len(c.msgs) == 0 {
		return nil
	}
	if l.cfg.Tap != nil {
		l.cfg.Tap.Read(c.msgs)
	}
	b := c.bytes
	if len(ps.recs) == 0 {
		l.holding[ps] = struct{}{}
	}
	ps.recs = append(ps.recs, c.msgs...)
	ps.bytes += b
	l.held += b
	ps.rate.add(int64(len(c.msgs)), b)
	ps.lastRecord = c.msgs[len(c.msgs)-1].Timestamp
	return nil
}

func (l *loop) canCut() bool {
	return !l.pausedAll && l.waiting == nil && l.busy == nil && (l.cfg.MaxBatches == 0 || l.cutCount < l.cfg.MaxBatches)
}

func (l *loop) onReadError(ps *partState, c chunk) error {
	err := c.err
	if errors.Is(err, kafka.ErrOffsetOutOfRange) || errors.Is(err, kafka.ErrDiverged) {
		return l.onOutOfRange(ps, c)
	}
	if bad, ok := kafka.IsCorrupt(err); ok {
		l.onCorrupt(ps, bad)
		return nil
	}
	if errors.Is(err, kafka.ErrUnknownTopicID) {
		// The topic was deleted, maybe created again: the refresh tells
		// (onRefresh), without waiting for its tick, and reports the
		// error only if the topic was not created again.
		ps.unknownID, ps.unknownAt = err, time.Now()
		select {
		case l.nudge <- struct{}{}:
		default:
		}
		return nil
	}
	l.reportReadError(ps, err)
	return nil
}

// onCorrupt takes a partition's reader stopping at a record batch that
// cannot be delivered: another fetch would bring the same bytes, so it
// is not retried. The partition is in the corrupt state (Progress) and
// reads nothing more until a seek starts a reader elsewhere (moveTo);
// its records before the batch are cut as usual, and the other
// partitions go on.
func (l *loop) onCorrupt(ps *partState, bad *kafka.CorruptBatchError) {
	ps.corrupt, ps.errored = bad, false
	e := offsets.NewEvent(time.Now(), offsets.CodeCorrupt, ps.p, fmt.Sprintf("%s: %v; the partition stops before it: seek past it to read on", ps.p, bad))
	e.Expected = bad.Offset
	l.notice(e)
}

// reportReadError reports a partition's failed reads, once for each kind
// of error in a streak of them.
func (l *loop) reportReadError(ps *partState, err error) {
	if kind := errorKind(err); !ps.errored || ps.errKind != kind {
		ps.errored, ps.errKind = true, kind
		l.notice(offsets.NewEvent(time.Now(), offsets.CodeBrokerError, ps.p, fmt.Sprintf("%s: %v (retrying)", ps.p, err)))
	}
}

// onOutOfRange handles the broker saying the position is no longer in the
// log (retention, truncation): the partition's bounds are looked up off
// the loop, and onLookup goes on. Below the log start (retention deleted
// it) is data loss: reading goes on at the log start, whatever --reset
// says (docs/design.md §2.5). Above the high watermark (truncation, a recreated
// topic) is offset-out-of-range and goes on per --reset. Either is an
// event and marks the next range as a jump; with --fail-on-data-loss the
// stream ends instead, after the event.
//
// A reader that knows the leader epoch of what it read last (c.epoch)
// first has the log compared with it (kafka.Diverged): an unclean leader
// election may have truncated the log below the reader's position c.next
// (the broker says out of range, or the check of a new leader's log found
// another epoch, kafka.ErrDiverged). That is data loss too (onDiverged).
func (l *loop) onOutOfRange(ps *partState, c chunk) error {
	pos := ps.position()
	if ps.reader != nil {
		ps.reader.shutdown()
		ps.reader = nil
	}
	l.gen++
	ps.gen = l.gen
	epoch := c.epoch
	if c.next <= 0 {
		epoch = -1
	}
	go l.lookup(ps.p, ps.gen, pos, c.next, epoch, l.ids[ps.p.Topic])
	return nil
}

// lookup reads p's bounds for onLookup, on its own goroutine, and where its
// log diverged from what the reader read up to read in leader epoch epoch
// (unless epoch is -1). A topic deleted and created again answers the old
// position out of range too, and the new log's end would pass for a
// truncation: when the log is shorter than pos or diverged, it asks the
// topic's id, and one that is not id, the one the stream knows, is a
// recreated topic. (Below the log start, retention, it cannot be: a new
// topic starts at 0.)
func (l *loop) lookup(p offsets.Partition, gen uint64, pos, read int64, epoch int32, id string) {
	r := lookupResult{p: p, gen: gen, pos: pos}
	if epoch >= 0 {
		d, err := kafka.Diverged(l.ctx, l.cfg.Client, p, epoch, read)
		r.err = err
		r.bounds = map[offsets.Partition]offsets.Bounds{p: d.Bounds}
		if d.Diverged {
			r.diverged, r.at, r.read, r.epoch = true, d.At, read, epoch
		}
	} else {
		r.bounds, r.err = kafka.ListBoundsContext(l.ctx, l.cfg.Client, []offsets.Partition{p})
	}
	if r.err == nil && id != "" && (r.diverged || pos > r.bounds[p].HighWatermark) {
		if now := l.topicID(p.Topic); now != "" && now != id {
			r.recreated, r.diverged = now, false
			r.bounds, r.err = l.topicBounds(p.Topic)
		}
	}
	select {
	case l.looked <- r:
	case <-l.ctx.Done():
	case <-l.s.done:
	}
}

// onLookup takes the bounds of a partition that was out of range: a
// data-loss or offset-out-of-range event, then the --reset policy, or the
// end with --fail-on-data-loss.
func (l *loop) onLookup(r lookupResult) error {
	ps := l.parts[r.p]
	if ps == nil || ps.gen != r.gen || ps.reader != nil {
		return nil // a seek or reset moved the partition meanwhile
	}
	pos := r.pos
	if r.err != nil {
		l.notice(offsets.NewEvent(time.Now(), offsets.CodeBrokerError, ps.p, fmt.Sprintf("%s: offset %d out of range, and reading the bounds failed: %v (retrying)", ps.p, pos, r.err)))
		l.needsReader(ps)
		return nil
	}
	if r.recreated != "" {
		return l.onRecreated(ps.p.Topic, r.recreated, r.bounds)
	}
	b := r.bounds[ps.p]
	ps.bounds = b
	if r.diverged {
		return l.onDiverged(ps, r)
	}
	if pos >= b.LogStart && pos <= b.HighWatermark {
		// The log holds the position after all (a leader that was
		// behind, a check of the epochs that found the log agrees):
		// read on where the stream was, at once. A broker that says
		// out of range again at the same position contradicts itself:
		// read on at once, it would be asked a fetch and two lookups at
		// the network's pace, for ever; it is a broker error instead
		// (reported once a streak), asked again after a wait that grows.
		if ps.contradictedAt != pos {
			ps.contradicted, ps.contradictedAt = 0, pos
		}
		ps.contradicted++
		if ps.contradicted == 1 {
			l.startReader(ps, pos)
			return nil
		}
		l.reportReadError(ps, fmt.Errorf("the broker answered offset %d out of range again, yet its log holds %d to %d as its ListOffsets says: %w",
			pos, b.LogStart, b.HighWatermark, kafka.ErrOffsetOutOfRange))
		ps.readerAt = time.Now().Add(min(100*time.Millisecond<<min(ps.contradicted-2, 6), 5*time.Second))
		l.needsReader(ps)
		return nil
	}
	e := offsets.NewEvent(time.Now(), offsets.CodeOutOfRange, ps.p, "")
	e.Expected, e.LogStart, e.HighWatermark, e.From = pos, b.LogStart, b.HighWatermark, pos
	if pos < b.LogStart {
		e.Code, e.To, e.Lost = offsets.CodeDataLoss, b.LogStart, b.LogStart-pos
		e.Message = fmt.Sprintf("%s: offset %d was deleted (below the log start %d): %d offsets lost before they were read; reading on at %d", ps.p, pos, b.LogStart, e.Lost, e.To)
	} else {
		e.To, _ = resetTo(l.cfg.Reset, b)
		e.Message = fmt.Sprintf("%s: offset %d is above the high watermark %d; the partition holds %d to %d; continuing at %d (--reset %s)", ps.p, pos, b.HighWatermark, b.LogStart, b.HighWatermark, e.To, l.cfg.Reset)
	}
	if l.cfg.FailOnDataLoss {
		e = stopping(e)
		l.notice(e)
		return &DataLossError{Event: e}
	}
	l.notice(e)
	if r, ok := l.redelivering(ps.p); ok && pos < r.Until && e.Code == offsets.CodeDataLoss {
		// The batch re-delivered at start is re-read: what retention
		// left of its range goes into it, as planned. Reading goes on
		// at the log start now; past the range's end, that is where the
		// next range starts, marked (maybeRedeliver).
		ps.from, ps.jump = e.To, e.Code
		l.startReader(ps, e.To)
		return nil
	}
	l.readOnAt(ps, e.To, e.Code)
	return nil
}

// readOnAt goes on reading ps at offset, its next range marked code: at
// once when ps holds no records, else once the records it holds are cut
// into a batch (a range never spans the jump).
func (l *loop) readOnAt(ps *partState, offset int64, code string) {
	if len(ps.recs) > 0 {
		ps.restart = &restart{offset: offset, code: code}
		l.cutNow = true
		return
	}
	ps.from, ps.jump = offset, code
	l.startReader(ps, offset)
}

// onDiverged takes a log that no longer holds what the stream read of it
// (an unclean leader election truncated it and the new leader wrote other
// records at those offsets): the records read at [r.at, r.read) are gone
// from the cluster. That is data loss (docs/design.md §2.5): an event that names
// the range, then reading goes on at r.at, the first offset of the log as
// it is now that the stream has not read, so no record of the new history
// is skipped. Records of the lost range held for the next batch are
// dropped (they were never delivered and no longer exist); records already
// in batches stay as delivered, and the next range starts at r.at, marked
// as a jump back. With --fail-on-data-loss the stream ends after the event.
func (l *loop) onDiverged(ps *partState, r lookupResult) error {
	b := r.bounds[ps.p]
	e := offsets.NewEvent(time.Now(), offsets.CodeDataLoss, ps.p, "")
	e.Expected, e.From, e.To, e.Lost = r.read, r.read, r.at, r.read-r.at
	e.LogStart, e.HighWatermark = b.LogStart, b.HighWatermark
	e.Message = fmt.Sprintf("%s: the log was truncated at offset %d (an unclean leader election: leader epoch %d ends there now); the %d offsets read at %d to %d are no longer in it; reading on at %d",
		ps.p, r.at, r.epoch, e.Lost, r.at, r.read-1, r.at)
	if l.cfg.FailOnDataLoss {
		e = stopping(e)
		l.notice(e)
		return &DataLossError{Event: e}
	}
	l.notice(e)
	keep := len(ps.recs)
	for keep > 0 && ps.recs[keep-1].Offset >= r.at {
		keep--
	}
	if keep < len(ps.recs) {
		var dropped int64
		for _, m := range ps.recs[keep:] {
			dropped += m.Bytes()
		}
		clear(ps.recs[keep:])
		ps.recs = ps.recs[:keep]
		ps.bytes -= dropped
		l.held -= dropped
	}
	l.readOnAt(ps, r.at, e.Code)
	return nil
}

// redelivering returns p's range in the batch re-delivered at start while
// it is still to be cut.
func (l *loop) redelivering(p offsets.Partition) (offsets.BatchRange, bool) {
	if l.redeliver == nil {
		return offsets.BatchRange{}, false
	}
	for _, r := range l.redeliver.Ranges {
		if r.Partition == p {
			return r, true
		}
	}
	return offsets.BatchRange{}, false
}

func resetTo(r offsets.Reset, b offsets.Bounds) (int64, offsets.Source) {
	if r == offsets.ResetEarliest {
		return b.LogStart, offsets.SourceResetEarly
	}
	return b.HighWatermark, offsets.SourceResetLatest
}

// startReader replaces ps's reader with one starting at offset. Starting
// cannot fail: the fetcher finds the partition's leader itself, and
// trouble (out of range, broker errors) comes back as chunks.
func (l *loop) startReader(ps *partState, offset int64) {
	if ps.reader != nil {
		ps.reader.shutdown()
		ps.reader = nil
	}
	l.gen++
	ps.gen = l.gen
	ps.needReader = false
	ps.corrupt = nil // a reader elsewhere (a seek): it finds a bad batch again if it meets one
	ps.fetched = offset
	ps.reader = l.newReader(ps.p, ps.gen, offset)
	if ps.userPaused || l.pausedAll {
		ps.reader.pause()
	}
}

func (l *loop) onTick(now time.Time) error {
	if len(l.needReaders) == 0 {
		return nil
	}
	for _, ps := range l.sorted(l.needReaders) {
		switch {
		case !ps.needReader:
			delete(l.needReaders, ps)
		case now.Before(ps.readerAt):
			// not yet (onLookup)
		case ps.restart == nil:
			delete(l.needReaders, ps)
			l.startReader(ps, ps.position())
		}
	}
	return nil
}

// needsReader marks ps's reader to be started again on the next tick.
func (l *loop) needsReader(ps *partState) {
	ps.needReader = true
	l.needReaders[ps] = struct{}{}
}

// sorted returns the partitions of set in partition order.
func (l *loop) sorted(set map[*partState]struct{}) []*partState {
	out := make([]*partState, 0, len(set))
	for ps := range set {
		out = append(out, ps)
	}
	slices.SortFunc(out, func(a, b *partState) int { return offsets.ComparePartitions(a.p, b.p) })
	return out
}

// onRefresh takes fresh bounds: log starts for the panes, and partitions
// added to a topic, which start at earliest.
func (l *loop) onRefresh(r refreshResult) error {
	if r.err != nil {
		return nil // the readers report broker trouble themselves
	}
	for _, t := range l.cfg.Topics {
		was, now := l.ids[t], r.ids[t]
		switch {
		case was != "" && now != "" && now != was:
			if err := l.onRecreated(t, now, r.bounds); err != nil {
				return err
			}
		case was == "" && now != "":
			if err := l.adoptID(t, now); err != nil {
				return err
			}
		}
	}
	for _, ps := range l.states {
		// Not created again, as a refresh started after the error
		// tells (one started before it may not know yet): an error to
		// report.
		if err := ps.unknownID; err != nil && r.started.After(ps.unknownAt) {
			ps.unknownID = nil
			l.reportReadError(ps, err)
		}
	}
	var added []offsets.Partition
	for p, b := range r.bounds {
		ps := l.parts[p]
		if ps == nil {
			added = append(added, p)
			continue
		}
		ps.bounds = b
	}
	sort.Slice(added, func(i, j int) bool { return added[i].Less(added[j]) })
	for _, p := range added {
		b := r.bounds[p]
		ps := &partState{p: p, source: offsets.SourceNewPartition, from: b.LogStart, bounds: b, stored: -1, target: -1, jump: offsets.CodeNewPartition}
		l.parts[p] = ps
		l.order = append(l.order, p)
		e := offsets.NewEvent(time.Now(), offsets.CodeNewPartition, p, fmt.Sprintf("%s: new partition, reading from its earliest offset %d", p, b.LogStart))
		e.To, e.LogStart, e.HighWatermark = b.LogStart, b.LogStart, b.HighWatermark
		// Its start is stored with the event, as the starts of the
		// others were: a restart before its first batch is acked goes on
		// from there, not per --reset.
		if l.cfg.Store != nil {
			if err := l.cfg.Store.SetNext(l.cfg.Name, map[offsets.Partition]int64{p: b.LogStart}, e); err != nil {
				return err
			}
			ps.stored = b.LogStart
		}
		l.emit(&Notice{e})
		l.startReader(ps, b.LogStart)
	}
	if len(added) > 0 {
		sort.Slice(l.order, func(i, j int) bool { return l.order[i].Less(l.order[j]) })
		l.states = l.states[:0]
		for _, p := range l.order {
			l.states = append(l.states, l.parts[p])
		}
	}
	return nil
}

// refresher fetches partitions and bounds every MetadataInterval, and when
// nudged, off the loop, and hands the result over.
func (l *loop) refresher() {
	t := time.NewTicker(l.cfg.MetadataInterval)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-l.s.done:
			return
		case <-t.C:
		case <-l.nudge:
		}
		r := refreshResult{started: time.Now()}
		r.ids, _ = topicIDs(l.cfg.Client, l.cfg.Topics) // before the bounds: see planStart
		// Topic by topic when the refresh of all fails: one deleted (its
		// readers report it) does not hide the others' new partitions
		// and ids.
		topics := l.cfg.Topics
		if err := l.cfg.Client.RefreshMetadata(topics...); err != nil {
			topics = nil
			for _, t := range l.cfg.Topics {
				if l.cfg.Client.RefreshMetadata(t) == nil {
					topics = append(topics, t)
				}
			}
			if len(topics) == 0 {
				r.err = err
			}
		}
		if r.err == nil {
			var parts []offsets.Partition
			for _, t := range topics {
				if ps, err := kafka.TopicPartitions(l.cfg.Client, []string{t}); err == nil {
					parts = append(parts, ps...)
				}
			}
			r.bounds, r.err = kafka.ListBoundsContext(l.ctx, l.cfg.Client, parts)
		}
		select {
		case l.refresh <- r:
		case <-l.ctx.Done():
			return
		case <-l.s.done:
			return
		}
	}
}

// notice sends an event and records it in the store at the end of the
// loop's turn (flushEvents), with the others of the turn.
func (l *loop) notice(e offsets.Event) {
	if l.cfg.Store != nil {
		l.events = append(l.events, e)
	}
	l.emit(&Notice{e})
}

// flushEvents writes the turn's notices in one store transaction: a
// broker blip on 1,000 partitions is one write, not 1,000 fsyncs.
func (l *loop) flushEvents() {
	if len(l.events) == 0 {
		return
	}
	_ = l.cfg.Store.AddEvents(l.cfg.Name, l.events)
	clear(l.events)
	l.events = l.events[:0]
}

// emit sends an event, giving up only when the stream is closed and the
// channel has no room (so the acks made while closing still reach a
// reader that keeps reading).
func (l *loop) emit(e Event) {
	select {
	case l.s.events <- e:
		l.sentSamples(e)
		return
	default:
	}
	select {
	case l.s.events <- e:
		l.sentSamples(e)
	case <-l.ctx.Done():
	}
}

// finalEmit sends the last event; after Close it waits only briefly for a
// receiver.
func (l *loop) finalEmit(e Event) {
	if l.ctx.Err() == nil {
		l.s.events <- e
		return
	}
	select {
	case l.s.events <- e:
	case <-time.After(2 * time.Second):
	}
}

// probeIdle is how long a reader must have seen nothing before the loop
// asks the broker whether the rest of a range holds any record.
const probeIdle = 50 * time.Millisecond

// reached reports whether ps has read everything below target: its
// position is there, or its reader is idle, the high watermark is at or
// past target, and the broker confirms that the offsets left below target
// hold no deliverable record (transaction markers, compaction, aborted
// records). Probes are rate-limited to one per IdleDone per partition.
func (l *loop) reached(ps *partState, target int64, now time.Time) bool {
	pos := ps.position()
	if pos >= target {
		return true
	}
	if ps.reader != nil && ps.fetched >= target {
		// The reader fetched past target (records, transaction markers,
		// aborted or compacted batches) and every record below it is held
		// or in a batch: exact, no probe needed.
		return true
	}
	if ps.reader == nil || ps.userPaused || ps.restart != nil || ps.hwm() < target || ps.reader.idleFor(now) < probeIdle {
		return false
	}
	if ps.probeFrom == pos && ps.probeTarget == target && (ps.probeEmpty || now.Sub(ps.probeAt) < l.cfg.IdleDone) {
		return ps.probeEmpty
	}
	if !ps.probing {
		// The answer comes back to onProbe; until then, not reached.
		ps.probing = true
		go l.probe(ps.p, now, pos, target)
	}
	return false
}

// probe asks the broker whether [from, target) of p holds a record, on its
// own goroutine, for onProbe.
func (l *loop) probe(p offsets.Partition, at time.Time, from, target int64) {
	empty, err := kafka.NoRecordsBetween(l.cfg.Client, p, from, target, l.cfg.Client.ReadCommitted())
	select {
	case l.probed <- probeResult{p: p, at: at, from: from, target: target, empty: empty && err == nil}:
	case <-l.ctx.Done():
	case <-l.s.done:
	}
}

// onProbe keeps a probe's answer for reached.
func (l *loop) onProbe(r probeResult) {
	ps := l.parts[r.p]
	if ps == nil {
		return
	}
	ps.probing = false
	ps.probeAt, ps.probeFrom, ps.probeTarget, ps.probeEmpty = r.at, r.from, r.target, r.empty
}

// newReader starts reading p at offset with a bounded read-ahead: the
// fetcher leaves the partition out of its fetches while the records it
// forwarded and the loop has not yet put in a batch reach a batch's worth
// (MaxPerPartition records, or its share of MaxBatchBytes), and a broker
// fetches nothing while its partitions hold its share of readAheadBytes.
// So a paused, slow or unacked stream does not grow.
//
// A partition of the batch re-delivered at start is read up to the
// batch's range whatever this run's flags say: the batch was planned, and
// held in memory, by a run with other flags maybe. Its reader's
// read-ahead makes room for the range's records and bytes until the
// batch is cut, so memory stays within what that run held plus this
// run's read-ahead.
func (l *loop) newReader(p offsets.Partition, gen uint64, offset int64) *reader {
	maxHeld := int64(max(l.cfg.MaxPerPartition, maxChunk))
	maxHeldBytes := max(l.cfg.MaxBatchBytes/int64(max(len(l.order), 1)), 1<<20)
	r := l.fetch.open(p, kafka.ParseTopicID(l.ids[p.Topic]), gen, offset, maxHeld, maxHeldBytes)
	if l.redeliver != nil {
		for _, rg := range l.redeliver.Ranges {
			if rg.Partition == p && offset < rg.Until {
				r.setNeed(rg.Until-offset, rg.Bytes)
			}
		}
	}
	return r
}

// readAheadBytes bounds what the fetcher forwards that no batch holds yet,
// as the records take memory (decompressed, with their messages), plus the
// answers asked for: a batch's worth, and as much again for the fetch
// answers that cross it (they come in whole record batches, often of a
// MiB or more). With less, reading stalls while a batch is processed. It
// is shared out among the brokers with records to read (fetcher.share).
func readAheadBytes(maxBatchBytes int64) int64 { return 2 * maxBatchBytes }
