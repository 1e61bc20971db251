package consumer

import (
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// chunk is a run of messages (or an error, or the end) from one reader.
// gen tells the loop whether the chunk is from the partition's current
// reader or from one replaced by a seek.
type chunk struct {
	p    offsets.Partition
	gen  uint64
	msgs []*sarama.ConsumerMessage
	err  error
	done bool // the reader's partition consumer has closed
}

// maxChunk bounds how many messages one chunk carries: big enough to make
// the fan-in channel cheap per record, small enough to keep latency low.
const maxChunk = 512

// reader forwards one sarama partition consumer into the stream's fan-in
// channel, in chunks. It owns pc until pc's channels close.
type reader struct {
	p   offsets.Partition
	gen uint64
	pc  sarama.PartitionConsumer
	// idleSince is the unix-nano time the reader began waiting with nothing
	// in hand, or 0 while it holds or forwards messages.
	idleSince atomic.Int64
	// errorAt is the unix-nano time of the last error it forwarded.
	errorAt atomic.Int64
	// held and heldBytes count what the reader forwarded that the loop has
	// not put in a batch yet; the reader waits for room (signalled by
	// release) while they are at maxHeld or maxHeldBytes.
	held, heldBytes       atomic.Int64
	maxHeld, maxHeldBytes int64
	room                  chan struct{}

	stop     chan struct{}
	stopped  atomic.Bool
	finished chan struct{} // closed when run has returned
}

func newReader(p offsets.Partition, gen uint64, pc sarama.PartitionConsumer) *reader {
	return &reader{p: p, gen: gen, pc: pc, stop: make(chan struct{}), finished: make(chan struct{}),
		room: make(chan struct{}, 1), maxHeld: 1 << 62, maxHeldBytes: 1 << 62}
}

// close asks run to stop forwarding and shut pc down; it may be called
// more than once.
func (r *reader) close() {
	if r.stopped.CompareAndSwap(false, true) {
		close(r.stop)
	}
}

// run forwards until the partition consumer closes or close is called.
// After close, it keeps draining pc so sarama can shut it down.
func (r *reader) run(out chan<- chunk) {
	defer close(r.finished)
	stop := r.stop
	msgs, errs := r.pc.Messages(), r.pc.Errors()
	send := func(c chunk) bool {
		select {
		case out <- c:
			return true
		case <-stop:
			return false
		}
	}
	for msgs != nil || errs != nil {
		r.idleSince.Store(time.Now().UnixNano())
		select {
		case m, ok := <-msgs:
			r.idleSince.Store(0)
			if !ok {
				msgs = nil
				continue
			}
			batch := make([]*sarama.ConsumerMessage, 1, 64)
			batch[0] = m
		drain:
			for len(batch) < maxChunk {
				select {
				case m, ok := <-msgs:
					if !ok {
						msgs = nil
						break drain
					}
					batch = append(batch, m)
				default:
					break drain
				}
			}
			if !r.waitForRoom(stop) {
				r.drain()
				return
			}
			var bytes int64
			for _, m := range batch {
				bytes += msgBytes(m)
			}
			r.held.Add(int64(len(batch)))
			r.heldBytes.Add(bytes)
			if !send(chunk{p: r.p, gen: r.gen, msgs: batch}) {
				r.drain()
				return
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if !send(chunk{p: r.p, gen: r.gen, err: err}) {
				r.drain()
				return
			}
		case <-stop:
			r.drain()
			return
		}
	}
	r.idleSince.Store(time.Now().UnixNano())
	send(chunk{p: r.p, gen: r.gen, done: true})
}

// shutdown closes the reader and waits until its partition consumer is
// gone, so the partition can be consumed again.
func (r *reader) shutdown() {
	r.close()
	<-r.finished
}

// drain closes pc and empties its channels so its goroutines can end.
func (r *reader) drain() {
	r.pc.AsyncClose()
	msgs, errs := r.pc.Messages(), r.pc.Errors()
	for msgs != nil || errs != nil {
		select {
		case _, ok := <-msgs:
			if !ok {
				msgs = nil
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
		}
	}
}

// idleFor reports how long the reader has been waiting with nothing.
func (r *reader) idleFor(now time.Time) time.Duration {
	s := r.idleSince.Load()
	if s == 0 {
		return 0
	}
	return now.Sub(time.Unix(0, s))
}

// waitForRoom blocks while the loop holds a batch's worth from this reader;
// false means the reader was closed meanwhile.
func (r *reader) waitForRoom(stop <-chan struct{}) bool {
	for r.held.Load() >= r.maxHeld || r.heldBytes.Load() >= r.maxHeldBytes {
		select {
		case <-r.room:
		case <-stop:
			return false
		}
	}
	return true
}

// release tells the reader the loop put n records (bytes) of it in a
// batch; called by the loop only.
func (r *reader) release(n, bytes int64) {
	r.held.Add(-n)
	r.heldBytes.Add(-bytes)
	select {
	case r.room <- struct{}{}:
	default:
	}
}
