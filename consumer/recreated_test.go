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
