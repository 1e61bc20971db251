package kafka

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// TopicSettings are the settings of a topic that decide which of its
// offsets still hold records: a compacted topic has gaps, retention
// deletes from the log start.
type TopicSettings struct {
	// CleanupPolicy is cleanup.policy: "delete", "compact" or
	// "compact,delete".
	CleanupPolicy string
	// RetentionMs is retention.ms, -1 for no time limit.
	RetentionMs int64
	// RetentionBytes is retention.bytes (per partition), -1 for no limit.
	RetentionBytes int64
}

// Kafka's defaults, for a broker that does not list a setting.
var defaultSettings = TopicSettings{CleanupPolicy: "delete", RetentionMs: 7 * 24 * 3600 * 1000, RetentionBytes: -1}

// ListTopicSettings asks for the settings of topics in one DescribeConfigs
// request to the least loaded broker. A topic the broker answers with an
// error is left out and named in the error, which wraps the first.
func ListTopicSettings(c *Client, topics []string) (map[string]TopicSettings, error) {
	names := []string{"cleanup.policy", "retention.ms", "retention.bytes"}
	answer, err := c.describeTopicConfigs(topics, names)
	out := map[string]TopicSettings{}
	for topic, cfg := range answer {
		s := defaultSettings
		if v, ok := cfg["cleanup.policy"]; ok && v != "" {
			s.CleanupPolicy = v
		}
		for name, to := range map[string]*int64{"retention.ms": &s.RetentionMs, "retention.bytes": &s.RetentionBytes} {
			if v, ok := cfg[name]; ok {
				n, perr := strconv.ParseInt(v, 10, 64)
				if perr != nil {
					return nil, fmt.Errorf("%s of %s: %q is not a number", name, topic, v)
				}
				*to = n
			}
		}
		out[topic] = s
	}
	return out, err
}

// Replicas are p's replica brokers and those of them in sync, from the
// client's metadata.
func (c *Client) Replicas(p offsets.Partition) (replicas, isr []int32, err error) {
	if replicas, err = c.sc.Replicas(p.Topic, p.Partition); err != nil {
		return nil, nil, err
	}
	isr, err = c.sc.InSyncReplicas(p.Topic, p.Partition)
	return replicas, isr, err
}

// describeTopicConfigs is the one DescribeConfigs request: the values of
// names for each of topics (a name the broker did not list is absent).
// Topics answered with an error are left out; the error names them.
func (c *Client) describeTopicConfigs(topics, names []string) (map[string]map[string]string, error) {
	b := c.sc.LeastLoadedBroker()
	if b == nil {
		return nil, sarama.ErrOutOfBrokers
	}
	req := &sarama.DescribeConfigsRequest{}
	for _, t := range topics {
		req.Resources = append(req.Resources, &sarama.ConfigResource{Type: sarama.TopicResource, Name: t, ConfigNames: names})
	}
	if c.sc.Config().Version.IsAtLeast(sarama.V1_1_0_0) {
		req.Version = 1
	}
	resp, err := b.DescribeConfigs(req)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	var errs []error
	for _, res := range resp.Resources {
		if res.ErrorCode != 0 {
			errs = append(errs, fmt.Errorf("settings of %s: %w", res.Name, sarama.KError(res.ErrorCode)))
			continue
		}
		cfg := map[string]string{}
		for _, e := range res.Configs {
			cfg[e.Name] = e.Value
		}
		out[res.Name] = cfg
	}
	return out, errors.Join(errs...)
}
