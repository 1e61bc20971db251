package consumer

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
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
// paused, below their read-ahead), what all its readers hold that counts
// against the loop's share, what they still need for the batch re-delivered
// at start, and whether one of those to fetch has a backlog. When the
// share is spent, only the readers the re-delivered batch needs are
// fetched, with room for what they need.
func (bf *brokerFetcher) eligible() (out []*reader, room int64, backlog bool) {
	bf.mu.Lock()
	defer bf.mu.Unlock()
	var held, need int64
	var needy []*reader
	kept := bf.readers[:0]
	for _, r := range bf.readers {
		open, free, bytes, needs := r.state()
		if !open {
			continue
		}
		kept = append(kept, r)
		held += bytes
		if !r.paused.Load() && free {
			out = append(out, r)
			backlog = backlog || r.behind()
			if needs > 0 {
				need += needs
				needy = append(needy, r)
			}
		}
	}
	clear(bf.readers[len(kept):])
	bf.readers = kept
	room = bf.f.share(bf) - held
	if room <= 0 && need > 0 {
		return needy, need, true
	}
	return out, room, backlog
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
		in, room, backlog := bf.eligible()
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
		b, err := f.client.Broker(bf.id)
		var resp *sarama.FetchResponse
		start := time.Now()
		if err == nil {
			resp, err = b.Fetch(bf.request(in, ask))
		}
		if f.log != nil {
			logFetch(f.log, bf.id, in, ask, resp, err, time.Since(start))
		}
		select {
		case <-f.stop:
			return
		default:
		}
		if err != nil {
			if b != nil {
				_ = b.Close()
			}
			if !bf.evict(fmt.Errorf("fetch from broker %d: %w", bf.id, err)) {
				return
			}
			continue
		}
		if !bf.handle(resp, in, ask) {
			return
		}
	}
}

// request builds one fetch of every reader in in. sarama keeps a request's
// partitions in a map, so their order (which decides who gets the room of
// a full answer) changes from one request to the next.
func (bf *brokerFetcher) request(in []*reader, maxBytes int64) *sarama.FetchRequest {
	f := bf.f
	req := &sarama.FetchRequest{Version: f.version, MinBytes: f.minBytes, MaxWaitTime: f.maxWait}
	if f.version >= 3 {
		req.MaxBytes = int32(maxBytes)
	}
	if f.version >= 4 {
		req.Isolation = f.isolation
	}
	if f.version >= 7 {
		req.SessionID, req.SessionEpoch = 0, -1 // no fetch session
	}
	for _, r := range in {
		req.AddBlock(r.p.Topic, r.p.Partition, r.pos, r.size, -1)
	}
	return req
}

// handle takes one answer: records and positions to the loop, errors to
// the loop (out of range) or the router (retry). False when stopping.
func (bf *brokerFetcher) handle(resp *sarama.FetchResponse, in []*reader, ask int64) bool {
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
	for _, r := range in {
		blk := resp.GetBlock(r.p.Topic, r.p.Partition)
		if blk == nil {
			continue // left out of a throttled answer: fetched again next round
		}
		switch {
		case errors.Is(blk.Err, sarama.ErrNoError):
		case errors.Is(blk.Err, sarama.ErrOffsetOutOfRange):
			// The loop decides where to go on (data loss, --reset) and
			// opens a new reader; this one is done.
			bf.remove(r)
			r.home.Store(nil)
			out = append(out, chunk{p: r.p, gen: r.gen, next: r.pos, err: sarama.ErrOffsetOutOfRange})
			continue
		default:
			bf.remove(r)
			lost = append(lost, r)
			if c, report := r.fail(blk.Err, leaderMoved(blk.Err)); report {
				out = append(out, c)
			}
			continue
		}
		if blk.HighWaterMarkOffset >= 0 {
			r.hwm.Store(blk.HighWaterMarkOffset)
		}
		asked := int64(r.size)
		d, err := DecodeBlock(blk, r.p, r.pos, NoEnd, f.committed())
		if err != nil {
			bf.remove(r)
			lost = append(lost, r)
			if c, report := r.fail(err, false); report {
				out = append(out, c)
			}
			continue
		}
		if d.Partial {
			if r.size >= f.maxBytes {
				bf.remove(r)
				lost = append(lost, r)
				if c, report := r.fail(fmt.Errorf("a record batch at offset %d is larger than %d bytes: %w", r.pos, f.maxBytes, sarama.ErrMessageTooLarge), false); report {
					out = append(out, c)
				}
				continue
			}
			r.size = int32(min(2*int64(r.size), int64(f.maxBytes)))
			continue
		}
		end := blk.HighWaterMarkOffset
		if f.committed() && blk.LastStableOffset >= 0 {
			end = blk.LastStableOffset // an open transaction is not "more to read"
		}
		if len(d.Msgs) == 0 && d.Next == r.pos && end > r.pos {
			// Nothing came back from below the end of the log: the
			// answer was full, or the partition's next batch is larger
			// than its fetch size (some brokers then return nothing
			// rather than part of it, unless the partition is the first
			// of the answer). Ask for more next time, within reason: the
			// answer's size still bounds the total.
			r.size = int32(min(2*int64(r.size), int64(f.growBytes)))
		}
		// A size grown for a large batch is kept: such batches come
		// again. A partition whose records take at most twice their
		// fetch size in memory gets the larger fast size, until they
		// turn out to compress well.
		switch {
		case len(d.Msgs) > 0 && r.size < f.fastBytes && d.Bytes <= 2*int64(r.size):
			r.size = f.fastBytes
		case r.size == f.fastBytes && r.size > f.partBytes && d.Bytes > 8*int64(r.size):
			r.size = f.partBytes // they compress well after all
		}
		recovered := r.errored
		r.failures, r.errored = 0, false
		if len(d.Msgs) == 0 {
			r.idleSince.CompareAndSwap(0, time.Now().UnixNano())
			if d.Next == r.pos && !recovered {
				continue
			}
		} else {
			r.idleSince.Store(0)
		}
		r.pos = d.Next
		if !r.hold(int64(len(d.Msgs)), d.Bytes) {
			continue // closed meanwhile
		}
		mem := inMemory(int64(len(d.Msgs)), d.Bytes)
		decoded += mem
		if d.Next < blk.HighWaterMarkOffset && (partWire == 0 || mem*partWire > partDecoded*asked) {
			partWire, partDecoded = asked, mem
		}
		out = append(out, chunk{p: r.p, gen: r.gen, msgs: pointers(d.Msgs), bytes: d.Bytes, next: d.Next, txn: d.Txn})
	}
	if !f.send(out...) {
		return false
	}
	for _, r := range lost {
		f.lose(r)
	}
	return true
}

// leaderMoved reports partition errors that mean "ask someone else": the
// router refreshes the metadata and tries the new leader.
func leaderMoved(err error) bool {
	for _, e := range []error{
		sarama.ErrNotLeaderForPartition, sarama.ErrLeaderNotAvailable,
		sarama.ErrUnknownTopicOrPartition, sarama.ErrReplicaNotAvailable,
		sarama.ErrFencedLeaderEpoch, sarama.ErrUnknownLeaderEpoch,
		sarama.ErrNotEnoughReplicas, sarama.ErrKafkaStorageError,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FetchVersion picks the highest Fetch version the protocol version
// allows, as sarama's consumer does. Replay's fetch loop uses it too.
func FetchVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_7_0_0):
		return 12
	case v.IsAtLeast(sarama.V2_3_0_0):
		return 11
	case v.IsAtLeast(sarama.V2_1_0_0):
		return 10
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 8
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 7
	case v.IsAtLeast(sarama.V1_0_0_0):
		return 6
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 5
	case v.IsAtLeast(sarama.V0_10_1_0):
		return 3
	case v.IsAtLeast(sarama.V0_10_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_9_0_0):
		return 1
	}
	return 0
}

// pointers is the stream's view of a block's slab: batches hold records
// by pointer.
func pointers(msgs []sarama.ConsumerMessage) []*sarama.ConsumerMessage {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]*sarama.ConsumerMessage, len(msgs))
	for i := range msgs {
		out[i] = &msgs[i]
	}
	return out
}
