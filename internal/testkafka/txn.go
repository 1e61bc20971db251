package testkafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TxnProducer writes transactions, one after the other, with one
// transactional id: a transaction cannot start before the markers of the
// previous one are written (the coordinator answers CONCURRENT_TRANSACTIONS
// until then), so offsets are predictable. Every transaction of it has the
// same producer id.
type TxnProducer struct {
	c  *Cluster
	cl *kgo.Client
}

// TxnProducer returns a transactional producer, closed at cleanup.
func (c *Cluster) TxnProducer() *TxnProducer {
	c.t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...), kgo.TransactionalID("kbatch-test-"+hex.EncodeToString(b[:])),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		c.t.Fatalf("transactional client: %v", err)
	}
	c.t.Cleanup(cl.Close)
	return &TxnProducer{c: c, cl: cl}
}

// Produce writes recs (Topic and Partition set) in one transaction,
// committed or aborted, and returns their offsets. The transaction's
// marker follows them in each partition.
func (p *TxnProducer) Produce(commit bool, recs ...*kgo.Record) []int64 {
	t := p.c.t
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := p.begin(cx, recs)
	if err := p.cl.EndTransaction(cx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction: %v", err)
	}
	return out
}

// begin begins a transaction, writes recs in it and returns their
// offsets.
func (p *TxnProducer) begin(cx context.Context, recs []*kgo.Record) []int64 {
	t := p.c.t
	t.Helper()
	if err := p.cl.BeginTransaction(); err != nil {
		t.Fatalf("begin transaction: %v", err)
	}
	res := p.cl.ProduceSync(cx, recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("transactional produce: %v", err)
	}
	out := make([]int64, len(res))
	for i, r := range res {
		out[i] = r.Record.Offset
	}
	return out
}

// Values is one record of each value for partition of topic.
func Values(topic string, partition int32, values ...string) []*kgo.Record {
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)}
	}
	return recs
}

// WaitVisible waits until a read_committed consumer sees the record at
// offset at of partition, which is when the marker of its transaction is
// written.
func (c *Cluster) WaitVisible(topic string, partition int32, at int64) {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(at)}}))
	if err != nil {
		c.t.Fatalf("read_committed client: %v", err)
	}
	defer cl.Close()
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(cx)
		if cx.Err() != nil {
			c.t.Fatalf("offset %d of %s[%d] not visible to read_committed in 30s", at, topic, partition)
		}
		if len(fs.Records()) > 0 {
			return
		}
	}
}

// Open writes recs (Topic and Partition set) in a transaction that it
// leaves open, and returns their offsets: the last stable offset of their
// partitions stays at the first of them, and a read_committed reader sees
// nothing from there on, until the transaction times out.
func (p *TxnProducer) Open(recs ...*kgo.Record) []int64 {
	p.c.t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.begin(cx, recs)
}
