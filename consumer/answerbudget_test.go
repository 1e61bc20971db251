package consumer

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// budgetHarness is one broker loop of two readers, t[0] and t[1], at
// offset 0, and an answer whose partitions each hold 8 zstd batches of
// one record of 1 MiB of zeros (about 100 bytes on the wire each).
func budgetHarness() (*brokerFetcher, []*reader, *kafka.FetchResponse) {
	f := &fetcher{out: make(chan []chunk, 8), stop: make(chan struct{}), fetch: kafka.FetchOptions{Version: 11},
		partBytes: 1 << 20, fastBytes: 1 << 20, growBytes: 4 << 20, maxBytes: 100 << 20, budget: 1 << 30}
	bf := &brokerFetcher{f: f, wake: make(chan struct{}, 1)}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 11
	rt := kmsg.NewFetchResponseTopic()
	rt.Topic = "t"
	var rs []*reader
	for p := int32(0); p < 2; p++ {
		rs = append(rs, &reader{p: offsets.Partition{Topic: "t", Partition: p}, f: f, size: 1 << 20, maxHeld: 1000, maxHeldBytes: 1 << 30})
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition, rp.HighWatermark, rp.LastStableOffset = p, 8, 8
		for o := int64(0); o < 8; o++ {
			rp.RecordBatches = append(rp.RecordBatches, testkafka.Batch{First: o, ProducerID: -1, Codec: testkafka.CodecZstd,
				Records: []testkafka.Rec{{Value: make([]byte, 1<<20)}}}.Encode()...)
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	resp.Topics = append(resp.Topics, rt)
	bf.readers = rs
	fr, err := kafka.ReadFetchResponse(resp.Version, resp.AppendTo(nil))
	if err != nil {
		panic(err)
	}
	return bf, rs, fr
}

// An answer is not decoded whole before its memory is counted (8 MiB of
// records from a read-ahead of 1 MiB; a compression bomb's answer would
// take gigabytes): its batches are decoded while the records fit the room
// the loop had: the first partition decoded gets its first batch however
// large, the rest of the answer is fetched again later, and the next
// answer starts with the partition left out.
func TestAnswerIsDecodedWithinTheRoomLeft(t *testing.T) {
	bf, rs, resp := budgetHarness()
	if ok, _ := bf.handle(resp, rs, 1<<20, 1<<20); !ok {
		t.Fatal("handle stopped")
	}
	first, second := rs[0], rs[1]
	if first.pos != 1 || second.pos != 0 {
		t.Fatalf("positions after an answer within 1 MiB: %d and %d, want 1 (one batch) and 0 (left for later)", first.pos, second.pos)
	}
	if ok, _ := bf.handle(resp, rs, 1<<20, 1<<20); !ok {
		t.Fatal("handle stopped")
	}
	if first.pos != 1 || second.pos != 1 {
		t.Fatalf("positions after the next answer: %d and %d, want the partition left out read first (1 and 1)", first.pos, second.pos)
	}
	// With room for everything, everything.
	bf, rs, resp = budgetHarness()
	if ok, _ := bf.handle(resp, rs, 1<<20, 1<<30); !ok {
		t.Fatal("handle stopped")
	}
	if rs[0].pos != 8 || rs[1].pos != 8 {
		t.Fatalf("positions with room for the answer: %d and %d, want 8 and 8", rs[0].pos, rs[1].pos)
	}
}
