package replay

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// txnProducer produces transactions into partition 0 of a topic, one
// after the other. With one transactional id, a transaction cannot start
// before the markers of the previous one are written (the coordinator
// answers CONCURRENT_TRANSACTIONS until then), so offsets are predictable.
type txnProducer struct {
	t     *testing.T
	cl    *kgo.Client
	topic string
}

func newTxnProducer(t *testing.T, tc *testkafka.Cluster, topic string) *txnProducer {
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.Brokers...), kgo.TransactionalID(fmt.Sprintf("kbatch-test-%s", topic)),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &txnProducer{t, cl, topic}
}

// produce writes values in one transaction, committed or aborted, and
// returns their offsets.
func (p *txnProducer) produce(commit bool, values ...string) []int64 {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.cl.BeginTransaction(); err != nil {
		p.t.Fatal(err)
	}
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: p.topic, Partition: 0, Value: []byte(v)})
	}
	res := p.cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		p.t.Fatal(err)
	}
	if err := p.cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		p.t.Fatal(err)
	}
	var offs []int64
	for _, r := range res {
		offs = append(offs, r.Record.Offset)
	}
	return offs
}

// waitVisible waits until a read_committed consumer sees the record at
// offset at of partition 0, which is when the marker of its transaction
// is written.
func waitVisible(t *testing.T, tc *testkafka.Cluster, topic string, at int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.Brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(at)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("offset %d of %s not visible to read_committed in 30s", at, topic)
		}
		if len(fs.Records()) > 0 {
			return
		}
	}
}

func TestReplayTransactions(t *testing.T) {
	tc := testkafka.New(t)
	topic := tc.Topic("replay-txn", 1)
	tc.ProduceN(topic, 0, 5, 10) // 0..4
	tp := newTxnProducer(t, tc, topic)
	committed := tp.produce(true, "c0", "c1", "c2") // 5..7, commit marker 8
	aborted := tp.produce(false, "a0", "a1", "a2")  // 9..11, abort marker 12
	last := tp.produce(true, "s")                   // 13, commit marker 14
	waitVisible(t, tc, topic, last[0])
	if !reflect.DeepEqual(committed, seq(5, 8)) || !reflect.DeepEqual(aborted, seq(9, 12)) || last[0] != 13 || tc.End(topic, 0) != 15 {
		t.Fatalf("unexpected layout: committed %v, aborted %v, last %v, end %d (want markers at 8, 12 and 14)",
			committed, aborted, last, tc.End(topic, 0))
	}
	tests := []struct {
		name                 string
		rng                  string
		committed, uncommitd []int64
	}{
		{"ends on the commit marker", "%s:0:5-9", seq(5, 8), seq(5, 8)},
		{"ends before the commit marker", "%s:0:5-8", seq(5, 8), seq(5, 8)},
		{"over the aborted transaction", "%s:0:9-13", nil, seq(9, 12)},
		{"ends inside the aborted transaction", "%s:0:9-11", nil, seq(9, 11)},
		{"only the abort marker", "%s:0:12-13", nil, nil},
		{"markers at both ends", "%s:0:8-13", nil, seq(9, 12)},
		{"ends on the last marker of the log", "%s:0:13-latest", []int64{13}, []int64{13}},
		{"everything", "%s:0:earliest-latest", cat(seq(0, 8), []int64{13}), cat(seq(0, 8), seq(9, 12), []int64{13})},
	}
	for _, isolation := range []string{"committed", "uncommitted"} {
		client := dialTest(t, tc, isolation == "committed")
		for _, tt := range tests {
			t.Run(isolation+"/"+tt.name, func(t *testing.T) {
				sink, rep, err := replayRanges(t, client, fmt.Sprintf(tt.rng, topic))
				if err != nil {
					t.Fatal(err)
				}
				want := tt.uncommitd
				if isolation == "committed" {
					want = tt.committed
				}
				if got := sink.byPartition()[0]; !reflect.DeepEqual(got, want) {
					t.Errorf("offsets %v, want %v", got, want)
				}
				p := rep.Partitions[0]
				if !p.Complete() || p.Empty() != p.Read.Span()-int64(len(want)) {
					t.Errorf("ended at %d of %v with %d offsets without a record", p.Position, p.Read, p.Empty())
				}
			})
		}
	}
}
