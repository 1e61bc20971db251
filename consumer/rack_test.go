package consumer

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

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
	var bs []*Batch
	var evs []Event
	faulted := false
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	// Done when every record arrived and the fault was met: a long poll to
	// the replica that was in flight when the records were produced can
	// deliver them before the dropped connection happens, so the drop
	// case also waits for the drop and a fetch from the replica after it.
	done := func() bool {
		_, until, _ := covered(t, bs, p)
		return until == 200 && redirected.Load() >= 2 && (!drop || (!dropNext.Load() && afterDrop.Load() > 0))
	}
	for {
		if done() {
			break
		}
		select {
		case <-tick.C:
		case ev := <-s.Events():
			evs = append(evs, ev)
			switch ev := ev.(type) {
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			from, until, n := covered(t, bs, p)
			t.Fatalf("after 30s: [%d,%d) with %d records delivered, want [0,200); %d answers named the replica, %d fetches reached it (%d after the drop)", from, until, n, redirected.Load(), fromReplica.Load(), afterDrop.Load())
		}
		if _, until, _ := covered(t, bs, p); until >= 100 && !faulted {
			faulted = true
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
	}
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
