package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// stallNode makes broker node of fake hold requests of key while on is
// set, until release is closed; hit gets the request each time one is
// held (dropped when nobody listens).
func stallNode(fake *kfake.Cluster, key kmsg.Key, node int32, on *atomic.Bool, hit chan<- kmsg.Request, release <-chan struct{}) {
	fake.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if !on.Load() || fake.CurrentNode() != node {
			return nil, nil, false
		}
		select {
		case hit <- req:
		default:
		}
		fake.SleepControl(func() { <-release })
		return nil, nil, false
	})
}

// answers calls fn and fails the test if it has not returned after a
// generous limit (a liveness bound, not a timing assertion); it logs how
// long fn took.
func answers(t *testing.T, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- fn() }()
	select {
	case err := <-done:
		t.Logf("%s answered in %s (err %v)", what, time.Since(start).Round(time.Microsecond), err)
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not answer within 5s while a broker is down", what)
	}
}

// docs/design.md §2.9: keys (ack, seek, pause, quit) answer whatever the network
// does. Broker 1 stops answering ListOffsets (then Fetch) just as the
// loop needs the bounds of a partition it leads (the broker said its
// position is out of range); every command must still answer, and Close
// must return.
func TestKeysAnswerWhileABrokerIsDown(t *testing.T) {
	h := newBrokersHarness(t, 3)
	topic := h.kc.Topic("net", 4)
	for p := int32(0); p < 4; p++ {
		h.lead(topic, p, []int32{0, 1, 2, 1}[p])
		h.kc.ProduceN(topic, p, 20, 20)
	}
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
	var stallLists, stallFetches atomic.Bool
	lookups := make(chan kmsg.Request, 1)
	release := make(chan struct{})
	stallNode(h.kc.Fake, kmsg.ListOffsets, 1, &stallLists, lookups, release)
	stallNode(h.kc.Fake, kmsg.Fetch, 1, &stallFetches, nil, release)

	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	// Cleanups run last first: the broker answers again before the
	// client is closed.
	t.Cleanup(func() { close(release) })
	cfg.Reset = offsets.ResetEarliest
	cfg.ManualAck = true
	s := start(t, cfg)
	planned := make(chan uint64, 16)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range s.Events() {
			if b, ok := ev.(*BatchEvent); ok && b.Batch.State == offsets.StatePlanned {
				planned <- b.Batch.ID
			}
		}
	}()
	var id uint64
	select {
	case id = <-planned:
	case <-time.After(30 * time.Second):
		t.Fatal("no batch planned")
	}

	// The next fetch of p1 says out of range: the stream asks broker 1
	// for p1's bounds, and broker 1 holds the request.
	stallLists.Store(true)
	h.kc.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Partitions: []int32{1}, Err: kerr.OffsetOutOfRange})
	deadline := time.After(30 * time.Second)
wait:
	for {
		select {
		case req := <-lookups:
			lr := req.(*kmsg.ListOffsetsRequest)
			if len(lr.Topics) == 1 && len(lr.Topics[0].Partitions) == 1 && lr.Topics[0].Partitions[0].Partition == 1 {
				break wait
			}
		case <-deadline:
			t.Fatal("the stream never asked for p1's bounds")
		}
	}
	stallFetches.Store(true)

	answers(t, "ack", func() error { return s.Ack(id) })
	answers(t, "pause p0", func() error { return s.Pause(p0) })
	answers(t, "resume p0", func() error { return s.Resume(p0) })
	answers(t, "pause p1", func() error { return s.Pause(p1) })
	answers(t, "pause all", s.PauseAll)
	answers(t, "resume all", s.ResumeAll)
	answers(t, "cut", s.CutNow)
	earliest, err := offsets.ParseTarget("earliest", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	answers(t, "seek p0", func() error { _, err := s.Seek(p0, earliest); return err })
	answers(t, "quit", s.Close)
	wg.Wait()
}

// eventStore counts the store transactions that write events, and the
// codes each wrote.
type eventStore struct {
	*offsets.Store
	mu     sync.Mutex
	writes [][]string
}

func (s *eventStore) AddEvent(stream string, e offsets.Event) error {
	s.mu.Lock()
	s.writes = append(s.writes, []string{e.Code})
	s.mu.Unlock()
	return s.Store.AddEvent(stream, e)
}

func (s *eventStore) AddEvents(stream string, es []offsets.Event) error {
	var codes []string
	for _, e := range es {
		codes = append(codes, e.Code)
	}
	s.mu.Lock()
	s.writes = append(s.writes, codes)
	s.mu.Unlock()
	return s.Store.AddEvents(stream, es)
}

// docs/design.md §2.9: a broker blip on many partitions writes its events in one
// store transaction, not one fsync per partition.
func TestBrokerBlipWritesItsEventsInOneTransaction(t *testing.T) {
	if testkafka.Real() {
		t.Skip("drops a connection: kfake only")
	}
	h := newHarness(t)
	const parts = 200
	topic := h.kc.Topic("blip", parts)
	var blip atomic.Bool
	h.kc.Fake.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		if blip.CompareAndSwap(true, false) {
			return nil, errors.New("blip"), true // the connection drops
		}
		h.kc.Fake.KeepControl()
		return nil, nil, false
	})
	st := &eventStore{Store: h.openStore()}
	defer st.Close()
	cfg := h.config(nil, topic)
	cfg.Store = st
	s := start(t, cfg)
	defer s.Close()
	errored, reconnected := 0, 0
	deadline := time.After(30 * time.Second)
	for reconnected < parts {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *Progress:
				if errored == 0 {
					blip.Store(true)
				}
			case *Notice:
				switch ev.Code {
				case offsets.CodeBrokerError:
					errored++
				case offsets.CodeReconnected:
					reconnected++
				}
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			t.Fatalf("after 30s: %d broker errors, %d reconnected, want %d of each", errored, reconnected, parts)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	writes := 0
	for _, w := range st.writes {
		for _, c := range w {
			if c == offsets.CodeBrokerError {
				writes++
				if len(w) != parts {
					t.Errorf("a store write of %d events holds broker errors, want all %d in one", len(w), parts)
				}
				break
			}
		}
	}
	t.Logf("%d event writes in all for %d partitions' error and reconnection", len(st.writes), parts)
	if writes != 1 {
		t.Errorf("%d store writes hold the broker errors, want 1", writes)
	}
}

// Retry waits stop on cancel: bounds that keep failing are not retried
// with sleeps once the caller gave up.
func TestListBoundsStopsRetryingOnCancel(t *testing.T) {
	if testkafka.Real() {
		t.Skip("fails ListOffsets: kfake only")
	}
	h := newHarness(t)
	topic := h.kc.Topic("cancel", 1)
	c := h.client()
	h.kc.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: topic, Err: kerr.NotLeaderForPartition, Count: -1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := kafka.ListBoundsContext(ctx, c, []offsets.Partition{{Topic: topic, Partition: 0}})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sarama.ErrNotLeaderForPartition) {
		t.Fatalf("err %v, want the broker's error and context.Canceled", err)
	}
}

// docs/design.md §2.9: a broker that does not answer holds up no other broker's
// partitions. Broker 1 holds every fetch; the partitions of brokers 0 and
// 2 are read all the same (the fetch held must not reserve the whole
// read-ahead).
func TestAStalledBrokerHoldsUpNoOther(t *testing.T) {
	h := newBrokersHarness(t, 3)
	topic := h.kc.Topic("stalled", 3)
	for p := int32(0); p < 3; p++ {
		h.lead(topic, p, p)
		h.kc.ProduceN(topic, p, 50, 20)
	}
	var on atomic.Bool
	on.Store(true)
	release := make(chan struct{})
	stallNode(h.kc.Fake, kmsg.Fetch, 1, &on, nil, release)
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	t.Cleanup(func() { close(release) }) // before the client closes
	s := start(t, cfg)
	read := map[int32]int64{}
	deadline := time.After(30 * time.Second)
	for want := int64(50); want <= 100; want += 50 {
		if want > 50 { // records written while broker 1 holds its fetch
			h.kc.ProduceN(topic, 0, 50, 20)
			h.kc.ProduceN(topic, 2, 50, 20)
		}
		waitRead(t, s, read, want, deadline)
	}
	answers(t, "quit", s.Close)
}

// waitRead reads the stream's events until its batches took partitions 0
// and 2 up to want.
func waitRead(t *testing.T, s *Stream, read map[int32]int64, want int64, deadline <-chan time.Time) {
	t.Helper()
	for read[0] < want || read[2] < want {
		select {
		case ev := <-s.Events():
			if b, ok := ev.(*BatchEvent); ok {
				for _, r := range b.Batch.Ranges {
					read[r.Partition.Partition] = r.Until
				}
			}
			if e, ok := ev.(*Ended); ok {
				t.Fatalf("ended: %+v", e)
			}
		case <-deadline:
			t.Fatalf("after 30s with broker 1 holding its fetches, read up to %v; want partitions 0 and 2 to %d", read, want)
		}
	}
}

// KIP-392: the client's rack goes with every fetch;
// when the leader names a preferred read replica, the partition is
// fetched from that broker, and a fetch the replica cannot serve (behind:
// OFFSET_OUT_OF_RANGE) sends it back to the leader, without data loss or
// an out-of-range event. kfake ignores the rack, so broker 0 (the leader)
// answers a fetch that names rack "b" with broker 1 as the preferred
// replica, as a broker with replica.selector.class would; broker 1 serves
// fetches as a follower.
//
// The second case is a bug the real-cluster test found (scripts/kafka3-rack.sh):
// a fetch from the replica that failed on the connection (it was
// restarting) counted a failure, which only an answer with records
// cleared; the leader's next answer names the replica again but holds no
// records, so every move to the replica went straight back to the leader
// (after the back-off), and a partition whose leader always names the
// replica was never read again.
func TestRackFetchesFromThePreferredReplica(t *testing.T) {
	t.Run("replica-behind", func(t *testing.T) { testRackReplica(t, false) })
	t.Run("replica-connection-dropped", func(t *testing.T) { testRackReplica(t, true) })
}

func testRackReplica(t *testing.T, drop bool) {
	if testkafka.Real() {
		t.Skip("answers with a preferred read replica: kfake only")
	}
	h := newBrokersHarness(t, 2)
	topic := h.kc.Topic("racks", 1)
	h.lead(topic, 0, 0)
	h.kc.Fake.SetFollowers(topic, 0, []int32{1})
	p := offsets.Partition{Topic: topic, Partition: 0}
	h.kc.ProduceN(topic, 0, 100, 20)

	var redirected, fromReplica, afterDrop atomic.Int64
	var dropNext, dropped atomic.Bool
	h.kc.Fake.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		h.kc.Fake.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		if h.kc.Fake.CurrentNode() == 1 {
			if dropNext.CompareAndSwap(true, false) {
				return nil, errors.New("the replica drops the connection"), true
			}
			fromReplica.Add(1)
			if drop && dropped.Load() {
				afterDrop.Add(1)
			}
			return nil, nil, false
		}
		if req.Rack != "b" {
			return nil, nil, false
		}
		redirected.Add(1)
		return answerEach(req, func(sp *kmsg.FetchResponseTopicPartition) { sp.PreferredReadReplica = 1 }), nil, true
	})

	cfg := h.config(nil, topic)
	cfg.Client = dial(t, kafka.ClientConfig{Brokers: h.kc.Brokers, Rack: "b"})
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=0")}
	var logBuf testkafka.SyncBuffer
	cfg.Log = slog.New(slog.NewTextHandler(&logBuf, nil))
	s := start(t, cfg)
	defer s.Close()
	// Done when every record arrived and the fault was met: a long poll to
	// the replica that was in flight when the records were produced can
	// deliver them before the dropped connection happens, so the drop
	// case also waits for the drop and a fetch from the replica after it.
	done := func(bs []*Batch) bool {
		_, until, _ := covered(t, bs, p)
		return until == 200 && redirected.Load() >= 2 && (!drop || (!dropNext.Load() && afterDrop.Load() > 0))
	}
	fault := func() {
		if drop {
			// The replica's connection drops once.
			dropNext.Store(true)
			dropped.Store(true)
		} else {
			// The replica falls behind: it answers out of range once.
			h.kc.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Nodes: []int32{1}, Topic: topic, Err: kerr.OffsetOutOfRange, Count: 1})
		}
		h.kc.ProduceN(topic, 0, 100, 20)
	}
	bs, evs := readThroughFault(t, s, p, done, fault, func() string {
		return fmt.Sprintf("%d answers named the replica, %d fetches reached it (%d after the drop)", redirected.Load(), fromReplica.Load(), afterDrop.Load())
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	from, until, n := covered(t, bs, p)
	if from != 0 || until != 200 || n != 200 {
		t.Fatalf("covered [%d,%d) with %d records, want [0,200) with 200", from, until, n)
	}
	log := logBuf.String()
	t.Logf("%d answers named the preferred replica, %d fetches reached it", redirected.Load(), fromReplica.Load())
	if redirected.Load() < 2 || fromReplica.Load() == 0 {
		t.Errorf("%d answers named the replica and %d fetches reached it: want the partition read from the replica, and back to it after the leader", redirected.Load(), fromReplica.Load())
	}
	if !strings.Contains(log, "preferred read replica") || !strings.Contains(log, "back to the leader") {
		t.Errorf("the debug log does not show the replica and the way back to the leader:\n%s", log)
	}
	for _, code := range []string{offsets.CodeOutOfRange, offsets.CodeDataLoss} {
		if ns := notices(evs, code); len(ns) > 0 {
			t.Errorf("a replica behind gave %s events: %+v", code, ns)
		}
	}
}

// KIP-392: the leader (broker 0) names broker 1 as the preferred read
// replica; broker 1 is behind and answers OFFSET_OUT_OF_RANGE, for a
// second. The follower's error sends the partitions back to the leader
// at once (no failure counted, no back-off), the leader's answer sends
// them back to the follower at once (failures cleared): a ping-pong at
// the network's pace.
func TestReplicaBehindIsNotAskedAtTheNetworksPace(t *testing.T) {
	h := newBrokersHarness(t, 2)
	topic := h.kc.Topic("rackbehind", 3)
	for p := int32(0); p < 3; p++ {
		h.lead(topic, p, 0)
		h.kc.Fake.SetFollowers(topic, p, []int32{1})
	}
	h.kc.ProduceN(topic, 1, 10, 20)
	var behind atomic.Bool
	var mu sync.Mutex
	fetches := map[int32]int{}
	h.kc.Fake.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		h.kc.Fake.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		node := h.kc.Fake.CurrentNode()
		mu.Lock()
		fetches[node]++
		mu.Unlock()
		if node == 1 && !behind.Load() || node == 0 && req.Rack != "b" {
			return nil, nil, false
		}
		return answerEach(req, func(sp *kmsg.FetchResponseTopicPartition) {
			if node == 0 {
				sp.PreferredReadReplica = 1
			} else {
				sp.ErrorCode = kerr.OffsetOutOfRange.Code
			}
		}), nil, true
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return fetches[0] + fetches[1]
	}
	cfg := h.config(nil, topic)
	cfg.Client = dial(t, kafka.ClientConfig{Brokers: h.kc.Brokers, Rack: "b"})
	cfg.Reset = offsets.ResetEarliest
	s := start(t, cfg)
	defer s.Close()
	go func() {
		for range s.Events() {
		}
	}()
	time.Sleep(500 * time.Millisecond) // read from the replica
	behind.Store(true)
	from, start := count(), time.Now()
	time.Sleep(time.Second)
	n, took := count()-from, time.Since(start)
	behind.Store(false)
	if most := 4*int64(took/(50*time.Millisecond)) + 30; int64(n) > most {
		t.Fatalf("%d fetches in %v while the replica was behind: at most %d expected", n, took.Round(time.Millisecond), most)
	}
}

// answerEach is a fake broker's answer to req: every partition asked,
// without records or offsets, as set makes it.
func answerEach(req *kmsg.FetchRequest, set func(*kmsg.FetchResponseTopicPartition)) *kmsg.FetchResponse {
	return testkafka.AnswerFetch(req, func(sp *kmsg.FetchResponseTopicPartition, _ int64) {
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		set(sp)
	})
}
