package consumer

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/record"
)

// brokerFetcher is the fetch loop of one broker.
type brokerFetcher struct {
	f    *fetcher
	id   int32
	wake chan struct{}

	// backlog is set while a reader of the loop has records to read (or
	// has not fetched yet): the loop then counts in fetcher.share.
	backlog atomic.Bool
	// starved is set while the loop waits because its share of the
	// read-ahead is spent, so its readers cannot read more for now.
	starved atomic.Bool

	// turn is where the next answer's decoding starts among its
	// partitions (handle): it moves on by one each answer, so the
	// partitions past an answer's budget are first in a later one.
	turn int

	mu      sync.Mutex
	readers []*reader
}

func (bf *brokerFetcher) signal() {
	select {
	case bf.wake <- struct{}{}:
	default:
	}
}

func (bf *brokerFetcher) add(r *reader) {
	bf.mu.Lock()
	bf.readers = append(bf.readers, r)
	bf.mu.Unlock()
	r.home.Store(bf)
	bf.signal()
}

// remove takes r out of the loop's readers.
func (bf *brokerFetcher) remove(r *reader) {
	bf.mu.Lock()
	defer bf.mu.Unlock()
	for i, q := range bf.readers {
		if q == r {
			bf.readers = append(bf.readers[:i], bf.readers[i+1:]...)
			return
		}
	}
}

// eligible drops closed readers and returns the ones to fetch now (not
// paused, below their read-ahead), the room their answer has within the
// loop's share of the read-ahead (what all its readers hold counts against
// it), whether one of those to fetch has a backlog, and whether a reader
// left out has one: it waits for room, which the next cut makes (see
// run). When the share is
// spent, the readers the re-delivered batch at start needs are fetched,
// with room for what they need. Else, when a reader holds more than its
// own read-ahead (a record batch larger than it came in one answer: a huge
// batch that compresses well), the readers that hold nothing and have
// records to read, with room for a small answer (minAnswerBytes): such a
// partition takes many batches to drain, and must not keep the broker's
// other partitions out of all of them (docs/design.md §2.8;
// TestWatchPlansEveryPartitionWhenOneHoldsAHugeBatch). Beyond its share a
// loop so holds at most one small answer, or one record batch, per
// partition with a backlog, and only while a batch that large is held.
// Otherwise the share frees up at the next cut, and every reader waits
// for it as before: fetching past it then would keep the loop from being
// starved, a catch-up from being cut (TestCatchUpWithIdlePartitionsCutsByItself)
// and a wide topic's catch-up to small answers.
func (bf *brokerFetcher) eligible() (out []*reader, room int64, backlog, waiting bool) {
	bf.mu.Lock()
	defer bf.mu.Unlock()
	var held, need int64
	var needy, empty []*reader
	overfull := false
	kept := bf.readers[:0]
	for _, r := range bf.readers {
		open, free, bytes, needs := r.state()
		if !open {
			continue
		}
		kept = append(kept, r)
		held += bytes
		overfull = overfull || bytes > 0 && r.overfull()
		// A full reader waits for room when it has records to read, as
		// far as its last answer said, or when that answer brought
		// records: live, its high watermark is already stale
		// (TestLiveHotPartitionDoesNotWaitForALongPollOfIdleOnes).
		if !r.paused.Load() && !free && (r.behind() || r.idleSince.Load() == 0) {
			waiting = true
		}
		if !r.paused.Load() && free {
			out = append(out, r)
			behind := r.behind()
			backlog = backlog || behind
			if needs > 0 {
				need += needs
				needy = append(needy, r)
			}
			if bytes == 0 && needs == 0 && behind {
				empty = append(empty, r) // idle ones wait for the share, as before
			}
		}
	}
	clear(bf.readers[len(kept):])
	bf.readers = kept
	share := bf.f.share(bf)
	room = share - held
	switch {
	case room > 0:
		return out, room, backlog, waiting
	case need > 0:
		return needy, need, true, waiting
	case len(empty) > 0 && overfull:
		return empty, minAnswerBytes, true, waiting
	}
	return out, room, backlog, waiting
}

// setBacklog records whether the loop has a backlog. A loop that no longer
// has one gives its share back: the other loops look again.
func (bf *brokerFetcher) setBacklog(b bool) {
	if bf.backlog.Swap(b) == b {
		return
	}
	if b {
		bf.f.backlogged.Add(1)
		return
	}
	bf.f.backlogged.Add(-1)
	bf.f.wakeAll()
}

// evict hands every reader of the loop back to the router after the
// broker failed; each is reported once per streak.
func (bf *brokerFetcher) evict(err error) bool {
	bf.mu.Lock()
	rs := bf.readers
	bf.readers = nil
	bf.mu.Unlock()
	return bf.f.failedAll(rs, err, false)
}

func (bf *brokerFetcher) run() {
	f := bf.f
	defer bf.setBacklog(false)
	for {
		select {
		case <-f.stop:
			return
		default:
		}
		// The loop fetches within its share of the read-ahead: what its
		// readers hold plus the answer it asks for. Other brokers' fetches
		// and records never count against it, so a broker that is idle,
		// slow or down holds up no other broker's partitions.
		in, room, backlog, waiting := bf.eligible()
		bf.setBacklog(backlog)
		if len(in) == 0 || room <= 0 {
			bf.starved.Store(len(in) > 0)
			select {
			case <-f.stop:
				return
			case <-bf.wake:
			}
			continue
		}
		bf.starved.Store(false)
		ask := f.answerSize(room)
		// No more than the request can return: its partitions' sizes
		// (a broker exceeds them only for one record batch larger than
		// the size asked). Partitions at their high watermark long-poll
		// for new records with a small answer.
		var sizes int64
		for _, r := range in {
			sizes += int64(r.size)
		}
		ask = min(ask, sizes)
		if !backlog {
			ask = min(ask, minAnswerBytes)
		}
		// A partition left out has records to read and waits for room,
		// which the loop's next cut makes. A fetch the broker may hold
		// (the partitions asked have nothing new, or were never fetched
		// and turn out to have nothing) would keep it from being fetched
		// for the broker's whole wait: a busy partition beside idle ones
		// waited so after every batch of its catch-up
		// (TestBusyPartitionDoesNotWaitForALongPollOfIdleOnes). The
		// broker is asked to answer at once instead; when that answer
		// gives no reason to ask again at once (no partition moved on:
		// at their high watermark, or held at an open transaction,
		// TestPollsWhileAPartitionWaitsForRoomArePaced), the loop then
		// waits as long for a reader to make room.
		poll := waiting
		start := time.Now()
		resp, err := f.client.Fetch(bf.id, bf.request(in, ask, backlog, poll))
		if f.log != nil {
			logFetch(f.log, bf.id, in, ask, resp, err, time.Since(start))
		}
		select {
		case <-f.stop:
			return
		default:
		}
		if err != nil {
			if !bf.evict(fmt.Errorf("fetch from broker %d: %w", bf.id, err)) {
				return
			}
			continue
		}
		ok, again := bf.handle(resp, in, ask, room)
		if !ok {
			return
		}
		// The broker asked for a wait before the next fetch (its quota):
		// waited out here, where only its own partitions wait. One that
		// asks for more than a quota does is a broker-error for its
		// partitions (and the wait is kafka.MaxThrottle): never days of
		// silence.
		if wait, terr := resp.Throttle(); wait > 0 {
			if terr != nil && !bf.evict(fmt.Errorf("fetch from broker %d: %w", bf.id, terr)) {
				return
			}
			if !bf.throttled(wait) {
				return
			}
			continue
		}
		if poll && !again && !bf.pause(f.fetch.MaxWait, in) {
			return
		}
	}
}

// pause waits, after a poll of in, up to d or until a reader that was not
// in it can be fetched (room made, resumed, added, reopened by a seek) or
// none can; false when the fetcher stops. A wake that frees nothing new
// does not end it: a partition holding an answer of many times its
// read-ahead is woken by every cut, and the others would be polled once
// per cut (TestPollsWhileAPartitionDrainsItsReadAheadArePaced).
func (bf *brokerFetcher) pause(d time.Duration, in []*reader) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	var polled map[*reader]bool
	for {
		select {
		case <-bf.f.stop:
			return false
		case <-t.C:
			return true
		case <-bf.wake:
		}
		out, room, _, _ := bf.eligible()
		if len(out) == 0 || room <= 0 {
			// Nothing can be fetched now: the loop would only wait for
			// a wake too. Keep the pace (the share may come back at
			// once: another broker's backlog went), but say so, so
			// that the loop cuts.
			bf.starved.Store(len(out) > 0)
			continue
		}
		bf.starved.Store(false)
		if polled == nil {
			polled = make(map[*reader]bool, len(in))
			for _, r := range in {
				polled[r] = true
			}
		}
		for _, r := range out {
			if !polled[r] {
				return true
			}
		}
	}
}

// throttled waits d, a broker's throttle; false when the fetcher stops.
func (bf *brokerFetcher) throttled(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-bf.f.stop:
		return false
	case <-t.C:
		return true
	}
}

// request builds one fetch of every reader in in (in no fixed order: see
// kafka.NewFetchRequest). Without a backlog (every partition at its high
// watermark) the broker is asked to wait for liveMinBytes, up to the
// client's MaxWait, so live traffic comes in a few answers a second and
// not one per produced batch; with poll, it answers at once.
func (bf *brokerFetcher) request(in []*reader, maxBytes int64, backlog, poll bool) *kafka.FetchRequest {
	o := bf.f.fetch
	switch {
	case poll:
		o.MinBytes, o.MaxWait = 1, 0
	case !backlog:
		o.MinBytes = max(o.MinBytes, liveMinBytes)
	}
	req := kafka.NewFetchRequest(o, int32(maxBytes))
	for _, r := range in {
		pos := r.pos
		if r.verify {
			pos-- // the record before: is it still the one read? (take)
		}
		req.AddChecked(r.p, pos, r.size, r.epoch, r.id())
	}
	return req
}

// handle takes one answer: records and positions to the loop, errors to
// the loop (out of range) or the router (retry). ok is false when
// stopping; again tells whether a fetch at once may bring more: a
// partition moved on and is still below its high watermark, or its fetch
// size grew (a record batch larger than it). A partition that reached its
// high watermark is no reason: live records would be polled as they come
// (TestLiveRecordsBesideAPartitionWaitingForRoomArePaced).
//
// The answer is decoded within room, the memory the loop's share of the
// read-ahead had left when it was asked (eligible): each partition's
// records count against it before the next partition's, and the next
// batch's, are decoded. The first partition decoded takes at least one
// batch, whatever its size (up to the client's MaxRecordBytes), so a
// batch larger than the read-ahead makes progress alone; a partition
// met once room is spent is left as if the answer had left it out, and
// fetched again later. Decoding starts at another partition each answer,
// so none waits for good behind the others.
func (bf *brokerFetcher) handle(resp *kafka.FetchResponse, in []*reader, ask, room int64) (ok, again bool) {
	f := bf.f
	var out []chunk
	var lost []*reader // failed: to the router once their reports are sent
	var decoded int64  // what the answer takes in memory, for answerSize
	// The answer's size on the wire is not known: an answer that was not
	// full says little about how records expand. A partition whose part
	// stopped short of its high watermark filled its size, though: the
	// larger of the two ratios is learnt.
	wire := ask
	var partWire, partDecoded int64
	defer func() {
		if partDecoded*wire > decoded*partWire {
			f.observe(partWire, partDecoded)
			return
		}
		f.observe(wire, decoded)
	}()
	first := bf.turn % max(len(in), 1)
	bf.turn++
	left, started := room, false
	for i := range in {
		r := in[(first+i)%len(in)]
		blk := resp.Partition(r.p)
		if blk == nil {
			continue // left out of a throttled answer: fetched again next round
		}
		if left <= 0 && started {
			continue // no room left in memory: fetched again once there is
		}
		size, from := r.size, r.pos
		asked := int64(size)
		t := bf.take(r, blk, left)
		again = again || r.size > size || t.report != nil && t.report.err == nil && t.report.next > from && r.behind()
		if t.lost {
			lost = append(lost, r)
		}
		if t.report != nil {
			out = append(out, *t.report)
		}
		if t.corrupt != nil {
			out = append(out, *t.corrupt)
		}
		started = started || t.mem > 0
		left -= t.mem
		if t.report == nil || t.report.err != nil {
			continue // no records: nothing learnt of their size in memory
		}
		decoded += t.mem
		if t.report.next < blk.HighWatermark && (partWire == 0 || t.mem*partWire > partDecoded*asked) {
			partWire, partDecoded = asked, t.mem
		}
	}
	if !f.send(out...) {
		return false, false
	}
	for _, r := range lost {
		f.lose(r)
	}
	return true, again
}

// taken is what one partition's part of an answer comes to: a chunk to
// send to the loop (records and the new position, or an error), whether
// the reader lost its broker (to the router), and what its records take
// in memory. corrupt, sent after report, is set when the answer holds a
// record batch that cannot be delivered (kafka.CorruptBatchError): the
// reader ends at it, and report holds the records before it.
type taken struct {
	report  *chunk
	corrupt *chunk
	lost    bool
	mem     int64
}

// take applies one partition's part of an answer to its reader r: an
// error ends the reader here (out of range: the loop decides where to go
// on; others: the router retries), a partial batch grows the fetch size,
// records move the position and are held until the loop cuts them.
func (bf *brokerFetcher) take(r *reader, blk *kafka.PartitionAnswer, budget int64) taken {
	f := bf.f
	switch {
	case r.replica == bf.id && blk.Err != nil:
		// A follower that cannot serve the position (behind: out of
		// range, or not a replica any more) sends the partition back
		// to its leader (KIP-392); the leader's answer decides.
		logReplica(f.log, r.p, -1, r.replica, "back to the leader: "+blk.Err.Error())
		r.replica = -1
		// Not at once: a leader that names the replica again would
		// send it straight back, at the network's pace.
		r.retryAt = time.Now().Add(100 * time.Millisecond)
		bf.remove(r)
		return taken{lost: true}
	case r.replica == bf.id && blk.Err == nil && blk.PreferredReplica >= 0 && blk.PreferredReplica != bf.id:
		// The preferred read replica names another broker in turn:
		// only a leader names one (KIP-392). Followed, two brokers that
		// name each other pass the partition back and forth at the
		// network's pace, reading nothing. Back to the leader, as after
		// the replica's error, but as a failed fetch: reported (once a
		// streak), and fetched again after the back-off of failures.
		err := fmt.Errorf("broker %d, the preferred read replica, names broker %d to read from in turn: only a leader names one", bf.id, blk.PreferredReplica)
		logReplica(f.log, r.p, r.replica, -1, "back to the leader: "+err.Error())
		r.replica = -1
		r.passedOn++
		return bf.failed(r, err, false)
	case blk.Err == nil && blk.PreferredReplica >= 0 && blk.PreferredReplica != bf.id:
		// The leader names a replica to fetch from (the client's rack).
		// One the metadata does not name yet: refresh it and ask
		// again (after the router's back-off), rather than ask the
		// leader again at once.
		if !f.client.KnowsBroker(blk.PreferredReplica) {
			return bf.failed(r, fmt.Errorf("preferred read replica %d: not in the metadata", blk.PreferredReplica), true)
		}
		logReplica(f.log, r.p, bf.id, blk.PreferredReplica, "preferred read replica")
		r.replica = blk.PreferredReplica
		// The leader answered: a failure before (of the replica, say)
		// is over, or the router would send the partition straight
		// back to the leader, which names the replica again, and the
		// partition would never be read (r.errored stays: the next
		// records report the reconnection). When that replica passed
		// the partition on, it is asked after a wait that grows.
		r.failures, r.retryAt = 0, time.Time{}
		if r.passedOn > 0 {
			r.retryAt = time.Now().Add(min(100*time.Millisecond<<min(r.passedOn-1, 5), 2*time.Second))
		}
		bf.remove(r)
		return taken{lost: true}
	case blk.Err == nil:
	case errors.Is(blk.Err, kafka.ErrOffsetOutOfRange):
		// The loop decides where to go on (data loss, truncation,
		// --reset) and opens a new reader; this one is done.
		return bf.done(r, kafka.ErrOffsetOutOfRange)
	default:
		return bf.failed(r, blk.Err, kafka.Retriable(blk.Err))
	}
	if blk.HighWatermark >= 0 {
		r.hwm.Store(blk.HighWatermark)
	}
	if r.verify {
		// The answer starts at pos-1 (request): the log still holds the
		// history read when that record's batch has the epoch it had.
		e, found := blk.EpochAt(r.pos - 1)
		switch {
		case found && e == r.lastEpoch:
			r.verify = false
		case found && e < 0:
			r.verify, r.lastEpoch = false, -1 // no epochs to compare
		case found, blk.HighWatermark >= 0 && blk.HighWatermark < r.pos:
			// Another epoch there, or the log ends below pos: an
			// unclean election truncated it. The loop finds where.
			logDiverged(f.log, r.p, bf.id, r.pos, r.lastEpoch, e, blk.HighWatermark)
			return bf.done(r, kafka.ErrDiverged)
		}
	}
	d, err := blk.DecodeWithin(r.p, r.pos, kafka.NoEnd, f.committed(), budget)
	if _, bad := kafka.IsCorrupt(err); bad {
		// Another fetch brings the same bytes: the reader stops at the
		// bad batch, after the records before it, and the loop decides
		// (a corrupt state until a seek moves the partition past it).
		t := taken{}
		if d.Next > r.pos {
			t = bf.accept(r, blk, d)
		}
		bf.remove(r)
		r.home.Store(nil)
		t.corrupt = &chunk{p: r.p, gen: r.gen, next: r.pos, err: err, epoch: r.lastEpoch}
		return t
	}
	if err != nil {
		return bf.failed(r, err, false)
	}
	if d.Partial {
		if r.size >= f.maxBytes {
			return bf.failed(r, fmt.Errorf("a record batch at offset %d is larger than %d bytes: %w", r.pos, f.maxBytes, kafka.ErrMessageTooLarge), false)
		}
		r.size = int32(min(2*int64(r.size), int64(f.maxBytes)))
		return taken{}
	}
	return bf.accept(r, blk, d)
}

// accept applies the records of d, decoded from r's part of an answer
// (blk), to r: the next fetch size, the position, what r holds.
func (bf *brokerFetcher) accept(r *reader, blk *kafka.PartitionAnswer, d kafka.Block) taken {
	f := bf.f
	end := blk.HighWatermark
	if f.committed() && blk.LastStable >= 0 {
		end = blk.LastStable // an open transaction is not "more to read"
	}
	r.size = f.nextFetchSize(r.size, d, r.pos, end)
	recovered := r.errored
	r.failures, r.errored, r.passedOn = 0, false, 0
	if len(d.Msgs) == 0 {
		r.idleSince.CompareAndSwap(0, time.Now().UnixNano())
		if d.Next == r.pos && !recovered {
			return taken{}
		}
	} else {
		r.idleSince.Store(0)
	}
	if d.Next > r.pos {
		if e, found := blk.EpochAt(d.Next - 1); found {
			r.lastEpoch = e
		}
	}
	r.pos = d.Next
	if !r.hold(int64(len(d.Msgs)), d.Bytes, d.Next) {
		return taken{} // closed meanwhile
	}
	return taken{report: &chunk{p: r.p, gen: r.gen, msgs: pointers(d.Msgs), bytes: d.Bytes, next: d.Next, txn: d.Txn},
		mem: kafka.InMemory(int64(len(d.Msgs)), d.Bytes)}
}

// done ends r after err (out of range, or diverged): the loop decides
// where to go on and opens a new reader.
func (bf *brokerFetcher) done(r *reader, err error) taken {
	bf.remove(r)
	r.home.Store(nil)
	return taken{report: &chunk{p: r.p, gen: r.gen, next: r.pos, err: err, epoch: r.lastEpoch}}
}

// failed takes r off this broker after err; the router retries it. The
// loop hears of it (report) unless it already did, or the error is quiet
// (retriable) and has not persisted.
func (bf *brokerFetcher) failed(r *reader, err error, quiet bool) taken {
	bf.remove(r)
	t := taken{lost: true}
	if c, report := r.fail(err, quiet); report {
		t.report = &c
	}
	return t
}

// nextFetchSize is the decision of a partition's next fetch size after an
// answer d read from pos, with the log's end (high watermark, or last
// stable offset under read_committed) at end. It is pure.
//
// An empty answer from below the end of the log means the answer was
// full, or the partition's next batch is larger than its fetch size (some
// brokers then return nothing rather than part of it, unless the
// partition is the first of the answer): the size doubles, up to
// growBytes (the answer's size still bounds the total). A size grown for
// a large batch is kept: such batches come again. A partition whose
// records take at most twice their fetch size in memory gets the larger
// fast size, until they turn out to compress well.
func (f *fetcher) nextFetchSize(size int32, d kafka.Block, pos, end int64) int32 {
	if len(d.Msgs) == 0 && d.Next == pos && end > pos {
		size = int32(min(2*int64(size), int64(f.growBytes)))
	}
	switch {
	case len(d.Msgs) > 0 && size < f.fastBytes && d.Bytes <= 2*int64(size):
		size = f.fastBytes
	case size == f.fastBytes && size > f.partBytes && d.Bytes > 8*int64(size):
		size = f.partBytes // they compress well after all
	}
	return size
}

// pointers is the stream's view of a block's slab: batches hold records
// by pointer.
func pointers(msgs []record.Record) []*record.Record {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]*record.Record, len(msgs))
	for i := range msgs {
		out[i] = &msgs[i]
	}
	return out
}
