package replay

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/IBM/sarama"

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
	client    sarama.Client
	producer  sarama.AsyncProducer

	drained chan struct{} // closed when the producer's answers are drained
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
	conf := cc.SaramaConfig()
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	conf.Producer.Idempotent = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Retry.Max = 10
	conf.Producer.Return.Errors = true
	conf.Producer.Return.Successes = true // Close waits for every answer
	conf.Net.MaxOpenRequests = 1
	if !conf.Version.IsAtLeast(sarama.V0_11_0_0) {
		return nil, &offsets.UsageError{Msg: "--to-topic needs --kafka-version 0.11.0 or later (idempotent producer, headers)"}
	}
	client, err := kafka.DialWith(cc, conf)
	if err != nil {
		return nil, err
	}
	if err := checkTargets(client, topic, partition, sources); err != nil {
		_ = client.Close()
		return nil, err
	}
	producer, err := sarama.NewAsyncProducerFromClient(client)
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("producer for --to-topic %s: %w", topic, err)
	}
	s := &TopicSink{topic: topic, partition: partition, client: client, producer: producer, drained: make(chan struct{})}
	s.settled = sync.NewCond(&s.mu)
	go s.drain()
	return s, nil
}

func checkTargets(client sarama.Client, topic string, partition int32, sources []offsets.Partition) error {
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

// drain counts the producer's answers until both its channels close.
func (s *TopicSink) drain() {
	defer close(s.drained)
	successes, errs := s.producer.Successes(), s.producer.Errors()
	for successes != nil || errs != nil {
		select {
		case _, ok := <-successes:
			if !ok {
				successes = nil
				continue
			}
			s.mu.Lock()
			s.acked++
			s.settled.Broadcast()
			s.mu.Unlock()
		case pe, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			s.mu.Lock()
			if s.failed == nil {
				s.failed = pe
			}
			s.nfailed++
			s.settled.Broadcast()
			s.mu.Unlock()
		}
	}
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
// could not be produced.
func (s *TopicSink) Write(recs []record.Record) error {
	if err := s.err(); err != nil {
		return err
	}
	for i := range recs {
		r := &recs[i]
		m := &sarama.ProducerMessage{Topic: s.topic, Partition: s.partition, Timestamp: r.Timestamp}
		if s.partition < 0 {
			m.Partition = r.Partition
		}
		if r.Key != nil {
			m.Key = sarama.ByteEncoder(r.Key)
		}
		if r.Value != nil {
			m.Value = sarama.ByteEncoder(r.Value)
		}
		if len(r.Headers) > 0 {
			m.Headers = make([]sarama.RecordHeader, len(r.Headers))
			for j, h := range r.Headers {
				m.Headers[j] = sarama.RecordHeader{Key: h.Key, Value: h.Value}
			}
		}
		s.mu.Lock()
		s.sent++
		s.mu.Unlock()
		s.producer.Input() <- m
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
	s.producer.AsyncClose()
	<-s.drained
	cerr := s.client.Close()
	if err := s.err(); err != nil {
		return err
	}
	return cerr
}

// Abort stops the producer; records already sent stay in the topic.
func (s *TopicSink) Abort() {
	s.producer.AsyncClose()
	<-s.drained
	_ = s.client.Close()
}
