package consumer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
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

// KIP-320: after an unclean leader election the new leader's log is
// shorter than what the stream read, and new records are then written at
// the offsets the stream had read past. A stream that went on at its
// position would silently read the new history from there: the new
// records below its position never read, and what it had read there gone
// without a word. The first fetch after the
// leader changed checks the record before the position against the leader
// epoch it was read in; the stream reports data loss for [divergence,
// position) and reads on at the divergence point.
//
// kfake has no unclean election; the topic is deleted and created again
// instead, which to a reader that knows no topic ids (topicIDs below)
// looks the same: the first 60 records again (the part of the log the
// stale replica had, in the same leader epoch), then, after a leader
// election, 70 records that replace the old 60..99 and go on past the
// stream's position 100.
func TestTruncatedLogIsDataLossAndReadFromTheDivergence(t *testing.T) {
	for _, failStop := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail-on-data-loss=%v", failStop), func(t *testing.T) {
			testTruncation(t, failStop)
		})
	}
}

func testTruncation(t *testing.T, failStop bool) {
	if testkafka.Real() {
		t.Skip("deletes and re-creates a topic to truncate its log: kfake only")
	}
	// A recreated topic has a new id, and the stream reads it from its
	// start (onRecreated); an unclean election keeps the id. So the
	// stream is told no ids here.
	topicIDs = func(*kafka.Client, []string) (map[string]string, error) { return nil, nil }
	t.Cleanup(func() { topicIDs = kafka.TopicIDs })
	h := newBrokersHarness(t, 1)
	topic := h.kc.Topic("unclean", 1)
	p := offsets.Partition{Topic: topic, Partition: 0}
	old := func(i int) *testkafka.Record {
		return &testkafka.Record{Topic: topic, Partition: 0, Value: fmt.Appendf(nil, "old-%d", i)}
	}
	var recs []*testkafka.Record
	for i := range 100 {
		recs = append(recs, old(i))
	}
	h.kc.Produce(recs...)

	var mu sync.Mutex
	got := map[int64][]string{} // offset -> values delivered, in order
	var order []int64
	cfg := h.config(nil, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=0")}
	cfg.FailOnDataLoss = failStop
	cfg.Processor = procFunc(func(_ *Batch, rs []*record.Record) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range rs {
			got[r.Offset] = append(got[r.Offset], string(r.Value))
			order = append(order, r.Offset)
		}
	})
	s := start(t, cfg)
	defer s.Close()
	var bs []*Batch
	var losses []offsets.Event
	var end *Ended
	truncated := false
	deadline := time.After(60 * time.Second)
	for end == nil {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Notice:
				if ev.Code == offsets.CodeDataLoss || ev.Code == offsets.CodeOutOfRange {
					losses = append(losses, ev.Event)
				}
			case *Ended:
				end = ev
			}
		case <-deadline:
			_, until, n := covered(t, bs, p)
			t.Fatalf("after 60s: read to %d (%d records), events %+v", until, n, losses)
		}
		if _, until, _ := covered(t, bs, p); until >= 100 && !truncated {
			truncated = true
			// Paused while the log is rebuilt: the stream sees the new
			// leader's log whole, as after an election.
			if err := s.Pause(p); err != nil {
				t.Fatal(err)
			}
			if _, err := h.kc.Admin().DeleteTopics(context.Background(), topic); err != nil {
				t.Fatal(err)
			}
			waitGone(t, h, topic)
			if _, err := h.kc.Admin().CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			// A new producer: the set-up client keeps the old topic id.
			pc, err := kgo.NewClient(kgo.SeedBrokers(h.kc.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			produce := func(rs ...*testkafka.Record) {
				for _, r := range rs {
					r.Offset = 0
				}
				if err := pc.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
					t.Fatalf("produce: %v", err)
				}
			}
			produce(recs[:60]...)
			h.lead(topic, 0, 0) // the unclean election: a new leader epoch
			var fresh []*testkafka.Record
			for i := 60; i < 130; i++ {
				fresh = append(fresh, &testkafka.Record{Topic: topic, Partition: 0, Value: fmt.Appendf(nil, "new-%d", i)})
			}
			produce(fresh...)
			if err := s.Resume(p); err != nil {
				t.Fatal(err)
			}
		}
		if failStop || len(losses) == 0 {
			continue
		}
		if _, until, _ := covered(t, bs, p); until >= 130 {
			break
		}
	}

	if len(losses) != 1 {
		t.Fatalf("loss events %+v, want one data-loss", losses)
	}
	e := losses[0]
	if e.Code != offsets.CodeDataLoss || e.Expected != 100 || e.Lost != 40 || e.Partition != 0 {
		t.Fatalf("event %+v, want data-loss expected 100, lost 40", e)
	}
	if failStop {
		if end == nil || end.Err == nil {
			t.Fatalf("ended %+v, want the stream to stop with --fail-on-data-loss", end)
		}
		return
	}
	if e.To != 60 {
		t.Fatalf("event %+v, want reading on at 60", e)
	}
	mu.Lock()
	defer mu.Unlock()
	for off := int64(0); off < 130; off++ {
		vs := got[off]
		want := []string{fmt.Sprintf("old-%d", off)}
		switch {
		case off >= 100:
			want = []string{fmt.Sprintf("new-%d", off)}
		case off >= 60:
			want = []string{fmt.Sprintf("old-%d", off), fmt.Sprintf("new-%d", off)}
		}
		if fmt.Sprint(vs) != fmt.Sprint(want) {
			t.Errorf("offset %d delivered %q, want %q (the old history up to 100, the new from 60 on after the event)", off, vs, want)
		}
	}
	// The range after the event starts at 60, marked as data loss.
	jumped := false
	for _, b := range bs {
		for _, r := range b.Ranges {
			if r.From == 60 && r.Jump == offsets.CodeDataLoss {
				jumped = true
			}
		}
	}
	if !jumped {
		t.Errorf("no range starts at 60 marked data-loss: %+v", bs)
	}
}

func waitGone(t *testing.T, h *harness, topic string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		md, err := h.kc.Admin().Metadata(context.Background(), topic)
		if err == nil {
			if td, ok := md.Topics[topic]; !ok || td.Err != nil {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("topic %s still there after 10s", topic)
}
