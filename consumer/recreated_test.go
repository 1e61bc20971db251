package consumer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// TestRecreatedTopicIsReported (helper-37): a topic deleted and created
// again while kbatch was stopped, the new one already holding more
// records than the stored position: kbatch resumed at the old offset with
// no event, so the new topic's first records were skipped silently. The
// topic id (KIP-516) tells the two apart: a topic-recreated event says
// so and how to read the new topic from its start, and a batch planned
// on the old topic is dropped. The stored positions are kept (helper-39:
// a topic recreated while a stream ran has positions of the new topic
// acked under the old id; resetting them would deliver those twice).
func TestRecreatedTopicIsReported(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("recreated", 1)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	h.kc.ProduceN(topic, 0, 5, 10)
	st := h.openStore()
	defer st.Close()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.UntilEnd = offsets.ResetEarliest, true
	if _, until, _ := covered(t, batches(runWithin(t, cfg, time.Minute)), p0); until != 5 {
		t.Fatalf("first run read up to %d, want 5", until)
	}
	// A batch planned on the old topic, never acked.
	if err := st.Plan("test", offsets.Batch{ID: 2, Ranges: []offsets.BatchRange{
		{Range: offsets.Range{Partition: p0, From: 5, Until: 6}, Records: 1}}}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.kc.Admin().DeleteTopics(ctx, topic); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := h.kc.Admin().CreateTopic(ctx, 1, 1, nil, topic)
		if err == nil && resp.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create %s again: %v %v", topic, err, resp.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.kc.Client().PurgeTopicsFromClient(topic) // its producer knew the old topic id
	h.kc.ProduceN(topic, 0, 8, 10)

	evs := runWithin(t, cfg, time.Minute)
	from, until, records := covered(t, batches(evs), p0)
	if from != 5 || until != 8 || records != 3 {
		t.Fatalf("after the topic was created again: read [%d, %d) with %d records, want the stored position on: [5, 8): %s", from, until, records, describe(evs))
	}
	var recreated, dropped bool
	for _, ev := range evs {
		if n, ok := ev.(*Notice); ok {
			recreated = recreated || (n.Code == offsets.CodeRecreated && n.Topic == topic && strings.Contains(n.Message, "-o "+topic+"=earliest"))
			dropped = dropped || (n.Code == offsets.CodeDropped && strings.Contains(n.Message, "deleted and created again"))
		}
	}
	if !recreated || !dropped || batches(evs)[0].Redelivered {
		t.Errorf("recreated event %v, dropped event %v; want both and no redelivery: %s", recreated, dropped, describe(evs))
	}
	// The next run knows the new id: no event again.
	h.kc.ProduceN(topic, 0, 2, 10)
	for _, ev := range runWithin(t, cfg, time.Minute) {
		if n, ok := ev.(*Notice); ok && n.Code == offsets.CodeRecreated {
			t.Errorf("the recreation was reported again: %s", n.Message)
		}
	}
}

// recreate deletes topic and creates it again with partitions partitions,
// and makes the test cluster's producer forget the old topic's id.
func recreate(t *testing.T, h *harness, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.kc.Admin().DeleteTopics(ctx, topic); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := h.kc.Admin().CreateTopic(ctx, partitions, 1, nil, topic)
		if err == nil && resp.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create %s again: %v %v", topic, err, resp.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.kc.Client().PurgeTopicsFromClient(topic)
}

// TestTopicRecreatedWhileRunning: a topic deleted and created again under
// a running stream. Before, the fetch at the old position was out of
// range, the leader-epoch check took the new log's end for a truncation
// by an unclean election, and the new topic's records below it were
// skipped as "data loss"; with the new topic already past the old
// position the fetch even went on there with no word. The stream now
// notices the new topic id (a lookup after out of range, or the metadata
// refresh), says so, and reads every partition of the new topic from its
// log start; the move is stored at once with the new id, so a restart
// goes on from there without reporting the recreation again.
func TestTopicRecreatedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int // records produced to each new partition
	}{{"fewer records than read", 3}, {"more records than read", 9}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			topic := h.kc.Topic("recreated-live", 2)
			p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
			h.kc.ProduceN(topic, 0, 5, 10)
			h.kc.ProduceN(topic, 1, 5, 10)
			st := h.openStore()
			defer st.Close()
			cfg := h.config(st, topic)
			cfg.Reset = offsets.ResetEarliest
			s, _, err := Start(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var evs []Event
			seen := map[offsets.Partition]int64{}
			inNew := map[offsets.Partition]bool{} // a range marked topic-recreated came
			readTo := func(want int64, done func() bool) {
				t.Helper()
				timeout := time.After(30 * time.Second)
				for !done() {
					select {
					case ev, ok := <-s.Events():
						if !ok {
							t.Fatalf("stream ended: %s", describe(evs))
						}
						evs = append(evs, ev)
						if b, ok := ev.(*BatchEvent); ok {
							for _, r := range b.Batch.Ranges {
								seen[r.Partition] = r.Until
								inNew[r.Partition] = inNew[r.Partition] || r.Jump == offsets.CodeRecreated
							}
						}
					case <-timeout:
						t.Fatalf("no batch up to %d on both partitions: %s", want, describe(evs))
					}
				}
			}
			readTo(5, func() bool { return seen[p0] == 5 && seen[p1] == 5 })
			first := len(batches(evs))

			recreate(t, h, topic, 2)
			h.kc.ProduceN(topic, 0, tc.after, 10)
			h.kc.ProduceN(topic, 1, tc.after, 10)
			// With more records than read, the old position may read some
			// of the new topic before the refresh sees its id: those are
			// delivered twice, none is skipped.
			readTo(int64(tc.after), func() bool {
				return inNew[p0] && inNew[p1] && seen[p0] == int64(tc.after) && seen[p1] == int64(tc.after)
			})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, e := range notices(evs, offsets.CodeDataLoss) {
				t.Errorf("a recreated topic was reported as data loss: %s", e.Message)
			}
			for _, p := range []offsets.Partition{p0, p1} {
				// The new topic's records, every one: a range from its
				// log start, marked as the jump it is.
				var from int64 = -1
				var records int64
				for _, b := range batches(evs)[first:] {
					for _, r := range b.Ranges {
						if r.Partition != p {
							continue
						}
						if r.Jump == offsets.CodeRecreated {
							from, records = r.From, 0
						}
						if from >= 0 {
							records += r.Records
						}
					}
				}
				if from != 0 || records != int64(tc.after) {
					t.Errorf("%s: after the recreation read from %d, %d records, want all %d from 0: %s", p, from, records, tc.after, describe(evs))
				}
			}

			// A restart goes on where the new topic was acked, quietly.
			h.kc.ProduceN(topic, 0, 2, 10)
			cfg.UntilEnd = true
			evs = runWithin(t, cfg, time.Minute)
			if n := notices(evs, offsets.CodeRecreated); len(n) > 0 {
				t.Errorf("the restart reported the recreation again: %s", n[0].Message)
			}
			if from, until, _ := covered(t, batches(evs), p0); from != int64(tc.after) || until != int64(tc.after)+2 {
				t.Errorf("restart read %s [%d, %d), want [%d, %d): %s", p0, from, until, tc.after, tc.after+2, describe(evs))
			}
		})
	}
}
