package kafka

import (
	"errors"
	"math"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A fetch asked under the topic's id (Fetch v13) reads the topic, its
// answer named by id and read under the topic's name. After the topic is
// deleted and created again, the same fetch is refused with
// ErrUnknownTopicID rather than served the new topic's records at the old
// topic's offsets (without the id, a stream reads the new topic as the
// old one until its next metadata refresh). A request
// with a topic asked without an id goes by names, as on older brokers.
func TestFetchUnderTheTopicID(t *testing.T) {
	kc := testkafka.New(t)
	if v := kc.FetchMaxVersion(); v < 13 {
		t.Skipf("the broker serves Fetch v%d at most; topic ids came in v13 (Kafka 3.1)", v)
	}
	topic := kc.Topic("by-id", 1)
	kc.ProduceN(topic, 0, 5, 10)
	c := dialCluster(t, kc)
	ids, err := TopicIDs(c, []string{topic})
	if err != nil || ids[topic] == "" {
		t.Fatalf("topic id: %v %v", ids, err)
	}
	old := ParseTopicID(ids[topic])
	p := offsets.Partition{Topic: topic, Partition: 0}
	fetch := func(id TopicID, pos int64) (*FetchResponse, *PartitionAnswer) {
		t.Helper()
		req := NewFetchRequest(c.FetchOptions(), 1<<20)
		req.AddChecked(p, pos, 1<<20, -1, id)
		if err := c.RefreshMetadata(topic); err != nil {
			t.Fatal(err)
		}
		resp, err := c.FetchLeader(p, req)
		if err != nil {
			t.Fatal(err)
		}
		a := resp.Partition(p)
		if a == nil {
			t.Fatalf("the answer (v%d) has no part for %s", resp.r.Version, p)
		}
		return resp, a
	}

	resp, a := fetch(old, 0)
	if resp.r.Version < 13 || a.Err != nil {
		t.Fatalf("fetch under the id: version %d, error %v; want v13 or later, no error", resp.r.Version, a.Err)
	}
	if blk, err := a.Decode(p, 0, math.MaxInt64, false); err != nil || len(blk.Msgs) != 5 {
		t.Fatalf("decoded %d records (%v), want 5", len(blk.Msgs), err)
	}

	kc.Recreate(topic, 1)
	kc.ProduceN(topic, 0, 9, 10)
	resp, a = fetch(old, 5)
	if !errors.Is(a.Err, ErrUnknownTopicID) || !Retriable(a.Err) {
		t.Fatalf("fetch under the old id after the topic was created again: v%d, error %v; want %v, retriable", resp.r.Version, a.Err, ErrUnknownTopicID)
	}
	if blk, _ := a.Decode(p, 5, math.MaxInt64, false); len(blk.Msgs) != 0 {
		t.Fatalf("the old id's fetch got %d records of the new topic", len(blk.Msgs))
	}

	// Without an id: by name (v12), the new topic's records.
	resp, a = fetch(TopicID{}, 5)
	if resp.r.Version != 12 || a.Err != nil {
		t.Fatalf("fetch without an id: version %d, error %v; want v12, no error", resp.r.Version, a.Err)
	}
	if blk, err := a.Decode(p, 5, math.MaxInt64, false); err != nil || len(blk.Msgs) != 4 {
		t.Fatalf("decoded %d records (%v) of the new topic from 5, want 4", len(blk.Msgs), err)
	}
}

// The request's version follows its ids: any topic asked without one (or
// under two) makes it go by names.
func TestFetchRequestVersionFollowsIDs(t *testing.T) {
	id1, id2 := ParseTopicID("0123456789abcdef0123456789abcdef"), ParseTopicID("fedcba9876543210fedcba9876543210")
	if id1 == (TopicID{}) || id2 == (TopicID{}) {
		t.Fatal("ParseTopicID refused a well-formed id")
	}
	for _, s := range []string{"", "0123", "0123456789abcdef0123456789abcdeg", "0123456789abcdef0123456789abcdef00"} {
		if ParseTopicID(s) != (TopicID{}) {
			t.Errorf("ParseTopicID(%q) is not the zero id", s)
		}
	}
	a0, a1 := offsets.Partition{Topic: "a", Partition: 0}, offsets.Partition{Topic: "a", Partition: 1}
	b0 := offsets.Partition{Topic: "b", Partition: 0}
	for _, tc := range []struct {
		name string
		add  func(*FetchRequest)
		want int16
	}{
		{"every topic with its id", func(r *FetchRequest) {
			r.AddChecked(a0, 0, 1, -1, id1)
			r.AddChecked(a1, 0, 1, -1, id1)
			r.AddChecked(b0, 0, 1, -1, id2)
		}, 13},
		{"one topic without", func(r *FetchRequest) {
			r.AddChecked(a0, 0, 1, -1, id1)
			r.Add(b0, 0, 1)
		}, 12},
		{"one topic under two ids", func(r *FetchRequest) {
			r.AddChecked(a0, 0, 1, -1, id1)
			r.AddChecked(a1, 0, 1, -1, id2)
		}, 12},
		{"nothing asked", func(*FetchRequest) {}, 12},
	} {
		r := NewFetchRequest(FetchOptions{Version: 12}, 1<<20)
		tc.add(r)
		if got := r.maxVersion(); got != tc.want {
			t.Errorf("%s: max version %d, want %d", tc.name, got, tc.want)
		}
	}
}
