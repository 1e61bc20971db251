package consumer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

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
	h.kc.Fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		h.kc.Fake.KeepControl()
		for _, rt := range req.(*kmsg.FetchRequest).Topics {
			if rt.Topic != topic && rt.TopicID != id {
				continue
			}
			for _, rp := range rt.Partitions {
				mu.Lock()
				seen[rp.CurrentLeaderEpoch]++
				mu.Unlock()
			}
		}
		return nil, nil, false
	})

	cfg := h.config(nil, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=0")}
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var bs []*Batch
	bumped := false
	deadline := time.After(30 * time.Second)
	for {
		if _, until, _ := covered(t, bs, p); until == 200 {
			break
		}
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			from, until, n := covered(t, bs, p)
			t.Fatalf("after 30s: [%d,%d) with %d records delivered, want [0,200); epochs fetched with %v", from, until, n, seen)
		}
		if _, until, _ := covered(t, bs, p); until >= 100 && !bumped {
			bumped = true
			// Two leader elections that keep the leader (the epoch moves
			// on), then one FENCED_LEADER_EPOCH answer on top.
			h.lead(topic, 0, 0)
			h.lead(topic, 0, 0)
			h.kc.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Err: kerr.FencedLeaderEpoch, Count: 1})
			h.kc.ProduceN(topic, 0, 100, 20)
		}
	}
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
