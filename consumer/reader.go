package consumer

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// chunk is what the fetcher hands the loop for one partition: the records
// of one fetch answer, or an error. gen tells the loop whether the chunk
// is from the partition's current reader or from one a seek or reset
// replaced.
type chunk struct {
	p    offsets.Partition
	gen  uint64
	msgs []*sarama.ConsumerMessage
	// bytes is the RecordBytes of msgs.
	bytes int64
	// next is the reader's position after this chunk: every record below
	// it is in msgs or was in an earlier chunk. It moves past transaction
	// markers, aborted and compacted batches as past records, so a chunk
	// may carry no records at all.
	next int64
	// txn is the chunk's transaction marks (read_uncommitted only).
	txn []TxnMark
	err error
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
	pos      int64 // next offset to fetch
	size     int32 // partition bytes asked per fetch
	failures int   // consecutive failed fetches
	errored  bool  // an error was reported and nothing read since
	retryAt  time.Time
	served   uint64 // the fetch round that last gave records, for fairness

	home atomic.Pointer[brokerFetcher]
	hwm  atomic.Int64
	// idleSince is the unix-nano time since which fetches of the partition
	// have brought nothing, or 0 while they bring records (or none came
	// back yet).
	idleSince atomic.Int64
	paused    atomic.Bool

	// mu guards the read-ahead counts and closed, so a close and a chunk
	// in flight never leave bytes counted in the fetcher's total.
	mu sync.Mutex
	// held and heldBytes count what the reader forwarded that the loop has
	// not put in a batch yet; the reader is left out of fetches while they
	// are at maxHeld or maxHeldBytes.
	held, heldBytes       int64
	maxHeld, maxHeldBytes int64
	closed                bool
}

// close stops the reader: it is left out of every later fetch, and what
// it holds no longer counts against the fetcher's read-ahead. Chunks
// already on their way may still arrive with its gen. Calling it again is
// harmless.
func (r *reader) close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.f.held.Add(-r.heldBytes)
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

// hasRoom reports whether the reader may be fetched: open and below its
// read-ahead.
func (r *reader) hasRoom() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.closed && r.held < r.maxHeld && r.heldBytes < r.maxHeldBytes
}

// hold counts a chunk about to be forwarded; false when the reader was
// closed meanwhile.
func (r *reader) hold(n, bytes int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.held += n
	r.heldBytes += bytes
	r.f.held.Add(bytes)
	return true
}

// release tells the reader the loop put n records (bytes) of it in a
// batch; called by the loop only.
func (r *reader) release(n, bytes int64) {
	// Every broker loop waits while the fetcher's read-ahead is spent.
	spent := r.f.held.Load()+r.f.inflight.Load() >= r.f.budget
	r.mu.Lock()
	if !r.closed {
		n, bytes = min(n, r.held), min(bytes, r.heldBytes)
		r.held -= n
		r.heldBytes -= bytes
		r.f.held.Add(-bytes)
	}
	r.mu.Unlock()
	if spent {
		r.f.wakeAll()
		return
	}
	r.wake()
}

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
