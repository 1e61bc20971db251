package consumer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// newBrokersHarness is a harness over a kfake cluster of n brokers. The
// tests that use it place partitions' leaders, which needs the fake.
func newBrokersHarness(t *testing.T, n int) *harness {
	t.Helper()
	if testkafka.Real() {
		t.Skip("places partition leaders: kfake only")
	}
	h := newHarness(t)
	h.kc = testkafka.NewBrokers(t, n)
	return h
}

// lead puts partition p of topic on broker node.
func (h *harness) lead(topic string, p, node int32) {
	h.t.Helper()
	if err := h.kc.Fake.MoveTopicPartition(topic, p, node); err != nil {
		h.t.Fatalf("move %s[%d] to broker %d: %v", topic, p, node, err)
	}
}

// With one partition behind its high watermark and the others, led by
// other brokers, at theirs, --until-end ends: the idle brokers' long polls
// must not take the whole read-ahead in turn, or the broker of the
// partition behind never fetches.
func TestUntilEndReadsAPartitionBehindOnAnotherBroker(t *testing.T) {
	h := newBrokersHarness(t, 3)
	topic := h.kc.Topic("sensor-data", 6)
	for p := int32(0); p < 6; p++ {
		h.lead(topic, p, min(p, 1+p%2))
		h.kc.ProduceN(topic, p, 100, 50)
	}
	behind := offsets.Partition{Topic: topic, Partition: 0}
	for round := 0; round < 3; round++ {
		cfg := h.config(nil, topic)
		cfg.UntilEnd = true
		cfg.Explicit = []offsets.Spec{spec(t, topic+":0=-10")}
		t0 := time.Now()
		evs := runWithin(t, cfg, 30*time.Second)
		t.Logf("round %d ended after %s", round, time.Since(t0))
		if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
			t.Fatalf("round %d: ended %+v", round, e)
		}
		if from, until, n := covered(t, batches(evs), behind); from != 90 || until != 100 || n != 10 {
			t.Fatalf("round %d: %s covered [%d,%d) with %d records, want [90,100) with 10", round, behind, from, until, n)
		}
	}
}

// docs/design.md §2.8: with a backlog everywhere, a catch-up batch holds
// --max-per-partition records of every partition, not those of the
// partitions that happened to be fetched first. The interval is too long
// to cut anything here: only the catch-up rule (and --until-end) cuts.
func TestCatchUpBatchHoldsMaxOfEveryPartition(t *testing.T) {
	h := newBrokersHarness(t, 3)
	const parts, per, max = 12, 40, 5
	topic := h.kc.Topic("backlog", parts)
	for p := int32(0); p < parts; p++ {
		h.lead(topic, p, p%3)
		h.kc.ProduceN(topic, p, per, 30)
	}
	for round := 0; round < 3; round++ {
		cfg := h.config(nil, topic)
		cfg.Reset = offsets.ResetEarliest
		cfg.UntilEnd = true
		cfg.MaxPerPartition = max
		cfg.Interval = time.Hour
		evs := runWithin(t, cfg, 60*time.Second)
		if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
			t.Fatalf("round %d: ended %+v", round, e)
		}
		bs := batches(evs)
		if len(bs) != per/max {
			t.Errorf("round %d: %d batches, want %d", round, len(bs), per/max)
		}
		for _, b := range bs {
			if len(b.Ranges) != parts {
				t.Fatalf("round %d: batch %d has %d ranges, want one per partition (%d): %v", round, b.ID, len(b.Ranges), parts, b.Ranges)
			}
			for _, r := range b.Ranges {
				if r.Records != max {
					t.Fatalf("round %d: batch %d holds %d records of %s, want %d: %v", round, b.ID, r.Records, r.Partition, max, b.Ranges)
				}
			}
		}
	}
}

// A planned batch larger than the new run's read-ahead is re-delivered:
// the restart waits for the batch's ranges to be read to their end, so the
// read-ahead must not stop fetching first. Here the
// batch holds 2 × 5000 records of 1 KiB and the restart lowers
// --max-per-partition to 100 and the batch bytes to 1 MiB. docs/design.md §2.8:
// the batch is re-delivered whole, with its planned ranges, then the new
// flags apply.
func TestRedeliveredBatchLargerThanTheReadAhead(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("big", 2)
	const n = 5000
	produceRandom(h.kc, topic, 0, n, 1024)
	produceRandom(h.kc, topic, 1, n, 1024)
	st := h.openStore()
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.Interval = time.Hour // only the catch-up rule cuts: batch 1 is everything
	cfg.MaxPerPartition = n
	cfg.MaxBatchBytes = 64 << 20
	f := &failOnce{}
	cfg.Processor = f
	evs := runWithin(t, cfg, 60*time.Second)
	if e := ended(t, evs); e.Err == nil {
		t.Fatalf("first run should end with the processing error, got %+v", e)
	}
	first := f.seen[0]
	if first.Records != 2*n {
		t.Fatalf("batch 1 holds %d records, want %d: %v; events: %s", first.Records, 2*n, first.Ranges, describe(evs))
	}
	st.Close()
	h.kc.ProduceN(topic, 0, 250, 10) // after the batch: cut with the new flags

	st = h.openStore()
	defer st.Close()
	cfg = h.config(st, topic)
	cfg.UntilEnd = true
	cfg.MaxPerPartition = 100
	cfg.MaxBatchBytes = 1 << 20
	evs = runWithin(t, cfg, 60*time.Second)
	if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
		t.Fatalf("second run ended %+v", e)
	}
	bs := batches(evs)
	if len(bs) != 4 || !bs[0].Redelivered || bs[0].ID != first.ID || bs[0].Records != first.Records {
		t.Fatalf("second run's batches: %d, the first %+v; want batch %d re-delivered whole, then 3", len(bs), bs[0].Batch, first.ID)
	}
	for _, b := range bs[1:] {
		for _, r := range b.Ranges {
			if r.Records > 100 || r.Partition.Partition != 0 {
				t.Errorf("batch %d after the re-delivered one: range %v with %d records, want p0 and at most 100", b.ID, r.Range, r.Records)
			}
		}
	}
	if from, until, _ := covered(t, bs, offsets.Partition{Topic: topic, Partition: 0}); from != 0 || until != n+250 {
		t.Errorf("p0 covered [%d,%d), want [0,%d)", from, until, n+250)
	}
	for i, r := range bs[0].Ranges {
		if r.Range != first.Ranges[i].Range || r.Records != first.Ranges[i].Records {
			t.Errorf("re-delivered range %v (%d records), want %v (%d)", r.Range, r.Records, first.Ranges[i].Range, first.Ranges[i].Records)
		}
	}
}

// produceRandom writes n records of size random bytes (that do not
// compress) to one partition.
func produceRandom(kc *testkafka.Cluster, topic string, partition int32, n, size int) {
	rng := rand.New(rand.NewPCG(uint64(partition), uint64(n)))
	recs := make([]*testkafka.Record, n)
	for i := range recs {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = &testkafka.Record{Topic: topic, Partition: partition, Value: v}
	}
	kc.Produce(recs...)
}

// TestCatchUpWithIdlePartitionsCutsByItself: a broker that leads idle
// partitions beside ones with a backlog. A fetcher that long-polls the
// idle partitions once the share is spent never lets the loop count as
// starved: no partition is ever full, and the catch-up is cut only by the
// interval (53 ms become 4 s at a 2 s interval). With an interval of an
// hour the catch-up must still cut, and end, by itself.
func TestCatchUpWithIdlePartitionsCutsByItself(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("idle", 40)
	for p := int32(0); p < 20; p++ {
		produceRandom(h.kc, topic, p, 200, 8<<10)
	}
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.UntilEnd = true
	cfg.Interval = time.Hour
	cfg.MaxBatchBytes = 2 << 20
	evs := runWithin(t, cfg, 60*time.Second)
	if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
		t.Fatalf("ended %+v", e)
	}
	n := int64(0)
	for _, b := range batches(evs) {
		n += b.Records
	}
	if n != 20*200 {
		t.Errorf("%d records delivered, want %d", n, 20*200)
	}
}
