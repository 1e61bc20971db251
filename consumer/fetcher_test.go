package consumer

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Answers that expand in memory (compressible records) shrink the answer
// size asked for, so the read-ahead bounds memory, not only bytes on the
// wire; the expansion is learnt at once and forgotten slowly.
func TestAnswerSizeFollowsExpansion(t *testing.T) {
	f := &fetcher{}
	if got := f.answerSize(64 << 20); got != minAnswerBytes {
		t.Fatalf("before any answer: %d, want the smallest answer %d", got, minAnswerBytes)
	}
	f.observe(1<<20, 1<<20) // the records take their size on the wire
	if got := f.answerSize(64 << 20); got != maxAnswerBytes {
		t.Fatalf("after a plain answer: %d, want the cap %d", got, maxAnswerBytes)
	}
	if got := f.answerSize(1 << 20); got != 1<<20 {
		t.Fatalf("with 1 MiB of room: %d", got)
	}
	f.observe(1<<20, 20<<20) // 1 MiB on the wire took 20 MiB
	if got := f.answerSize(16 << 20); got != 16<<20/20 {
		t.Fatalf("after a twentyfold answer: %d, want %d", got, 16<<20/20)
	}
	f.observe(1<<20, 1<<20) // a plain one: the expansion decays
	if e := f.expansion.Load(); e != 1800 {
		t.Fatalf("expansion after a plain answer: %d, want 1800 (90%% of 2000)", e)
	}
	for range 100 {
		f.observe(1<<20, 1<<19)
	}
	if e := f.expansion.Load(); e != 100 {
		t.Fatalf("expansion never falls below 1: %d", e)
	}
	f.observe(1<<20, 1<<40)
	if e := f.expansion.Load(); e != 6400 {
		t.Fatalf("expansion is capped at 64: %d", e)
	}
	if got := f.answerSize(1 << 20); got != minAnswerBytes {
		t.Fatalf("a huge expansion still asks for %d, got %d", minAnswerBytes, got)
	}
	if got := f.answerSize(100); got != 100 {
		t.Fatalf("room below the minimum: %d, want the room", got)
	}
}

// The read-ahead counts what records take in memory,
// not their bytes alone: 10,000 records of one byte take 1.6 MB once
// decoded, and a reader whose read-ahead is 1 MiB is full with them.
func TestReadAheadCountsRecordsInMemory(t *testing.T) {
	f := &fetcher{}
	r := &reader{f: f, maxHeld: 1 << 30, maxHeldBytes: 1 << 20}
	if !r.hold(10000, 10000, 10000) {
		t.Fatal("hold refused on an open reader")
	}
	if _, room, held, _ := r.state(); room || held != 10000+10000*kafka.RecordOverhead {
		t.Fatalf("after 10,000 one-byte records: room %v, held %d; want no room, %d", room, held, 10000+10000*kafka.RecordOverhead)
	}
	r.release(10000, 10000)
	if _, room, held, _ := r.state(); !room || held != 0 {
		t.Fatalf("after their release: room %v, held %d; want room and nothing held", room, held)
	}
}

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

// A catch-up with the defaults holds two batches' worth of records in
// memory at most: the batch in processing (MaxBatchBytes of keys and
// values, with their messages) and the read-ahead being filled for the
// next. With 200 B records that is within 16 MiB, half of kbatch's soft
// heap limit (main.go), which leaves the GC its usual headroom and the
// process within 64 MiB of RSS. A read-ahead of twice the batch bytes,
// with 8 MiB batches, took 30 MiB.
func TestDefaultCatchUpHoldsTwoBatchesWithinSixteenMiB(t *testing.T) {
	c := Config{Client: &kafka.Client{}, Topics: []string{"t"}}
	if err := c.defaults(); err != nil {
		t.Fatal(err)
	}
	const record = 200
	batch := kafka.InMemory(c.MaxBatchBytes/record, c.MaxBatchBytes)
	if got := batch + readAheadBytes(c.MaxBatchBytes); got > 16<<20 {
		t.Fatalf("a batch of %d bytes of %d B records takes %d in memory, its read-ahead %d: %d in all, want at most 16 MiB",
			c.MaxBatchBytes, record, batch, readAheadBytes(c.MaxBatchBytes), got)
	}
}
