package replay

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// TopicSink re-produces records into a topic: key, value, headers and
// timestamp as read (an absent key or value stays absent, an empty one
// stays empty), into the same partition number or a fixed one. It uses
// an idempotent producer with acks=all and one request in flight per
// broker, so each source partition's records land in order, once.
type TopicSink struct {
	topic     string
	partition int32 // -1: the source's partition number
	client    *kafka.Client
	producer  *kafka.Producer

	mu      sync.Mutex
	settled *sync.Cond // signalled as answers come in
	sent    int        // records handed to the producer
	acked   int        // records the cluster acknowledged
	failed  error      // first produce error
	nfailed int
}

// NewTopicSink connects its own producer client to the cluster of cc and
// checks that topic exists and has every partition the records of sources
// will go to: partition when it is ≥ 0, else each source's number. These
// are *offsets.UsageError values (exit 2), found before anything is read.
func NewTopicSink(cc kafka.ClientConfig, topic string, partition int32, sources []offsets.Partition) (*TopicSink, error) {
	client, err := kafka.DialProducer(cc)
	if err != nil {
		return nil, err
	}
	if err := checkTargets(client, topic, partition, sources); err != nil {
		_ = client.Close()
		return nil, err
	}
	// Records up to the size the target takes (sarama's producer refuses
	// more than 1 MB by default); when it cannot be read (no DescribeConfigs
	// ACL), the default stays, and the broker has the last word anyway.
	if n, ok, err := client.MaxMessageBytes(topic); err == nil && ok {
		client.SetProducerMaxMessageBytes(n)
	}
	s := &TopicSink{topic: topic, partition: partition, client: client}
	s.settled = sync.NewCond(&s.mu)
	s.producer, err = client.NewProducer(s.ack, s.fail)
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("producer for --to-topic %s: %w", topic, err)
	}
	return s, nil
}

func checkTargets(client *kafka.Client, topic string, partition int32, sources []offsets.Partition) error {
	parts, err := kafka.TopicPartitions(client, []string{topic})
	if errors.Is(err, kafka.ErrUnknownTopic) {
		return &offsets.UsageError{Msg: fmt.Sprintf("--to-topic %q does not exist on this cluster; create it first", topic)}
	}
	if err != nil {
		return fmt.Errorf("--to-topic %s: %w", topic, err)
	}
	want := []int32{partition}
	if partition < 0 {
		want = want[:0]
		for _, p := range sources {
			if !slices.Contains(want, p.Partition) {
				want = append(want, p.Partition)
			}
		}
	}
	for _, n := range want {
		if !slices.Contains(parts, offsets.Partition{Topic: topic, Partition: n}) {
			hint := "; pass --to-partition N to pick one"
			if partition >= 0 {
				hint = ""
			}
			return &offsets.UsageError{Msg: fmt.Sprintf("--to-topic %q has no partition %d (it has %s)%s",
				topic, n, describePartitions(parts), hint)}
		}
	}
	return nil
}

// ack counts a record the cluster acknowledged.
func (s *TopicSink) ack() {
	s.mu.Lock()
	s.acked++
	s.settled.Broadcast()
	s.mu.Unlock()
}

// fail counts a record that could not be produced.
func (s *TopicSink) fail(err error) {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.nfailed++
	s.settled.Broadcast()
	s.mu.Unlock()
}

func (s *TopicSink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		return nil
	}
	return fmt.Errorf("produce to --to-topic %s: %d record%s failed, first: %w", s.topic, s.nfailed, plural(int64(s.nfailed)), s.failed)
}

// Write queues recs for producing; it fails once any earlier record
// could not be produced. A record larger than the target takes fails the
// copy before it is sent, and no later record is sent: the target then
// holds the records before it, with no hole (the producer would refuse it
// on its own and go on with the next ones).
func (s *TopicSink) Write(recs []record.Record) error {
	if err := s.err(); err != nil {
		return err
	}
	for i := range recs {
		r := &recs[i]
		partition := s.partition
		if partition < 0 {
			partition = r.Partition
		}
		s.mu.Lock()
		s.sent++
		s.mu.Unlock()
		if err := s.producer.Send(s.topic, partition, r); err != nil {
			// Counted as sent and failed, so Close still waits for the others.
			s.fail(fmt.Errorf("%s is %w (%s takes its max.message.bytes, or 1 MB when that cannot be read)",
				offsets.QuoteName(fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset)), err, s.topic))
			return s.err()
		}
	}
	return nil
}

// Close waits until every record is acknowledged or has failed, then
// stops the producer. (Closing sarama's producer at once would fail the
// records it is still retrying, e.g. while a new topic gets its leader.)
func (s *TopicSink) Close() error {
	s.mu.Lock()
	for s.acked+s.nfailed < s.sent {
		s.settled.Wait()
	}
	s.mu.Unlock()
	s.producer.Close()
	cerr := s.client.Close()
	if err := s.err(); err != nil {
		return err
	}
	return cerr
}

// Abort stops the producer; records already sent stay in the topic.
func (s *TopicSink) Abort() {
	s.producer.Close()
	_ = s.client.Close()
}
