package kafka

import (
	"fmt"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// DialProducer connects a client for Producer: an idempotent producer
// with acks=all and one request in flight per broker, so the records of
// each partition land in order, once, and every answer is reported. A
// protocol version before 0.11 (no idempotence, no headers) is an
// *offsets.UsageError.
func DialProducer(cc ClientConfig) (*Client, error) {
	conf := cc.saramaConfig()
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
	return dial(cc, conf)
}

// Producer sends records to partitions chosen by the caller and reports
// each answer to the functions given to NewProducer, from its own
// goroutine.
type Producer struct {
	ap       sarama.AsyncProducer
	drained  chan struct{}
	maxBytes int // the largest record it sends
}

// NewProducer starts a producer on c, a client from DialProducer. acked
// is called for each record the cluster acknowledged, failed for each
// that could not be produced; both from one goroutine, in no order
// between them. The caller still closes c, after the producer.
func (c *Client) NewProducer(acked func(), failed func(error)) (*Producer, error) {
	ap, err := sarama.NewAsyncProducerFromClient(c.sc)
	if err != nil {
		return nil, err
	}
	p := &Producer{ap: ap, drained: make(chan struct{}), maxBytes: c.sc.Config().Producer.MaxMessageBytes}
	go p.drain(acked, failed)
	return p, nil
}

func (p *Producer) drain(acked func(), failed func(error)) {
	defer close(p.drained)
	successes, errs := p.ap.Successes(), p.ap.Errors()
	for successes != nil || errs != nil {
		select {
		case _, ok := <-successes:
			if !ok {
				successes = nil
				continue
			}
			acked()
		case pe, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			failed(pe)
		}
	}
}

// RecordTooLargeError is a record larger than the producer sends
// (Client.SetProducerMaxMessageBytes), measured as sarama measures it.
type RecordTooLargeError struct{ Size, Max int }

func (e *RecordTooLargeError) Error() string {
	return fmt.Sprintf("%d bytes, more than the %d the producer sends", e.Size, e.Max)
}

// Send queues r for topic's partition: key, value, headers and
// timestamp as they are (an absent key or value stays absent, an empty
// one stays empty). It may block while the producer's queue is full. A
// record larger than the producer sends is not queued: a
// *RecordTooLargeError (sarama would fail it alone and go on with the
// next ones).
func (p *Producer) Send(topic string, partition int32, r *record.Record) error {
	m := &sarama.ProducerMessage{Topic: topic, Partition: partition, Timestamp: r.Timestamp}
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
	if size := m.ByteSize(2); size > p.maxBytes { // record batches: DialProducer needs 0.11
		return &RecordTooLargeError{Size: size, Max: p.maxBytes}
	}
	p.ap.Input() <- m
	return nil
}

// Close stops the producer at once (records it is still retrying fail)
// and returns once every answer was reported.
func (p *Producer) Close() {
	p.ap.AsyncClose()
	<-p.drained
}
