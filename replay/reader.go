package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

const (
	// fetchMaxWait bounds how long the broker holds a fetch that finds no
	// data. Ranges are below the end of the log, so only answers over
	// trailing gaps wait, and stopping stays quick.
	fetchMaxWait = 100 * time.Millisecond
	// maxFetchBytes caps how far a fetch grows to take one large batch.
	maxFetchBytes = 256 << 20
	// minFetchBytes is the smallest size asked when records expand much
	// once decoded.
	minFetchBytes = 64 << 10
	// maxAttempts bounds consecutive failed fetches of one partition
	// (about 30s of back-off) before the replay fails.
	maxAttempts = 20
)

// chunk is what a partition reader hands to Run: the records of one fetch
// answer, or news about the position.
type chunk struct {
	task    int
	msgs    []record.Record
	bytes   int64
	mem     int64          // what msgs take in memory, counted in buffered
	next    int64          // the position after this chunk
	missing *offsets.Range // offsets deleted by retention during the read
	done    bool           // last chunk of the task; err says how it ended
	err     error
}

// reader reads partitions with its own fetch requests, one partition per
// request. Reading raw fetch answers instead of through sarama's
// PartitionConsumer is what makes the end exact: every batch's last offset
// is visible, control and aborted batches included, and an answer with no
// batch for a lone partition proves that nothing visible lies between the
// position and the end the answer reports (a broker returns at least one
// batch to the first partition of a fetch when it has any, KIP-74), at
// least on a compacted topic (see mayHaveGaps). With several partitions in
// a request a later partition can come back empty because the response
// filled up, which would prove nothing.
type reader struct {
	client     *kafka.Client
	fetch      kafka.FetchOptions
	fetchBytes int32
	// attempts and backoff bound retries: maxAttempts consecutive
	// failures, the first back-off 2×backoff, doubling up to 2s.
	attempts int
	backoff  time.Duration
	// buffer bounds the decoded records read ahead of the sink.
	buffer *buffered

	mu        sync.Mutex
	compacted map[string]bool // topic → cleanup.policy includes compact
}

func newReader(client *kafka.Client, fetchBytes int32, buffer *buffered) *reader {
	return &reader{
		buffer:     buffer,
		client:     client,
		fetch:      fetchOptions(client),
		fetchBytes: fetchBytes,
		compacted:  map[string]bool{},
		attempts:   maxAttempts,
		backoff:    50 * time.Millisecond,
	}
}

// fetchOptions are the client's, with replay's own long poll: any
// byte, at most fetchMaxWait. Replay reads from leaders only, so it sends
// no rack: a leader that names a preferred read replica answers without
// records.
func fetchOptions(client *kafka.Client) kafka.FetchOptions {
	o := client.FetchOptions()
	o.MinBytes, o.MaxWait, o.Rack = 1, fetchMaxWait, ""
	return o
}

func (r *reader) committed() bool { return r.fetch.Committed() }

// read reads t.Read and hands each answer that moved the position to emit
// (nothing is emitted for an empty Read). It returns nil once the position
// reached t.Read.Until, or the error that stopped it: ctx's, emit's, or a
// fetch failure that outlasted the retries.
func (r *reader) read(ctx context.Context, task int, t Task, emit func(chunk) error) error {
	p := t.Read.Partition
	pos, until := t.Read.From, t.Read.Until
	size := r.fetchBytes
	attempts := 0
	// retry backs off after a failure, or gives up.
	retry := func(err error) error {
		attempts++
		if attempts >= r.attempts {
			return fmt.Errorf("read %s at offset %d: giving up after %d attempts: %w", p, pos, attempts, err)
		}
		return sleep(ctx, min(r.backoff<<min(attempts, 6), 2*time.Second))
	}
	// reserved is counted in r.buffer for the fetch under way; lastMem
	// is what the last answer took in memory, expansion how many times
	// the size asked (hundredths; 0 before an answer told).
	var reserved, lastMem, expansion int64
	defer func() { r.buffer.release(reserved) }()
	var throttle time.Duration // the last answer's: waited before the next fetch
	for pos < until {
		r.buffer.release(reserved) // a fetch that failed
		reserved = 0
		if throttle > 0 {
			if err := sleep(ctx, throttle); err != nil {
				return err
			}
			throttle = 0
		}
		// Records that compress well are asked for in smaller answers,
		// so an answer takes about the size asked in memory (a broker
		// still returns at least one whole record batch).
		ask := size
		if expansion > 100 {
			ask = int32(max(int64(size)*100/expansion, min(int64(size), minFetchBytes)))
		}
		if err := r.buffer.reserve(ctx, max(lastMem, int64(ask))); err != nil {
			return err
		}
		reserved = max(lastMem, int64(ask))
		resp, err := r.client.FetchLeader(p, r.request(p, t.TopicID, pos, ask))
		if err != nil {
			// No leader known, or a fetch that failed ("fetch from
			// broker ADDR: ..."): the leader may have moved.
			_ = r.client.RefreshMetadata(p.Topic)
			if err := retry(err); err != nil {
				return err
			}
			continue
		}
		// A broker that asks for a longer wait than a quota does ends
		// the read: waiting days, silent, is not reading.
		wait, err := resp.Throttle()
		if err != nil {
			return fmt.Errorf("read %s at offset %d: %w", p, pos, err)
		}
		throttle = wait
		blk := resp.Partition(p)
		if blk == nil {
			if wait > 0 { // a throttled answer leaves partitions out
				continue
			}
			if err := retry(kafka.ErrIncompleteResponse); err != nil {
				return err
			}
			continue
		}
		st := r.decide(p, t.TopicID, pos, until, ask, size, reserved, blk)
		switch {
		case st.fail != nil:
			return st.fail
		case st.retry != nil:
			if st.refresh {
				_ = r.client.RefreshMetadata(p.Topic)
			}
			if err := retry(st.retry); err != nil {
				return err
			}
			continue
		case st.gone != nil:
			pos, attempts = st.gone.Until, 0
			if err := emit(chunk{task: task, next: pos, missing: st.gone}); err != nil {
				return err
			}
			continue
		case st.whole:
			expansion = 0 // the batch needs the whole size
			continue
		case st.grow > 0:
			size = st.grow
			continue
		}
		d := st.d
		pos, attempts = d.Next, 0
		mem := d.Memory()
		if mem > 0 {
			lastMem, expansion = mem, max(mem*100/int64(ask), 100)
		}
		r.buffer.settle(reserved, mem)
		reserved = 0
		if err := emit(chunk{task: task, msgs: d.Msgs, bytes: d.Bytes, mem: mem, next: pos}); err != nil {
			return err
		}
	}
	return nil
}

// step is what one answer means for a read at pos: the decision of
// read's loop. Exactly one of its fields is set, or none but d.
type step struct {
	// fail ends the read with its error.
	fail error
	// retry backs off and fetches again; refresh first asks the metadata
	// again (the leader may have moved).
	retry   error
	refresh bool
	// gone is the part of the range that retention deleted while reading:
	// reported as missing, and the read goes on after it.
	gone *offsets.Range
	// whole asks again with the whole fetch size (the answer held only
	// part of a batch, and a smaller size had been asked for).
	whole bool
	// grow is the new fetch size for a batch larger than the last one.
	grow int32
	// d is the answer's records, with d.Next > pos.
	d kafka.Block
}

// decide reads one partition's answer to a fetch of ask bytes (size
// being the current full size) at pos, for a range ending at until,
// decoding it within budget bytes of memory (what the read reserved: the
// batches past it are fetched again). A record batch that cannot be
// delivered (kafka.CorruptBatchError) fails the read, naming the
// partition and the batch's offset, once the records before it are
// handed on.
func (r *reader) decide(p offsets.Partition, id kafka.TopicID, pos, until int64, ask, size int32, budget int64, blk *kafka.PartitionAnswer) step {
	switch {
	case blk.Err == nil:
	case errors.Is(blk.Err, kafka.ErrUnknownTopicID):
		// The broker has no topic of the id planned: one that has none
		// or another one now was deleted, with the range's records.
		// Otherwise a broker behind its controller: again.
		ids, err := kafka.TopicIDs(r.client, []string{p.Topic})
		if now := ids[p.Topic]; err == nil && kafka.ParseTopicID(now) != id {
			how := "deleted"
			if now != "" {
				how = "deleted and created again"
			}
			return step{fail: fmt.Errorf("read %s at offset %d: topic %s was %s while it was replayed: the rest of the range is gone", p, pos, p.Topic, how)}
		}
		return step{retry: blk.Err, refresh: true}
	case errors.Is(blk.Err, kafka.ErrOffsetOutOfRange):
		// Retention moved the log start past pos while reading.
		if start, err := r.client.LogStart(p); err == nil && start > pos {
			return step{gone: &offsets.Range{Partition: p, From: pos, Until: min(start, until)}}
		}
		return step{retry: blk.Err}
	case kafka.Retriable(blk.Err):
		return step{retry: blk.Err, refresh: true}
	default:
		return step{fail: fmt.Errorf("read %s at offset %d: %w", p, pos, blk.Err)}
	}
	d, err := blk.DecodeWithin(p, pos, until, r.committed(), budget)
	if err != nil {
		if d.Next > pos {
			return step{d: d} // the batches before the bad one; the next fetch starts at it
		}
		return step{fail: fmt.Errorf("read %s: %w", p, err)}
	}
	switch {
	case d.Partial:
		if ask < size {
			return step{whole: true}
		}
		if size >= maxFetchBytes {
			return step{fail: fmt.Errorf("read %s at offset %d: a record batch is larger than %d bytes", p, pos, maxFetchBytes)}
		}
		return step{grow: min(2*size, maxFetchBytes)}
	case d.Batches == 0 && d.Next <= pos:
		// No batch at all. On a compacted topic this proves that
		// nothing visible lies in [pos, end): those offsets were
		// compacted away (kafkactl #67). Elsewhere it is not proof: a
		// broker with tiered storage answers empty when a remote read
		// outlasts its wait, so fetch again.
		end := blk.HighWatermark
		if r.committed() && blk.LastStable >= 0 {
			end = blk.LastStable
		}
		if end <= pos {
			// The leader's end is behind the range (a new leader still
			// catching up its high watermark): wait for it.
			return step{retry: fmt.Errorf("the partition ends at %d, before the range's end %d", end, until)}
		}
		if !r.mayHaveGaps(p.Topic) {
			return step{retry: fmt.Errorf("the broker returned no record batch for offsets %d → %d, below its end, "+
				"on a topic that is not compacted", pos, end)}
		}
		d.Next = min(end, until)
	}
	if d.Next <= pos {
		return step{retry: fmt.Errorf("the broker's answer did not move past offset %d", pos)}
	}
	return step{d: d}
}

// mayHaveGaps reports whether offsets below the end of topic's partitions
// can hold no batch at all: when its cleanup.policy includes compact, or
// when that cannot be found out (no DescribeConfigs permission, say), as
// compaction is what leaves such gaps. Tiered storage, whose slow remote
// reads come back empty, cannot be enabled on compacted topics. The answer
// is asked once per topic and kept.
func (r *reader) mayHaveGaps(topic string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.compacted[topic]; ok {
		return c
	}
	c, err := r.client.Compacted(topic)
	if err != nil {
		return true
	}
	r.compacted[topic] = c
	return c
}

// request builds a fetch of one partition from pos, under its topic's id
// as planned (kafka.AddChecked), with its leader epoch as the metadata
// knows it (KIP-320: a fenced or unknown epoch is retried after a
// metadata refresh; -1 when the leader is unknown, which FetchLeader then
// reports).
func (r *reader) request(p offsets.Partition, id kafka.TopicID, pos int64, size int32) *kafka.FetchRequest {
	req := kafka.NewFetchRequest(r.fetch, size)
	epoch := int32(-1)
	if _, e, err := r.client.LeaderEpoch(p); err == nil {
		epoch = e
	}
	req.AddChecked(p, pos, size, epoch, id)
	return req
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
