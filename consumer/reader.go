package consumer

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// chunk is what the fetcher hands the loop for one partition: the records
// of one fetch answer, or an error. gen tells the loop whether the chunk
// is from the partition's current reader or from one a seek or reset
// replaced.
type chunk struct {
	p    offsets.Partition
	gen  uint64
	msgs []*record.Record
	// bytes is the record.Record.Bytes of msgs.
	bytes int64
	// next is the reader's position after this chunk: every record below
	// it is in msgs or was in an earlier chunk. It moves past transaction
	// markers, aborted and compacted batches as past records, so a chunk
	// may carry no records at all.
	next int64
	// txn is the chunk's transaction marks (read_uncommitted only).
	txn []kafka.TxnMark
	err error
	// epoch is, with an out-of-range or kafka.ErrDiverged err, the
	// leader epoch of the record before next as the reader read it (-1:
	// not known): the loop looks for where the log diverged.
	epoch int32
}

// maxChunk is the smallest read-ahead, in records, a reader is given.
const maxChunk = 512

// reader is one partition's read position in the fetcher, from one start
// offset until it is closed. The fetcher owns its position; the loop
// reads its high watermark and idle time, pauses it, releases its
// read-ahead and closes it.
type reader struct {
	p   offsets.Partition
	gen uint64
	f   *fetcher

	// Owned by the goroutine that holds the reader (the fetcher's router
	// or one broker's fetch loop; they hand it over under fetcher.mu).
	pos     int64 // next offset to fetch
	size    int32 // partition bytes asked per fetch
	epoch   int32 // the leader epoch of the leader it is fetched from (-1: unknown)
	replica int32 // the preferred read replica to fetch from (KIP-392), -1: the leader
	// lastEpoch is the leader epoch of the record batch that held the
	// offset before pos, as read (-1: not known, nothing read yet or no
	// epochs in the log). verify is set when the partition's leader
	// changed or a fetch failed since: the next fetch then reads from
	// pos-1 to check that the log still holds that batch (KIP-320, see
	// kafka.Diverged).
	lastEpoch int32
	verify    bool
	failures  int  // consecutive failed fetches
	errored   bool // an error was reported and nothing read since
	// reported is the kind (errorKind) of the error last reported in
	// this streak of failures.
	reported string
	retryAt  time.Time
	served   uint64 // the fetch round that last gave records, for fairness
	// passedOn counts the times in a row the preferred read replica
	// named another broker in turn, until records are read: the leader
	// that names it again is followed after a wait that grows with it
	// (brokerFetcher.take).
	passedOn int

	home atomic.Pointer[brokerFetcher]
	hwm  atomic.Int64
	// sent is the offset after the last chunk of records handed on to
	// the loop (0 until one is). A chunk may still be on its way while
	// the reader counts its records as held: onTheirWay.
	sent atomic.Int64
	// idleSince is the unix-nano time since which fetches of the partition
	// have brought nothing, or 0 while they bring records (or none came
	// back yet).
	idleSince atomic.Int64
	paused    atomic.Bool
	// topicID is the id of the topic the stream reads p under (nil or
	// zero: none known); the loop sets one it learns later (adoptID)
	// without starting the reader again, which would forget lastEpoch.
	topicID atomic.Pointer[kafka.TopicID]

	// mu guards the read-ahead counts and closed, so a close and a chunk
	// in flight never leave bytes counted in its broker's share.
	mu sync.Mutex
	// held and heldBytes count what the reader forwarded that the loop has
	// not put in a batch yet, records and what they take in memory
	// (kafka.InMemory); the reader is left out of fetches while they are at
	// maxHeld or maxHeldBytes.
	held, heldBytes       int64
	maxHeld, maxHeldBytes int64
	// needHeld and needBytes are what the batch re-delivered at start
	// needs of the partition (its planned range's offsets and bytes): the
	// reader reads that far whatever its read-ahead, and those bytes do
	// not count against its broker's share (docs/design.md §2.8).
	needHeld, needBytes int64
	closed              bool
}

// close stops the reader: it is left out of every later fetch, and what
// it holds no longer counts against the fetcher's read-ahead. Chunks
// already on their way may still arrive with its gen. Calling it again is
// harmless.
func (r *reader) close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.held, r.heldBytes = 0, 0
	}
	r.mu.Unlock()
	r.wake()
}

// shutdown closes the reader. It does not wait: a new reader of the same
// partition may start at once (its chunks carry a new gen).
func (r *reader) shutdown() { r.close() }

func (r *reader) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// hold counts a chunk of n records of bytes, up to offset next, about to
// be forwarded; false when the reader was closed meanwhile. sent moves
// before held grows, so the loop never sees the reader starved by a
// chunk it does not know is on its way (full reads starved, then sent).
func (r *reader) hold(n, bytes, next int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if n > 0 {
		r.sent.Store(next)
	}
	mem := kafka.InMemory(n, bytes)
	r.held += n
	r.heldBytes += mem
	return true
}

// release tells the reader the loop put n records of bytes of it in a
// batch; called by the loop only. The room goes back to its broker's
// share.
func (r *reader) release(n, bytes int64) {
	mem := kafka.InMemory(n, bytes)
	r.mu.Lock()
	if !r.closed {
		n, mem = min(n, r.held), min(mem, r.heldBytes)
		r.held -= n
		r.heldBytes -= mem
	}
	r.mu.Unlock()
	r.wake()
}

// state reports whether the reader is open, whether it is below its
// read-ahead, the bytes it holds that count against its broker's share,
// and the bytes it still needs for the re-delivered batch.
func (r *reader) state() (open, room bool, held, need int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	room = !r.closed && r.held < max(r.maxHeld, r.needHeld) && r.heldBytes < max(r.maxHeldBytes, r.needBytes)
	return !r.closed, room, max(r.heldBytes-r.needBytes, 0), max(r.needBytes-r.heldBytes, 0)
}

// overfull reports whether the reader holds more than its read-ahead: a
// record batch larger than it came in one answer (a fetch returns at least
// one whole batch), and batches of MaxPerPartition records take many cuts
// to drain it.
func (r *reader) overfull() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held > max(r.maxHeld, r.needHeld) || r.heldBytes > max(r.maxHeldBytes, r.needBytes)
}

// setNeed sets what the re-delivered batch needs of the reader, records
// of bytes (record.Record.Bytes); zeros once the batch is cut.
func (r *reader) setNeed(records, bytes int64) {
	r.mu.Lock()
	r.needHeld, r.needBytes = records, kafka.InMemory(records, bytes)
	r.mu.Unlock()
	r.wake()
}

// behind reports whether the partition has records to read as far as the
// last answer said, or has not been fetched yet. Called by the goroutine
// that holds the reader.
func (r *reader) behind() bool {
	h := r.hwm.Load()
	return h < 0 || r.pos < h
}

// starved reports whether the reader cannot read more for now for lack of
// memory: it holds its read-ahead, or its broker's share is spent.
func (r *reader) starved() bool {
	if _, room, _, _ := r.state(); !room {
		return true
	}
	bf := r.home.Load()
	return bf != nil && bf.starved.Load()
}

// onTheirWay reports whether records the reader handed on have not yet
// reached the loop, which has read up to fetched: chunks wait in the
// loop's channel while a slow loop takes earlier ones.
func (r *reader) onTheirWay(fetched int64) bool { return r.sent.Load() > fetched }

// pause leaves the partition out of fetches until resume; records already
// read still go into batches.
func (r *reader) pause() { r.paused.Store(true) }

func (r *reader) resume() {
	r.paused.Store(false)
	r.wake()
}

// wake tells the broker loop holding the reader that it may fetch again.
func (r *reader) wake() {
	if bf := r.home.Load(); bf != nil {
		bf.signal()
	}
}

// highWatermark is the high watermark of the last fetch answer, or -1.
func (r *reader) highWatermark() int64 { return r.hwm.Load() }

// idleFor reports how long fetches of the partition have brought nothing.
func (r *reader) idleFor(now time.Time) time.Duration {
	s := r.idleSince.Load()
	if s == 0 {
		return 0
	}
	return now.Sub(time.Unix(0, s))
}

// fail counts a failed fetch of r, held by the caller, and returns the
// chunk that reports err when it must be reported: once per streak of
// failures and kind of error (a reset, then timeouts, are two reports: the
// events say what is wrong now), quiet ones (leadership moving) only when
// they persist. The
// caller sends the chunk, then hands r to the router (fetcher.lose),
// which retries after the back-off set here.
func (r *reader) fail(err error, quiet bool) (chunk, bool) {
	r.failures++
	r.retryAt = time.Now().Add(min(50*time.Millisecond<<min(r.failures, 6), 2*time.Second))
	kind := errorKind(err)
	if (r.errored && r.reported == kind) || (quiet && r.failures < 3) || r.isClosed() {
		return chunk{}, false
	}
	r.errored, r.reported = true, kind
	return chunk{p: r.p, gen: r.gen, next: r.pos, err: err}, true
}

// errorKind names the kind of a failed fetch's error, for reporting a
// streak of failures once per kind: a timeout, a reset, a refused or
// closed connection, or else the innermost error's text (a broker's error
// code; never the addresses and ports around it, which change with each
// connection).
func errorKind(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return "closed"
	}
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}

// id is the topic id the reader fetches under; zero when none is known.
func (r *reader) id() kafka.TopicID {
	if id := r.topicID.Load(); id != nil {
		return *id
	}
	return kafka.TopicID{}
}

// setID sets the topic id the reader fetches under from its next fetch.
func (r *reader) setID(id kafka.TopicID) { r.topicID.Store(&id) }
