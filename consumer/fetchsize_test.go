package consumer

import (
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// TestOpenTransactionDoesNotGrowTheFetchSize: under read_committed an
// empty answer below the high watermark is an open transaction (the last
// stable offset is the reader's position), not an answer too small for
// the next batch, so the partition's fetch size stays. Under
// read_uncommitted the same answer means the batch did not fit: it grows.
func TestOpenTransactionDoesNotGrowTheFetchSize(t *testing.T) {
	p := offsets.Partition{Topic: "t", Partition: 0}
	for _, tc := range []struct {
		isolation sarama.IsolationLevel
		want      int32
	}{{sarama.ReadCommitted, 1 << 20}, {sarama.ReadUncommitted, 2 << 20}} {
		f := &fetcher{out: make(chan []chunk, 1), stop: make(chan struct{}), fetch: kafka.FetchOptions{Version: 11, ReadCommitted: tc.isolation == sarama.ReadCommitted},
			partBytes: 1 << 20, fastBytes: 1 << 20, growBytes: 4 << 20, maxBytes: 100 << 20, budget: 1 << 30}
		bf := &brokerFetcher{f: f, wake: make(chan struct{}, 1)}
		r := &reader{p: p, f: f, pos: 10, size: 1 << 20, maxHeld: 100, maxHeldBytes: 1 << 30}
		bf.readers = []*reader{r}
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 11
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.HighWatermark, rp.LastStableOffset = 20, 10
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		fr, err := kafka.ReadFetchResponse(resp.Version, resp.AppendTo(nil))
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := bf.handle(fr, []*reader{r}, 1<<20, 1<<30); !ok {
			t.Fatal("handle stopped")
		}
		if r.size != tc.want {
			t.Errorf("isolation %v: fetch size %d after an empty answer at the last stable offset, want %d", tc.isolation, r.size, tc.want)
		}
	}
}
