package cli

import (
	"context"
	"fmt"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/tui"
)

// topicLister lists the cluster's topics for the TUI's topic picker, the
// way kbatch topics does (internal "__" topics left out).
type topicLister struct{ client *kafka.Client }

// ListTopics refreshes the metadata (so "list again" sees new topics),
// then asks for every partition's bounds; a topic's records are the sum
// of high watermark minus log start.
func (l topicLister) ListTopics(ctx context.Context) ([]tui.TopicInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := l.client.RefreshMetadata(); err != nil {
		return nil, fmt.Errorf("refreshing metadata: %w", err)
	}
	topics, err := selectTopics(l.client, nil, false)
	if err != nil {
		return nil, err
	}
	parts, err := kafka.TopicPartitions(l.client, topics)
	if err != nil {
		return nil, err
	}
	bounds, err := kafka.ListBounds(l.client, parts)
	parts, err = kafka.DropGone(parts, err) // deleted while listed
	if err != nil {
		return nil, err
	}
	var out []tui.TopicInfo
	for _, p := range parts { // sorted by topic, then partition
		if len(out) == 0 || out[len(out)-1].Name != p.Topic {
			out = append(out, tui.TopicInfo{Name: p.Topic})
		}
		t := &out[len(out)-1]
		t.Partitions++
		if b := bounds[p]; b.HighWatermark > b.LogStart {
			t.Records += b.HighWatermark - b.LogStart
		}
	}
	return out, nil
}
