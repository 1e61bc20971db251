package kafka

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/record"
)

// ByKey is the partition of a WriteRequest that lets the key choose it,
// as the Java client's default partitioner does.
const ByKey int32 = -1

// WriteRequest is one record to produce.
type WriteRequest struct {
	Topic string
	// Partition is the partition number, or ByKey: murmur2 of the key
	// modulo the topic's partition count (the Java client's default, so
	// the record lands where other producers put the same key), or a
	// random partition when the key is absent.
	Partition int32
	// Key and Value are sent as they are: nil is absent (null), an empty
	// slice is empty.
	Key, Value []byte
	Headers    []record.Header
}

// WriteResult is where a record landed.
type WriteResult struct {
	Partition int32
	Offset    int64
}

// Writer produces single records on request, each acknowledged by every
// in-sync replica (acks=all) before Write returns. It has its own
// connections, apart from a stream's. Safe for concurrent use.
type Writer struct {
	c  *Client
	sp sarama.SyncProducer
}

// writerMaxBytes lets the broker, not the client, decide what is too
// large (message.max.bytes, the topic's max.message.bytes): its answer
// names the limit that applies.
const writerMaxBytes = 64 << 20

// DialWriter connects a Writer to the cluster of cc.
func DialWriter(cc ClientConfig) (*Writer, error) {
	conf := cc.saramaConfig()
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Return.Successes = true
	conf.Producer.Return.Errors = true
	conf.Producer.Retry.Max = 3
	conf.Producer.MaxMessageBytes = writerMaxBytes
	conf.Net.MaxOpenRequests = 1
	c, err := dial(cc, conf)
	if err != nil {
		return nil, err
	}
	sp, err := sarama.NewSyncProducerFromClient(c.sc)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &Writer{c: c, sp: sp}, nil
}

// Close closes the producer and its connections.
func (w *Writer) Close() error {
	err := w.sp.Close()
	if cerr := w.c.Close(); err == nil && !errors.Is(cerr, sarama.ErrClosedClient) {
		err = cerr
	}
	return err
}

// Write produces r and returns where it landed. Errors are one sentence
// that names the topic and what is wrong: a topic that does not exist, a
// partition it does not have, a missing WRITE permission, a record
// larger than the broker takes.
func (w *Writer) Write(r WriteRequest) (WriteResult, error) {
	parts, err := w.c.sc.Partitions(r.Topic)
	if err != nil {
		return WriteResult{}, writeError(r, err)
	}
	n := int32(len(parts))
	if n == 0 {
		return WriteResult{}, fmt.Errorf("topic %q has no partitions", r.Topic)
	}
	p := r.Partition
	switch {
	case p == ByKey && r.Key != nil:
		p = KeyPartition(r.Key, n)
	case p == ByKey:
		p = rand.Int32N(n)
	case p < 0 || p >= n:
		return WriteResult{}, fmt.Errorf("topic %q has no partition %d: it has %d (0 to %d)", r.Topic, p, n, n-1)
	}
	m := &sarama.ProducerMessage{Topic: r.Topic, Partition: p}
	if r.Key != nil {
		m.Key = sarama.ByteEncoder(r.Key)
	}
	if r.Value != nil {
		m.Value = sarama.ByteEncoder(r.Value)
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: h.Key, Value: h.Value})
	}
	gotP, off, err := w.sp.SendMessage(m)
	if err != nil {
		return WriteResult{}, writeError(r, err)
	}
	return WriteResult{Partition: gotP, Offset: off}, nil
}

// writeError turns the library's answer into one sentence.
func writeError(r WriteRequest, err error) error {
	size := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		size += len(h.Key) + len(h.Value)
	}
	switch {
	case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
		return fmt.Errorf("topic %q does not exist on this cluster (or this user may not describe it)", r.Topic)
	case errors.Is(err, sarama.ErrTopicAuthorizationFailed):
		return fmt.Errorf("not authorized to write to topic %q: the user needs the WRITE permission on it (Kafka ACL)", r.Topic)
	case errors.Is(err, sarama.ErrClusterAuthorizationFailed):
		return fmt.Errorf("not authorized to produce on this cluster: %v", err)
	case errors.Is(err, sarama.ErrMessageSizeTooLarge), errors.Is(err, sarama.ErrInvalidRecord) && size > 1<<20:
		return fmt.Errorf("the record (%d bytes) is larger than topic %q takes: the broker's message.max.bytes or the topic's max.message.bytes is lower", size, r.Topic)
	case errors.Is(err, sarama.ErrNotEnoughReplicas), errors.Is(err, sarama.ErrNotEnoughReplicasAfterAppend):
		return fmt.Errorf("topic %q has fewer in-sync replicas than min.insync.replicas; nothing was written", r.Topic)
	}
	return fmt.Errorf("writing to topic %q: %v", r.Topic, err)
}

// keyHash is sarama's murmur2 partitioner. Given a key it only hashes
// (its random partitioner is for records with no key, which KeyPartition
// never passes), so it is safe for concurrent use.
var keyHash = sarama.NewMurmur2Partitioner("")

// KeyPartition is the partition the Java client's default partitioner
// (and franz-go's, librdkafka's murmur2_random) gives a record with key
// on a topic of n partitions: murmur2(key), made positive, modulo n. The
// hash is sarama's (NewMurmur2Partitioner); a nil key is hashed as an
// empty one, as Kafka hashes a key of no bytes.
func KeyPartition(key []byte, n int32) int32 {
	p, err := keyHash.Partition(&sarama.ProducerMessage{Key: sarama.ByteEncoder(key)}, n)
	if err != nil { // ByteEncoder never fails
		panic(err)
	}
	return p
}
