package consumer

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// brokerFetcher is the fetch loop of one broker.
type brokerFetcher struct {
	f    *fetcher
	id   int32
	wake chan struct{}

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

// eligible drops closed readers and returns the ones to fetch now: not
// paused, below their read-ahead.
func (bf *brokerFetcher) eligible() []*reader {
	bf.mu.Lock()
	defer bf.mu.Unlock()
	var out []*reader
	kept := bf.readers[:0]
	for _, r := range bf.readers {
		if r.isClosed() {
			continue
		}
		kept = append(kept, r)
		if !r.paused.Load() && r.hasRoom() {
			out = append(out, r)
		}
	}
	clear(bf.readers[len(kept):])
	bf.readers = kept
	return out
}

// evict hands every reader of the loop back to the router after the
// broker failed; each is reported once per streak.
func (bf *brokerFetcher) evict(err error) bool {
	bf.mu.Lock()
	rs := bf.readers
	bf.readers = nil
	bf.mu.Unlock()
	for _, r := range rs {
		if !bf.f.failed(r, err, false) {
			return false
		}
	}
	return true
}

func (bf *brokerFetcher) run() {
	f := bf.f
	defer f.wg.Done()
	for {
		select {
		case <-f.stop:
			return
		default:
		}
		in := bf.eligible()
		room := f.budget - f.held.Load() - f.inflight.Load()
		if len(in) == 0 || room <= 0 {
			select {
			case <-f.stop:
				return
			case <-bf.wake:
			}
			continue
		}
		// The answer's size is reserved while the fetch is in flight, so
		// the fetches of several brokers together stay within the budget.
		ask := f.answerSize(room)
		f.inflight.Add(ask)
		b, err := f.client.Broker(bf.id)
		var resp *sarama.FetchResponse
		start := time.Now()
		if err == nil {
			resp, err = b.Fetch(bf.request(in, ask))
		}
		if f.log != nil {
			logFetch(f.log, bf.id, in, ask, resp, err, time.Since(start))
		}
		f.inflight.Add(-ask)
		select {
		case <-f.stop:
			return
		default:
		}
		if f.multi() {
			f.wakeAll() // another broker may have waited for this room
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
	var decoded int64 // what the answer takes in memory, for answerSize
	defer func() { f.observe(ask, decoded) }()
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
			if !f.failed(r, blk.Err, leaderMoved(blk.Err)) {
				return false
			}
			continue
		}
		if blk.HighWaterMarkOffset >= 0 {
			r.hwm.Store(blk.HighWaterMarkOffset)
		}
		d, err := DecodeBlock(blk, r.p, r.pos, NoEnd, f.committed())
		if err != nil {
			bf.remove(r)
			if !f.failed(r, err, false) {
				return false
			}
			continue
		}
		if d.Partial {
			if r.size >= f.maxBytes {
				bf.remove(r)
				if !f.failed(r, fmt.Errorf("a record batch at offset %d is larger than %d bytes: %w", r.pos, f.maxBytes, sarama.ErrMessageTooLarge), false) {
					return false
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
		decoded += d.Bytes + int64(len(d.Msgs))*recordOverhead
		out = append(out, chunk{p: r.p, gen: r.gen, msgs: pointers(d.Msgs), bytes: d.Bytes, next: d.Next, txn: d.Txn})
	}
	return f.send(out...)
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
