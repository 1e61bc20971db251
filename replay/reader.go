package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
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
	msgs    []sarama.ConsumerMessage
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
	client     sarama.Client
	version    int16
	isolation  sarama.IsolationLevel
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

func newReader(client sarama.Client, fetchBytes int32, buffer *buffered) *reader {
	conf := client.Config()
	return &reader{
		buffer:     buffer,
		client:     client,
		version:    consumer.FetchVersion(conf.Version),
		isolation:  conf.Consumer.IsolationLevel,
		fetchBytes: fetchBytes,
		compacted:  map[string]bool{},
		attempts:   maxAttempts,
		backoff:    50 * time.Millisecond,
	}
}

func (r *reader) committed() bool { return r.isolation == sarama.ReadCommitted && r.version >= 4 }

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
	for pos < until {
		r.buffer.release(reserved) // a fetch that failed
		reserved = 0
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
		b, err := r.client.Leader(p.Topic, p.Partition)
		if err != nil {
			_ = r.client.RefreshMetadata(p.Topic)
			if err := retry(fmt.Errorf("no leader: %w", err)); err != nil {
				return err
			}
			continue
		}
		resp, err := b.Fetch(r.request(p, pos, ask))
		if err != nil {
			_ = b.Close()
			_ = r.client.RefreshMetadata(p.Topic)
			if err := retry(fmt.Errorf("fetch from broker %s: %w", b.Addr(), err)); err != nil {
				return err
			}
			continue
		}
		blk := resp.GetBlock(p.Topic, p.Partition)
		if blk == nil {
			if resp.ThrottleTime > 0 { // a throttled answer is empty
				if err := sleep(ctx, resp.ThrottleTime); err != nil {
					return err
				}
				continue
			}
			if err := retry(sarama.ErrIncompleteResponse); err != nil {
				return err
			}
			continue
		}
		switch {
		case errors.Is(blk.Err, sarama.ErrNoError):
		case errors.Is(blk.Err, sarama.ErrOffsetOutOfRange):
			// Retention moved the log start past pos while reading.
			start, err := r.client.GetOffset(p.Topic, p.Partition, sarama.OffsetOldest)
			if err == nil && start > pos {
				gone := offsets.Range{Partition: p, From: pos, Until: min(start, until)}
				pos, attempts = gone.Until, 0
				if err := emit(chunk{task: task, next: pos, missing: &gone}); err != nil {
					return err
				}
				continue
			}
			if err := retry(blk.Err); err != nil {
				return err
			}
			continue
		case retriable(blk.Err):
			_ = r.client.RefreshMetadata(p.Topic)
			if err := retry(blk.Err); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("read %s at offset %d: %w", p, pos, blk.Err)
		}

		d, err := consumer.DecodeBlock(blk, p, pos, until, r.committed())
		if err != nil {
			return err
		}
		switch {
		case d.Partial:
			if ask < size {
				expansion = 0 // the batch needs the whole size
				continue
			}
			if size >= maxFetchBytes {
				return fmt.Errorf("read %s at offset %d: a record batch is larger than %d bytes", p, pos, maxFetchBytes)
			}
			size = min(2*size, maxFetchBytes)
			continue
		case d.Batches == 0 && d.Next <= pos:
			// No batch at all. On a compacted topic this proves that
			// nothing visible lies in [pos, end): those offsets were
			// compacted away (kafkactl #67). Elsewhere it is not proof:
			// a broker with tiered storage answers empty when a remote
			// read outlasts its wait, so fetch again.
			end := blk.HighWaterMarkOffset
			if r.committed() && blk.LastStableOffset >= 0 {
				end = blk.LastStableOffset
			}
			if end <= pos {
				// The leader's end is behind the range (a new leader
				// still catching up its high watermark): wait for it.
				if err := retry(fmt.Errorf("the partition ends at %d, before the range's end %d", end, until)); err != nil {
					return err
				}
				continue
			}
			if !r.mayHaveGaps(p.Topic) {
				if err := retry(fmt.Errorf("the broker returned no record batch for offsets %d → %d, below its end, "+
					"on a topic that is not compacted", pos, end)); err != nil {
					return err
				}
				continue
			}
			d.Next = min(end, until)
		}
		if d.Next <= pos {
			if err := retry(fmt.Errorf("the broker's answer did not move past offset %d", pos)); err != nil {
				return err
			}
			continue
		}
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
	c, err := r.describeCompacted(topic)
	if err != nil {
		return true
	}
	r.compacted[topic] = c
	return c
}

func (r *reader) describeCompacted(topic string) (bool, error) {
	b := r.client.LeastLoadedBroker()
	if b == nil {
		return false, sarama.ErrOutOfBrokers
	}
	req := &sarama.DescribeConfigsRequest{Resources: []*sarama.ConfigResource{
		{Type: sarama.TopicResource, Name: topic, ConfigNames: []string{"cleanup.policy"}}}}
	if r.client.Config().Version.IsAtLeast(sarama.V1_1_0_0) {
		req.Version = 1
	}
	resp, err := b.DescribeConfigs(req)
	if err != nil {
		return false, err
	}
	for _, res := range resp.Resources {
		if res.Name != topic {
			continue
		}
		if res.ErrorCode != 0 {
			return false, sarama.KError(res.ErrorCode)
		}
		for _, c := range res.Configs {
			if c.Name == "cleanup.policy" {
				return strings.Contains(c.Value, "compact"), nil
			}
		}
		return false, nil // not listed: the default, delete
	}
	return false, errors.New("no answer for the topic")
}

// request builds a fetch of one partition from pos.
func (r *reader) request(p offsets.Partition, pos int64, size int32) *sarama.FetchRequest {
	req := &sarama.FetchRequest{
		Version:     r.version,
		MinBytes:    1,
		MaxWaitTime: int32(fetchMaxWait / time.Millisecond),
	}
	if r.version >= 3 {
		req.MaxBytes = size
	}
	if r.version >= 4 {
		req.Isolation = r.isolation
	}
	if r.version >= 7 {
		req.SessionID, req.SessionEpoch = 0, -1 // no fetch session
	}
	req.AddBlock(p.Topic, p.Partition, pos, size, -1)
	return req
}

// retriable reports partition errors that a metadata refresh and another
// try can cure (leadership moves, brokers restarting).
func retriable(err error) bool {
	for _, e := range []error{
		sarama.ErrNotLeaderForPartition, sarama.ErrLeaderNotAvailable,
		sarama.ErrUnknownTopicOrPartition, sarama.ErrReplicaNotAvailable,
		sarama.ErrFencedLeaderEpoch, sarama.ErrUnknownLeaderEpoch,
		sarama.ErrOffsetNotAvailable, sarama.ErrKafkaStorageError,
		sarama.ErrRequestTimedOut, sarama.ErrNetworkException,
		sarama.ErrNotEnoughReplicas, sarama.ErrBrokerNotAvailable,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
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
