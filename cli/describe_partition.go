package cli

import (
	"context"
	"fmt"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// describePartition is what kbatch topics says of p beyond its offsets,
// in one line for the screen: "replicas 1,2,3 · isr 1,2 · cleanup.policy
// delete · retention 7d".
func describePartition(client *kafka.Client) func(context.Context, offsets.Partition) (string, error) {
	return func(ctx context.Context, p offsets.Partition) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		replicas, isr, err := client.Replicas(p)
		if err != nil {
			return "", err
		}
		s := fmt.Sprintf("replicas %s · isr %s", brokerList(replicas), brokerList(isr))
		settings, err := kafka.ListTopicSettings(client, []string{p.Topic})
		if t, ok := settings[p.Topic]; ok {
			s += fmt.Sprintf(" · cleanup.policy %s · retention %s", t.CleanupPolicy, retentionText(t.RetentionMs, t.RetentionBytes))
		}
		return s, err
	}
}
