package demo

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The demo's topics.
const (
	EventsTopic = "events"      // user activity, 2 partitions
	SensorTopic = "sensor-data" // sensor readings, 3 partitions
)

const (
	eventsPartitions = 2
	sensorPartitions = 3

	// retentionBytes caps each partition's log, so a demo left running for
	// hours keeps a bounded heap (kfake holds the log in memory). At the
	// default rate a partition reaches it after roughly half an hour; from
	// then on the log start offset moves, which the UI shows as well.
	retentionBytes = 8 << 20
	// cleanerBackoffMs is how often kfake enforces retention (its default
	// is an hour).
	cleanerBackoffMs = 30_000
)

// Topics returns the demo's topic names, "orders" first.
func Topics() []string { return []string{OrdersTopic, EventsTopic, SensorTopic} }

// createTopics creates the topics with the broker's default replication
// (min(3, brokers)) and the demo's retention.
func createTopics(ctx context.Context, adm *kadm.Client) error {
	configs := map[string]*string{"retention.bytes": new(strconv.Itoa(retentionBytes))}
	for _, t := range []struct {
		name       string
		partitions int32
	}{{EventsTopic, eventsPartitions}, {SensorTopic, sensorPartitions}, {OrdersTopic, ordersPartitions}} {
		resp, err := adm.CreateTopic(ctx, t.partitions, -1, configs, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("demo: create topic %s: %w", t.name, err)
		}
	}
	return nil
}
