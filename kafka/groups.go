package kafka

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// GroupOffsets reads the offsets consumer group group has committed, for
// every topic it committed to, with OffsetFetch requests to the group's
// coordinator. Values are next offsets (Kafka's commit convention);
// partitions without a commit are left out, so an unknown group gives an
// empty map. The group is only read: kbatch never joins it, never sends a
// heartbeat and never commits, so its members, generation and offsets are
// exactly as before.
//
// OffsetFetch with a null topic list (all topics) needs Kafka 0.10.2 or
// newer, which the default protocol version is. Coordinator moves and loads
// in progress are retried a few times.
func GroupOffsets(c *Client, group string) (map[offsets.Partition]int64, error) {
	if group == "" {
		return nil, &offsets.UsageError{Msg: "empty consumer group name"}
	}
	if !c.sc.Config().Version.IsAtLeast(sarama.V0_10_2_0) {
		return nil, fmt.Errorf("reading the offsets of every topic of group %q needs --kafka-version 0.10.2 or newer", group)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			_ = c.sc.RefreshCoordinator(group)
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
		out, err := fetchGroupOffsets(c, group)
		if err == nil {
			return out, nil
		}
		lastErr = err
		if !retriableGroupError(err) {
			break
		}
	}
	return nil, lastErr
}

func fetchGroupOffsets(c *Client, group string) (map[offsets.Partition]int64, error) {
	coord, err := c.sc.Coordinator(group)
	if err != nil {
		return nil, fmt.Errorf("coordinator of consumer group %q: %w", group, err)
	}
	req := sarama.NewOffsetFetchRequest(c.sc.Config().Version, group, nil)
	resp, err := coord.FetchOffset(req)
	if err != nil {
		_ = coord.Close()
		return nil, fmt.Errorf("offsets of consumer group %q from broker %s: %w", group, coord.Addr(), err)
	}
	kerr := resp.GroupError()
	if errors.Is(kerr, sarama.ErrGroupIDNotFound) {
		// Newer brokers say so where older ones return no offsets.
		return map[offsets.Partition]int64{}, nil
	}
	if !errors.Is(kerr, sarama.ErrNoError) {
		return nil, fmt.Errorf("offsets of consumer group %q: %w", group, kerr)
	}
	blocks := resp.Blocks
	if resp.Version >= 8 {
		blocks = nil
		if g := resp.GetGroup(group); g != nil {
			blocks = g.Blocks
		}
	}
	out := make(map[offsets.Partition]int64)
	for topic, parts := range blocks {
		for partition, blk := range parts {
			p := offsets.Partition{Topic: topic, Partition: partition}
			if blk == nil {
				continue
			}
			if !errors.Is(blk.Err, sarama.ErrNoError) {
				return nil, fmt.Errorf("offset of consumer group %q for %s: %w", group, p, blk.Err)
			}
			if blk.Offset >= 0 {
				out[p] = blk.Offset
			}
		}
	}
	return out, nil
}

func retriableGroupError(err error) bool {
	return errors.Is(err, sarama.ErrNotCoordinatorForConsumer) ||
		errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable) ||
		errors.Is(err, sarama.ErrOffsetsLoadInProgress) ||
		errors.Is(err, sarama.ErrRequestTimedOut) ||
		errors.Is(err, sarama.ErrOutOfBrokers) ||
		errors.Is(err, sarama.ErrNotConnected) ||
		errors.Is(err, io.EOF)
}
