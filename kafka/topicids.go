package kafka

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicIDs returns the topic id of each of topics (KIP-516, Kafka 2.8 and
// later: a Metadata answer of v10 or later carries it), as 32 hex digits.
// A topic deleted and created again under the same name gets a new id, and
// only the id tells the two apart: their partitions and offsets start
// over. A topic whose id the cluster does not tell (an older broker) is
// left out of the map.
func TopicIDs(c *Client, topics []string) (map[string]string, error) {
	conf := c.sc.Config()
	if !conf.Version.IsAtLeast(sarama.V2_8_0_0) {
		// sarama asks no Metadata version with ids under an older
		// protocol version: the fetch client asks its own.
		return topicIDsOfFetchClient(c, topics)
	}
	// A few tries, each on the least loaded broker (sarama's connection
	// to it, which no fetch waits on), which sarama asks at the
	// broker's highest version up to v11; a broker that fails is
	// closed, so that the next try opens it again or asks another: a
	// stream that starts without the ids reads by names until its
	// metadata refresh learns them.
	var (
		resp *sarama.MetadataResponse
		err  error
	)
	for try := 1; try <= 3; try++ {
		b := c.sc.LeastLoadedBroker()
		if b == nil {
			err = errors.New("no broker known")
			break
		}
		if resp, err = b.GetMetadata(sarama.NewMetadataRequest(conf.Version, topics)); err == nil {
			break
		}
		_ = b.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("topic ids: %w", err)
	}
	out := make(map[string]string, len(topics))
	for _, t := range resp.Topics {
		if t == nil || t.Err != sarama.ErrNoError || t.Uuid == (sarama.Uuid{}) {
			continue
		}
		out[t.Name] = hex.EncodeToString(t.Uuid[:])
	}
	return out, nil
}

// topicIDsOfFetchClient is TopicIDs asked by the fetch client, at the
// highest Metadata version the broker serves, whatever the client's
// protocol version says. It goes over a broker's general connection of
// the fetch client, which closes when idle: a cluster whose answer
// cannot carry ids (before Kafka 2.8) is not asked again, rather than
// reconnected to at each metadata refresh for nothing.
func topicIDsOfFetchClient(c *Client, topics []string) (map[string]string, error) {
	if c.noTopicIDs.Load() {
		return map[string]string{}, nil
	}
	kc, err := c.fetchClient()
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.sc.Config().Net.ReadTimeout)
	defer cancel()
	// A few tries: the fetch client retries nothing itself, and the
	// broker it asks (any one) may be down while the others answer.
	var resp *kmsg.MetadataResponse
	for try := 1; ; try++ {
		resp, err = req.RequestWith(ctx, kc)
		if err == nil || try == 3 || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("topic ids: %w", err)
	}
	if resp.Version < 10 {
		c.noTopicIDs.Store(true)
	}
	out := make(map[string]string, len(topics))
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 || t.TopicID == ([16]byte{}) {
			continue
		}
		out[*t.Topic] = hex.EncodeToString(t.TopicID[:])
	}
	return out, nil
}
