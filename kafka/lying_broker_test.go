package kafka

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Answers beyond Fetch that no honest broker gives: each is an error that
// names what the broker said, never a position kbatch would read from or
// store.

// listAnswering starts a broker of topic "events" (one partition) whose
// ListOffsets answers come from list, and dials it.
func listAnswering(t *testing.T, list testkafka.ListAnswer) *Client {
	t.Helper()
	fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
	fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		return testkafka.AnswerListOffsets(req.(*kmsg.ListOffsetsRequest), list), nil, true
	})
	c, err := Dial(ClientConfig{Brokers: fake.ListenAddrs()})
	return closedAtEnd(t, c, err)
}

// A log start or high watermark below 0, or a log start above the high
// watermark, are bounds no log has: a stream started on them stored -5 as
// a position (and then refused its own store) or reset "earliest" to a log
// start past the end.
func TestImpossibleBoundsAreAnError(t *testing.T) {
	p := offsets.Partition{Topic: "events", Partition: 0}
	for name, b := range map[string]offsets.Bounds{
		"negative":        {LogStart: -5, HighWatermark: -3},
		"negative start":  {LogStart: -2, HighWatermark: 10},
		"start above end": {LogStart: 20, HighWatermark: 10},
	} {
		t.Run(name, func(t *testing.T) {
			c := listAnswering(t, func(sp *kmsg.ListOffsetsResponseTopicPartition, ts int64) {
				sp.Offset = b.HighWatermark
				if ts == -2 {
					sp.Offset = b.LogStart
				}
			})
			got, err := ListBounds(c, []offsets.Partition{p})
			var ib *ImpossibleBoundsError
			if !errors.As(err, &ib) || ib.Bounds != b || ib.Partition != p {
				t.Fatalf("bounds %v, error %v; want an ImpossibleBoundsError of %s with %+v", got, err, p, b)
			}
			t.Log(err)
		})
	}
}

// A timestamp lookup answers -1 when no record is that recent; any other
// negative offset is no record's.
func TestImpossibleOffsetForATimeIsAnError(t *testing.T) {
	p := offsets.Partition{Topic: "events", Partition: 0}
	c := listAnswering(t, func(sp *kmsg.ListOffsetsResponseTopicPartition, _ int64) { sp.Offset = -7 })
	got, err := ListOffsetsForTimes(c, map[offsets.Partition]time.Time{p: time.UnixMilli(1000)})
	if err == nil || !strings.Contains(err.Error(), "offset -7") {
		t.Fatalf("offsets %v, error %v; want an error naming offset -7", got, err)
	}
	c = listAnswering(t, func(sp *kmsg.ListOffsetsResponseTopicPartition, _ int64) { sp.Offset = -1 })
	if got, err := ListOffsetsForTimes(c, map[offsets.Partition]time.Time{p: time.UnixMilli(1000)}); err != nil || got[p] != -1 {
		t.Errorf("offsets %v, error %v; want -1 (no record at or after the time)", got, err)
	}
}

// A Fetch answer throttled for 2^31-1 ms (24 days): the throttle is
// kbatch's to wait out, at most the client's limit, and a longer one is a
// ThrottleError naming the broker and what it asked; the next fetch is
// answered.
func TestHugeThrottleIsCappedAndNamed(t *testing.T) {
	fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
	answered := 0
	fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		answered++
		resp := testkafka.AnswerFetch(req.(*kmsg.FetchRequest), func(sp *kmsg.FetchResponseTopicPartition, _ int64) {})
		if answered == 1 {
			resp.ThrottleMillis = 1<<31 - 1
			resp.Topics = nil // a throttled answer leaves the partitions out
		}
		return resp, nil, true
	})
	c, err := DialWith(ClientConfig{Brokers: fake.ListenAddrs()}, Tuning{RequestTimeout: 2 * time.Second, MaxThrottle: 3 * time.Second})
	c = closedAtEnd(t, c, err)
	p := offsets.Partition{Topic: "events", Partition: 0}
	fetch := func() *FetchResponse {
		t.Helper()
		req := NewFetchRequest(c.FetchOptions(), 1<<20)
		req.Add(p, 0, 1<<20)
		resp, err := c.FetchLeader(p, req)
		if err != nil {
			t.Fatalf("fetch %d: %v", answered+1, err)
		}
		return resp
	}
	resp := fetch()
	wait, err := resp.Throttle()
	var te *ThrottleError
	if !errors.As(err, &te) || wait != 3*time.Second || te.Asked != (1<<31-1)*time.Millisecond || te.Broker != 0 {
		t.Fatalf("throttle %s, %v; want 3s (the limit) and a ThrottleError of broker 0 asking 2^31-1 ms", wait, err)
	}
	t.Log(err)
	if resp.Partition(p) != nil {
		t.Error("the throttled answer has the partition")
	}
	if resp = fetch(); resp.Partition(p) == nil {
		t.Error("the answer after the throttled one lacks the partition")
	}
	if wait, err := resp.Throttle(); wait != 0 || err != nil {
		t.Errorf("an answer without a throttle: %s, %v", wait, err)
	}
}

// A metadata answer naming as a partition's leader a broker it does not
// list is no leader kbatch can ask; sarama says only that the partition is
// in a leadership election. The error names the missing broker and the
// ones listed, and is no longer than sarama's after the lookup's retries.
func TestLeaderNotAmongTheBrokersIsNamed(t *testing.T) {
	fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
	host, port, err := net.SplitHostPort(fake.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	portNum, _ := strconv.Atoi(port)
	fake.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: host, Port: int32(portNum)}}
		resp.ControllerID = 0
		topic := kmsg.NewMetadataResponseTopic()
		topic.Topic = kmsg.StringPtr("events")
		part := kmsg.NewMetadataResponseTopicPartition()
		part.Leader, part.Replicas, part.ISR = 99, []int32{99}, []int32{99}
		topic.Partitions = []kmsg.MetadataResponseTopicPartition{part}
		resp.Topics = []kmsg.MetadataResponseTopic{topic}
		return resp, nil, true
	})
	c, err := Dial(ClientConfig{Brokers: fake.ListenAddrs(), FailFast: true})
	c = closedAtEnd(t, c, err)
	_, err = ListBounds(c, []offsets.Partition{{Topic: "events", Partition: 0}})
	want := "leader of events[0]: the cluster's metadata names broker 99 as its leader but lists no broker 99 (it lists 0)"
	if err == nil || err.Error() != want {
		t.Fatalf("ListBounds: %v; want %q", err, want)
	}
}
