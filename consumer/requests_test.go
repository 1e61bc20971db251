package consumer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// TestLiveFetchesWaitForBytes: while partitions have a backlog the stream
// fetches with a minimum of 1 byte (the broker answers at once), and once
// every partition is at its high watermark it asks the broker to wait for
// liveMinBytes (or MaxWait): with a minimum of 1 byte, live traffic of
// 5,000 records/s over 50 partitions comes in 84 answers a second of
// about one record per partition, most of the TUI's CPU.
func TestLiveFetchesWaitForBytes(t *testing.T) {
	if testkafka.Real() {
		t.Skip("reads the fetch requests a broker receives: kfake only")
	}
	h := newHarness(t)
	topic := h.topicWith("live", 20, 500, 500)

	var mu sync.Mutex
	var minBytes []int32
	watchFetches(h, func(req *kmsg.FetchRequest) {
		mu.Lock()
		minBytes = append(minBytes, req.MinBytes)
		mu.Unlock()
	})
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	s := start(t, cfg)
	defer s.Close()
	var got int64
	deadline := time.After(30 * time.Second)
	for got < 1000 {
		select {
		case ev := <-s.Events():
			if b, ok := ev.(*BatchEvent); ok {
				for _, r := range b.Batch.Ranges {
					got += r.Records
				}
			}
		case <-deadline:
			t.Fatalf("%d of 1000 records after 30s", got)
		}
	}
	// Caught up: the next fetches long-poll with the live minimum.
	for {
		mu.Lock()
		n := len(minBytes)
		last := minBytes[n-1]
		first := minBytes[0]
		mu.Unlock()
		if first != 1 {
			t.Fatalf("the first fetch, with a backlog, asked a minimum of %d bytes, want 1", first)
		}
		if last == liveMinBytes {
			return
		}
		select {
		case ev := <-s.Events():
			_ = ev
		case <-deadline:
			t.Fatalf("no fetch with a minimum of %d bytes after catching up; minimums asked: %v", liveMinBytes, minBytes)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A partition with a backlog that waits for room in the read-ahead (its
// records wait to be cut) must not wait for a long poll of its broker's
// idle partitions as well: once the cut makes room, it is fetched at once.
// A catch-up of one busy partition beside idle ones on the same broker
// would spend the broker's whole wait (100 ms) after every batch if the
// idle partitions were asked alone to wait for new records.
func TestBusyPartitionDoesNotWaitForALongPollOfIdleOnes(t *testing.T) {
	if testkafka.Real() {
		t.Skip("reads the fetch requests a broker receives: kfake only")
	}
	h := newHarness(t)
	topic := h.kc.Topic("skew", 3)
	const n = 30000
	produceRandom(h.kc, topic, 0, n, 200)

	type asked struct {
		busyAt  int64 // partition 0's offset, -1 when left out
		maxWait int32
	}
	var mu sync.Mutex
	var reqs []asked
	watchFetches(h, func(req *kmsg.FetchRequest) {
		a := asked{busyAt: partition0Offset(req), maxWait: req.MaxWaitMillis}
		mu.Lock()
		reqs = append(reqs, a)
		mu.Unlock()
	})
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.UntilEnd = true
	cfg.Interval = time.Hour
	cfg.MaxPerPartition = 2000 // many cuts, each a chance to wait
	evs := runWithin(t, cfg, 60*time.Second)
	if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
		t.Fatalf("ended %+v", e)
	}
	var got int64
	for _, b := range batches(evs) {
		got += b.Records
	}
	if got != n {
		t.Fatalf("%d records delivered, want %d", got, n)
	}
	mu.Lock()
	defer mu.Unlock()
	// A fetch that left partition 0 out and asked the broker to wait,
	// followed by one of partition 0 below its end: partition 0 had
	// records to read while the broker was told to wait for others.
	waited := -1
	for i, a := range reqs {
		switch {
		case a.busyAt < 0 && a.maxWait > 0:
			waited = i
		case a.busyAt >= 0 && a.busyAt < n && waited >= 0:
			t.Fatalf("fetch %d asked the broker to wait %d ms for the idle partitions while partition 0, at %d of %d, waited for room; fetch %d then read it",
				waited, reqs[waited].maxWait, a.busyAt, n, i)
		}
	}
}

// While a busy partition waits for room (here: its batch waits for an
// ack), its broker's other partitions are asked without a long poll; one
// with records the broker cannot give yet (an open transaction under
// read_committed: its high watermark is above its last stable offset)
// must still not be asked again and again: the loop waits about as long
// as a long poll would between such fetches.
func TestPollsWhileAPartitionWaitsForRoomArePaced(t *testing.T) {
	if testkafka.Real() {
		t.Skip("counts the fetch requests a broker receives: kfake only")
	}
	h := newHarness(t)
	topic := h.kc.Topic("paced", 2)
	produceRandom(h.kc, topic, 0, 50000, 200)
	open, err := kgo.NewClient(kgo.SeedBrokers(h.kc.Brokers...), kgo.TransactionalID("paced-open"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := open.ProduceSync(context.Background(), testkafka.Values(topic, 1, "open")...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	var fetches atomic.Int64
	watchFetches(h, func(_ *kmsg.FetchRequest) {
		fetches.Add(1)
	})
	cfg := h.config(nil, topic)
	cc := kafka.ClientConfig{Brokers: h.kc.Brokers, ReadCommitted: true}
	wait := 50 * time.Millisecond
	if cfg.Client, err = kafka.DialWith(cc, kafka.Tuning{MaxWait: wait}); err != nil {
		t.Fatal(err)
	}
	defer cfg.Client.Close()
	cfg.Reset = offsets.ResetEarliest
	cfg.MaxPerPartition = 1000
	cfg.ManualAck = true // batch 1 waits, and partition 0 fills its read-ahead behind it
	s := start(t, cfg)
	defer s.Close()
	waitFirstBatch(t, s)
	from, start := fetches.Load(), time.Now()
	time.Sleep(20 * wait)
	n, took := fetches.Load()-from, time.Since(start)
	// A long poll every wait, with room for a few wakes: a loop that
	// does not wait asks thousands of times.
	if most := 4*int64(took/wait) + 10; n > most {
		t.Fatalf("%d fetches in %v while batch 1 waited for its ack (the broker's wait is %v): at most %d expected", n, took.Round(time.Millisecond), wait, most)
	}
}

// backlogFromEarliest is a harness and the config of a stream of topic
// name, of partitions partitions with n random records of size bytes on
// partition 0, read from the earliest offset.
func backlogFromEarliest(t *testing.T, name string, partitions int32, n, size int) (*harness, string, Config) {
	h := newHarness(t)
	topic := h.kc.Topic(name, partitions)
	produceRandom(h.kc, topic, 0, n, size)
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	return h, topic, cfg
}

// countFetchRequests counts the Fetch requests the fake receives, and
// those that asked the broker not to wait (MaxWait 0).
func countFetchRequests(h *harness) (total, noWait *atomic.Int64) {
	total, noWait = new(atomic.Int64), new(atomic.Int64)
	watchFetches(h, func(req *kmsg.FetchRequest) {
		total.Add(1)
		if req.MaxWaitMillis == 0 {
			noWait.Add(1)
		}
	})
	return total, noWait
}

// A catch-up of small records on partition 0 beside idle partitions 1
// and 2 of the same broker, with --max-per-partition 5: one answer of
// partition 0 holds some 17,000 records, far over its read-ahead (512
// records), and takes thousands of cuts to drain. Each cut releases a few
// records and wakes the broker loop; partition 0 still holds more than its
// read-ahead and has records to read, so the loop polls the idle
// partitions again at once: one fetch per batch cut, not one long poll of
// the idle partitions per MaxWait.
func TestPollsWhileAPartitionDrainsItsReadAheadArePaced(t *testing.T) {
	if testkafka.Real() {
		t.Skip("counts the fetch requests a broker receives: kfake only")
	}
	h, _, cfg := backlogFromEarliest(t, "drain", 3, 200000, 20)
	total, noWait := countFetchRequests(h)
	cfg.MaxPerPartition = 5
	cfg.Interval = time.Hour
	// A sink that takes a millisecond a batch, so that the loop is not
	// busy cutting (with GOMAXPROCS=2 and no sink the same shows at
	// thousands of fetches a second).
	cfg.Processor = procFunc(func(*Batch, []*record.Record) { time.Sleep(time.Millisecond) })
	s := start(t, cfg)
	defer s.Close()
	var cut int
	from, fromNoWait, start := total.Load(), noWait.Load(), time.Now()
	readFor(s, 2*time.Second, func(ev Event) {
		if b, ok := ev.(*BatchEvent); ok && b.Batch.State == offsets.StateAcked {
			cut++
		}
	})
	// Plus one fetch of partition 0 per answer it drained (some 3,400 of
	// its records a batch would be generous).
	checkFetchesPaced(t, total.Load()-from, noWait.Load()-fromNoWait, time.Since(start), int64(cut)*5/512,
		fmt.Sprintf("%d batches were cut", cut))
}

// checkFetchesPaced fails the test when n fetches (nw of them asking the
// broker not to wait) in took are more than a long poll every 50 ms
// (h.client's MaxWait), with room for a few wakes, plus extra.
func checkFetchesPaced(t *testing.T, n, nw int64, took time.Duration, extra int64, while string) {
	t.Helper()
	wait := 50 * time.Millisecond
	if most := 4*int64(took/wait) + 10 + extra; n > most {
		t.Fatalf("%d fetches (%d asking the broker not to wait) in %v while %s: at most %d expected",
			n, nw, took.Round(time.Millisecond), while, most)
	}
}

// While partition 0 waits for room (batch 1 waits for its manual ack, as
// in the TUI), records keep coming to the broker's other partitions, a few
// thousand a second. Each no-wait poll of them brings a few records, so a
// partition "moved on" and the loop polls again at once: the fetch rate
// follows the produce rate instead of one long poll (MinBytes 64 KiB) per
// MaxWait, the CPU cost liveMinBytes avoids.
func TestLiveRecordsBesideAPartitionWaitingForRoomArePaced(t *testing.T) {
	if testkafka.Real() {
		t.Skip("counts the fetch requests a broker receives: kfake only")
	}
	h, topic, cfg := backlogFromEarliest(t, "trickle", 4, 60000, 200)
	total, noWait := countFetchRequests(h)
	cfg.ManualAck = true // default --max-per-partition: the idle partitions have room for 10,000 records each
	s := start(t, cfg)
	defer s.Close()
	waitFirstBatch(t, s)
	time.Sleep(200 * time.Millisecond) // partition 0 fills its read-ahead behind batch 1

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var produced int
	wg.Add(1)
	go func() {
		defer wg.Done()
		cl := h.kc.Client()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cl.Produce(context.Background(), &kgo.Record{Topic: topic, Partition: int32(1 + i%3), Value: []byte("live")}, nil)
			produced++
			if i%4 == 0 {
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	from, fromNoWait, start := total.Load(), noWait.Load(), time.Now()
	time.Sleep(2 * time.Second)
	n, nw, took := total.Load()-from, noWait.Load()-fromNoWait, time.Since(start)
	close(stop)
	wg.Wait()
	checkFetchesPaced(t, n, nw, took, 0,
		fmt.Sprintf("batch 1 waited for its ack and %d records came to the idle partitions", produced))
}

// A live hot partition (records produced all the time, faster than its
// batches take them) beside idle partitions on the same broker. When its
// read-ahead fills with an answer that reached the high watermark of that
// moment, the reader does not count as behind (its high watermark is
// stale); a loop that then long-polled the idle partitions would make
// partition 0, which has records to read, wait out the broker's wait
// after the cut.
func TestLiveHotPartitionDoesNotWaitForALongPollOfIdleOnes(t *testing.T) {
	if testkafka.Real() {
		t.Skip("reads the fetch requests a broker receives: kfake only")
	}
	h := newHarness(t)
	topic := h.kc.Topic("livehot", 3)
	var produced atomic.Int64 // partition 0's high watermark is at least this
	type asked struct {
		busyAt  int64 // partition 0's offset, -1 when left out
		maxWait int32
		end     int64 // produced when asked
	}
	var mu sync.Mutex
	var reqs []asked
	watchFetches(h, func(req *kmsg.FetchRequest) {
		a := asked{busyAt: partition0Offset(req), maxWait: req.MaxWaitMillis, end: produced.Load()}
		mu.Lock()
		reqs = append(reqs, a)
		mu.Unlock()
	})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cl := h.kc.Client()
		v := make([]byte, 100)
		for {
			select {
			case <-stop:
				return
			default:
			}
			recs := make([]*kgo.Record, 200)
			for i := range recs {
				recs[i] = &kgo.Record{Topic: topic, Partition: 0, Value: v}
			}
			res := cl.ProduceSync(context.Background(), recs...)
			if res.FirstErr() == nil {
				produced.Store(res[len(res)-1].Record.Offset + 1)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetLatest
	cfg.Interval = time.Hour
	cfg.MaxPerPartition = 1000
	s := start(t, cfg)
	defer s.Close()
	readFor(s, 3*time.Second, nil)
	mu.Lock()
	defer mu.Unlock()
	waited, bad := -1, 0
	for i, a := range reqs {
		switch {
		case a.busyAt < 0 && a.maxWait > 0:
			waited = i
		case a.busyAt >= 0 && waited >= 0:
			// partition 0 was at most at busyAt during the long poll,
			// below what had been produced when it was sent
			if a.busyAt < reqs[waited].end {
				bad++
			}
			waited = -1
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d fetches were long polls of the idle partitions while partition 0 had records to read", bad, len(reqs))
	}
}

// Two brokers. Broker 1 leads partition 1, which holds one answer of many
// times its read-ahead (17,000 records of 20 bytes, --max-per-partition
// 5: thousands of cuts to drain it), and idle partition 2: the setting of
// TestPollsWhileAPartitionDrainsItsReadAheadArePaced. Broker 0 leads
// partition 0, a catch-up in record batches of 5 whose read-ahead refills
// after every cut, so broker 0's backlog goes on and off once per cut,
// and with it broker 1's share of the read-ahead (budget/2 while broker 0
// has a backlog, the whole budget when not). Partition 1 holds about
// 3.2 MB in memory, between the two (budget 3.4 MB). A cut wakes broker
// 1's pause while broker 0 has a backlog: its room is <= 0, so pause
// returns; broker 0 then drops its backlog and wakes every loop, and
// broker 1, with room again, polls partition 2 at once: one poll per cut.
func TestPollsBesideADrainArePacedWhileAnotherBrokersBacklogComesAndGoes(t *testing.T) {
	h := newBrokersHarness(t, 2)
	topic := h.kc.Topic("drain2", 3)
	h.lead(topic, 0, 0)
	h.lead(topic, 1, 1)
	h.lead(topic, 2, 1)
	// partition 0: 20,000 records of 1 KB in record batches of 5
	small, err := kgo.NewClient(kgo.SeedBrokers(h.kc.Brokers...), kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(1<<20),
		kgo.ProducerBatchMaxBytes(5*1020+100))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]*kgo.Record, 20000)
	for i := range recs {
		v := make([]byte, 1000)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = &kgo.Record{Topic: topic, Partition: 0, Value: v}
	}
	if err := small.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	small.Close()
	produceRandom(h.kc, topic, 1, 200000, 20)

	var mu sync.Mutex
	fetches := map[int32]int{}
	watchFetches(h, func(_ *kmsg.FetchRequest) {
		mu.Lock()
		fetches[h.kc.Fake.CurrentNode()]++
		mu.Unlock()
	})
	cfg := h.config(nil, topic)
	cc := kafka.ClientConfig{Brokers: h.kc.Brokers}
	// FetchBytes: partition 0's answers hold one record batch (5 records).
	if cfg.Client, err = kafka.DialWith(cc, kafka.Tuning{MaxWait: 50 * time.Millisecond, FetchBytes: 1 << 10}); err != nil {
		t.Fatal(err)
	}
	defer cfg.Client.Close()
	cfg.Reset = offsets.ResetEarliest
	cfg.MaxPerPartition = 5
	cfg.MaxBatchBytes = 3400 << 10 // budget 3.4 MB: partition 1's 3.2 MB between budget/2 and budget
	cfg.Interval = time.Hour
	cfg.Processor = procFunc(func(*Batch, []*record.Record) { time.Sleep(time.Millisecond) })
	s := start(t, cfg)
	defer s.Close()
	var cut int
	var p1 int64
	start := time.Now()
	readFor(s, 2*time.Second, func(ev Event) {
		if b, ok := ev.(*BatchEvent); ok && b.Batch.State == offsets.StateAcked {
			cut++
			for _, r := range b.Batch.Ranges {
				if r.Partition.Partition == 1 {
					p1 += r.Records
				}
			}
		}
	})
	took := time.Since(start)
	mu.Lock()
	n0, n1 := fetches[0], fetches[1]
	mu.Unlock()
	wait := 50 * time.Millisecond
	// A poll every wait, plus a fetch of partition 1 per 100 of its
	// records cut (one per 512, its read-ahead, would do).
	if most := 4*int64(took/wait) + 10 + p1/100; int64(n1) > most {
		t.Fatalf("broker 1: %d fetches in %v while %d batches were cut (broker 0: %d fetches): at most %d expected",
			n1, took.Round(time.Millisecond), cut, n0, most)
	}
}

// partition0Offset is the offset req asks of partition 0, -1 when it
// leaves partition 0 out.
func partition0Offset(req *kmsg.FetchRequest) int64 {
	at := int64(-1)
	for _, tp := range req.Topics {
		for _, p := range tp.Partitions {
			if p.Partition == 0 {
				at = p.FetchOffset
			}
		}
	}
	return at
}

// KIP-320: every fetch carries the partition's current
// leader epoch, so a broker whose epoch moved on answers
// FENCED_LEADER_EPOCH instead of serving a history the client does not
// know is current; the stream refreshes its metadata, fetches with the new
// epoch and delivers every record. A fetch carrying -1 would let the
// broker skip the check.
func TestFetchCarriesLeaderEpochAndRetriesWhenFenced(t *testing.T) {
	if testkafka.Real() {
		t.Skip("moves epochs and injects errors: kfake only")
	}
	h := newBrokersHarness(t, 1)
	topic := h.kc.Topic("epochs", 1)
	p := offsets.Partition{Topic: topic, Partition: 0}
	h.kc.ProduceN(topic, 0, 100, 20)

	id := h.kc.TopicID(topic) // Fetch v13 names the topic by id only

	var mu sync.Mutex
	seen := map[int32]int{} // leader epochs the fetches of p carried
	watchFetches(h, func(req *kmsg.FetchRequest) {
		for _, rp := range fetchedPartitions(req, topic, id) {
			mu.Lock()
			seen[rp.CurrentLeaderEpoch]++
			mu.Unlock()
		}
	})

	cfg := h.config(nil, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=0")}
	s := start(t, cfg)
	defer s.Close()
	all := func(bs []*Batch) bool {
		_, until, _ := covered(t, bs, p)
		return until == 200
	}
	bs, _ := readThroughFault(t, s, p, all, func() {
		// Two leader elections that keep the leader (the epoch moves
		// on), then one FENCED_LEADER_EPOCH answer on top.
		h.lead(topic, 0, 0)
		h.lead(topic, 0, 0)
		h.kc.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Err: kerr.FencedLeaderEpoch, Count: 1})
		h.kc.ProduceN(topic, 0, 100, 20)
	}, func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("epochs fetched with %v", seen)
	})
	from, until, n := covered(t, bs, p)
	if from != 0 || until != 200 || n != 200 {
		t.Fatalf("covered [%d,%d) with %d records, want [0,200) with 200", from, until, n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("fetches by leader epoch: %v", seen)
	if seen[-1] > 0 {
		t.Errorf("%d fetches carried no leader epoch (-1)", seen[-1])
	}
	if seen[2] == 0 {
		t.Errorf("no fetch carried the epoch after two elections (2): %v", seen)
	}
}

// Starting a stream over many partitions led by several brokers looks up
// offsets with one request per broker and bound (earliest, latest), not
// one per partition.
func TestStartLooksUpOffsetsOncePerBroker(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 60, 1, nil, "wide"); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	perBroker := map[int32]int{}
	fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		perBroker[fake.CurrentNode()]++
		mu.Unlock()
		return nil, nil, false
	})

	cc := kafka.ClientConfig{Brokers: fake.ListenAddrs()}
	client, err := kafka.DialWith(cc, kafka.Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s, started, err := Start(context.Background(), Config{Client: client, Brokers: cc.Brokers, Topics: []string{"wide"}, Name: "wide", Reset: offsets.ResetEarliest})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(started.Starts) != 60 {
		t.Fatalf("%d partitions started, want 60", len(started.Starts))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(perBroker) != 3 {
		t.Fatalf("ListOffsets went to brokers %v, want all three leaders", perBroker)
	}
	for id, n := range perBroker {
		if n != 2 {
			t.Errorf("broker %d got %d ListOffsets requests for its 20 partitions, want 2 (earliest, latest)", id, n)
		}
	}
}
