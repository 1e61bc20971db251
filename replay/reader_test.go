package replay

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// mockClient returns a client of a kfake broker that leads partition
// t[0], says t's cleanup.policy is policy ("" for an error answer), has
// log start 6 and high watermark 10 by ListOffsets, and answers fetches
// with the given answers in turn (the last one repeats). Broker behaviour
// that kfake and a real cluster do not show on demand (compacted gaps, a
// lagging high watermark, retention moving the log start mid-read, empty
// answers from tiered storage) is scripted so.
func mockClient(t *testing.T, policy string, answers ...answer) *kafka.Client {
	t.Helper()
	var mu sync.Mutex
	fake, err := testkafka.NewScriptedWith("t", 1,
		func(sp *kmsg.FetchResponseTopicPartition, offset int64) {
			mu.Lock()
			a := answers[0]
			if len(answers) > 1 {
				answers = answers[1:]
			}
			mu.Unlock()
			sp.ErrorCode = a.err
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = a.hwm, a.hwm, 0
			for _, o := range a.offs {
				if o >= offset {
					sp.RecordBatches = append(sp.RecordBatches, testkafka.At(o, o, o).Encode()...)
				}
			}
		},
		func(sp *kmsg.ListOffsetsResponseTopicPartition, timestamp int64) {
			sp.Offset = 10
			if timestamp == -2 {
				sp.Offset = 6
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	fake.ControlKey(int16(kmsg.DescribeConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		req := kreq.(*kmsg.DescribeConfigsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
		if policy == "" {
			res.ErrorCode = kerr.TopicAuthorizationFailed.Code
		} else {
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			c.Name, c.Value = "cleanup.policy", kmsg.StringPtr(policy)
			res.Configs = append(res.Configs, c)
		}
		resp.Resources = append(resp.Resources, res)
		return resp, nil, true
	})
	cc := kafka.ClientConfig{Brokers: fake.ListenAddrs()}
	c, err := kafka.DialWith(cc, kafka.Tuning{NoMetadataRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// answer is one fetch answer of mockClient: records at offs (from the
// offset asked), high watermark hwm, and a partition error (a Kafka
// error code, 0 for none).
type answer struct {
	hwm  int64
	offs []int64
	err  int16
}

func fetchAnswer(_ *testing.T, hwm int64, offs ...int64) answer { return answer{hwm: hwm, offs: offs} }

func readAll(t *testing.T, c *kafka.Client, from, until int64) ([]int64, []chunk, error) {
	t.Helper()
	rd := newReader(c, 1<<20, newBuffered(16<<20))
	rd.attempts, rd.backoff = 5, time.Millisecond
	var offs []int64
	var chunks []chunk
	task := Task{Read: offsets.Range{Partition: tp, From: from, Until: until}}
	err := rd.read(context.Background(), 0, task, func(c chunk) error {
		rd.buffer.release(c.mem)
		for _, m := range c.msgs {
			offs = append(offs, m.Offset)
		}
		c.msgs = nil
		chunks = append(chunks, c)
		return nil
	})
	return offs, chunks, err
}

// TestReadEndsOnTrailingGap: offsets 7..9 of a compacted topic hold no
// record, so the fetch from 7 comes back empty with the high watermark at
// 10; the read must end at 10 rather than wait for a record that never
// comes. When the cleanup policy cannot be read, compaction is assumed.
func TestReadEndsOnTrailingGap(t *testing.T) {
	for _, policy := range []string{"compact", "compact,delete", ""} {
		c := mockClient(t, policy, fetchAnswer(t, 10, 0, 1, 2, 5, 6))
		offs, chunks, err := readAll(t, c, 0, 10)
		if err != nil {
			t.Fatalf("policy %q: %v", policy, err)
		}
		if !reflect.DeepEqual(offs, []int64{0, 1, 2, 5, 6}) {
			t.Errorf("policy %q: offsets %v", policy, offs)
		}
		if last := chunks[len(chunks)-1]; last.next != 10 {
			t.Errorf("policy %q: ended at %d, want 10", policy, last.next)
		}
	}
}

// TestReadEmptyAnswerNotCompacted: on a topic that is not compacted an
// empty answer below the end proves nothing (tiered storage answers empty
// when a remote read is slow): the read fetches again and gets the rest,
// and an answer that stays empty is a failure, not an early end.
func TestReadEmptyAnswerNotCompacted(t *testing.T) {
	c := mockClient(t, "delete", fetchAnswer(t, 10, 0, 1, 2), fetchAnswer(t, 10), fetchAnswer(t, 10, 3, 4, 5, 6, 7, 8, 9))
	offs, _, err := readAll(t, c, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offs, seq(0, 10)) {
		t.Errorf("offsets %v, want 0..9", offs)
	}

	c = mockClient(t, "delete", fetchAnswer(t, 10, 0, 1, 2), fetchAnswer(t, 10))
	offs, _, err = readAll(t, c, 0, 10)
	if err == nil || !strings.Contains(err.Error(), "no record batch for offsets 3 → 10") {
		t.Fatalf("read %v, err %v; want a failure naming offsets 3 → 10", offs, err)
	}
}

// TestReadWaitsForLaggingEnd: a new leader can answer with a high
// watermark below the range for a moment; the read waits, then ends.
func TestReadWaitsForLaggingEnd(t *testing.T) {
	c := mockClient(t, "compact", fetchAnswer(t, 3, 0, 1, 2), fetchAnswer(t, 3), fetchAnswer(t, 5, 3))
	offs, chunks, err := readAll(t, c, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offs, []int64{0, 1, 2, 3}) || chunks[len(chunks)-1].next != 5 {
		t.Errorf("offsets %v, chunks %+v", offs, chunks)
	}
}

// TestReadLogStartMovesDuringRead: retention deletes offsets 3..5 while
// the read is at 3; they are reported missing and the read goes on at the
// new log start (6, from the ListOffsets answer).
func TestReadLogStartMovesDuringRead(t *testing.T) {
	gone := answer{err: kerr.OffsetOutOfRange.Code}
	c := mockClient(t, "delete", fetchAnswer(t, 10, 0, 1, 2), gone, fetchAnswer(t, 10, 6, 7, 8, 9))
	offs, chunks, err := readAll(t, c, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offs, []int64{0, 1, 2, 6, 7, 8, 9}) {
		t.Errorf("offsets %v", offs)
	}
	var missing []offsets.Range
	for _, c := range chunks {
		if c.missing != nil {
			missing = append(missing, *c.missing)
		}
	}
	want := []offsets.Range{{Partition: tp, From: 3, Until: 6}}
	if !reflect.DeepEqual(missing, want) {
		t.Errorf("missing %v, want %v", missing, want)
	}
}

// TestReadFailsOnLastingError: an error that does not go away ends the
// read with an error naming the partition, instead of hanging.
func TestReadFailsOnLastingError(t *testing.T) {
	bad := answer{err: kerr.TopicAuthorizationFailed.Code}
	c := mockClient(t, "delete", bad)
	_, _, err := readAll(t, c, 0, 10)
	if err == nil || !strings.Contains(err.Error(), "t[0]") {
		t.Fatalf("err %v, want a failure naming t[0]", err)
	}
}

// KIP-320: replay's fetches carry the partition's
// leader epoch. With metadata from before two leader elections, the
// broker answers FENCED_LEADER_EPOCH; replay refreshes its metadata and
// reads every record with the current epoch. A fetch carrying -1 would
// let the broker skip the check.
func TestReplayFetchCarriesLeaderEpoch(t *testing.T) {
	if testkafka.Real() {
		t.Skip("moves leader epochs: kfake only")
	}
	tc := testkafka.New(t)
	topic := tc.Topic("replay-epochs", 1)
	tc.ProduceN(topic, 0, 100, 10)
	client := dialTest(t, tc, false)
	leader, stale, err := client.LeaderEpoch(offsets.Partition{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // elections that keep the leader: the epoch moves on
		if err := tc.Fake.MoveTopicPartition(topic, 0, leader.ID); err != nil {
			t.Fatal(err)
		}
	}
	id := tc.TopicID(topic) // Fetch v13 names the topic by id only
	var mu sync.Mutex
	seen := map[int32]int{}
	tc.Fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		tc.Fake.KeepControl()
		for _, rt := range req.(*kmsg.FetchRequest).Topics {
			for _, rp := range rt.Partitions {
				if rt.Topic == topic || rt.TopicID == id {
					mu.Lock()
					seen[rp.CurrentLeaderEpoch]++
					mu.Unlock()
				}
			}
		}
		return nil, nil, false
	})
	sink, _, err := replayRanges(t, client, topic+":0:0-100")
	if err != nil {
		t.Fatal(err)
	}
	if got := sink.byPartition()[0]; !reflect.DeepEqual(got, seq(0, 100)) {
		t.Fatalf("offsets %v, want 0..99", got)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("fetches by leader epoch: %v (metadata said %d before the elections)", seen, stale)
	if seen[-1] > 0 || seen[stale] == 0 || seen[stale+2] == 0 {
		t.Errorf("fetches by leader epoch %v, want the stale epoch %d (fenced), then %d, never -1", seen, stale, stale+2)
	}
}
