package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestWatchPlansEveryPartitionWhenOneHoldsAHugeBatch: two partitions on one
// broker, each one lz4 record batches of 200,000 small records (about 50 MB
// decoded, a few KB on the wire). The first answer's decoded batch alone
// holds more than the broker's share of the read-ahead; the other partition
// must still be fetched before it is drained, so batch 1 of
// --max-per-partition 5 holds both partitions. docs/design.md §2.8: every
// batch plans every partition that has records.
func TestWatchPlansEveryPartitionWhenOneHoldsAHugeBatch(t *testing.T) {
	kc := testkafka.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := "huge-batches"
	topicTaking(t, kc, topic, 2, "67108864")
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.ProducerBatchMaxBytes(16<<20), kgo.ProducerLinger(50*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.Lz4Compression()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for p := int32(0); p < 2; p++ {
		rs := make([]*kgo.Record, 200_000)
		for j := range rs {
			rs[j] = &kgo.Record{Topic: topic, Partition: p, Value: []byte(strings.Repeat("z", 80))}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out, e, code := runKbatch(t, "watch", "--no-tui", "--no-store", "-b", strings.Join(kc.Brokers, ","), "-t", topic,
		"--reset", "earliest", "--max-per-partition", "5", "--batches", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	batches := 0
	for _, l := range parseLines(t, []byte(out)) {
		if l.Type != "batch" {
			continue
		}
		batches++
		if len(l.Ranges) != 2 {
			t.Errorf("batch %d has ranges %+v, want both partitions", batches, l.Ranges)
		}
	}
	if batches != 3 {
		t.Errorf("%d batches, want 3", batches)
	}
}
