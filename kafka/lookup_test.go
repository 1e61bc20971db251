package kafka

import (
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Offset lookups wait out a leader failover. Found on a real 3-broker
// cluster (issue 16): kbatch started a few seconds after a leader was
// SIGKILLed, before the cluster fenced it, and exited with "list offsets
// from broker …: connection refused" after five attempts (about 2 s). Here
// the leader answers NOT_LEADER_OR_FOLLOWER to the first eight ListOffsets
// requests, more than the old five attempts, and the lookup must still
// succeed.
func TestListBoundsWaitsOutALeaderFailover(t *testing.T) {
	if testkafka.Real() {
		t.Skip("injects errors into kfake")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("failover", 1)
	kc.ProduceN(topic, 0, 7, 10)
	var failed atomic.Int32
	kc.Fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.Fake.KeepControl()
		if failed.Load() >= 8 {
			return nil, nil, false
		}
		failed.Add(1)
		r := req.(*kmsg.ListOffsetsRequest)
		resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = 6 // NOT_LEADER_OR_FOLLOWER
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	c, err := Dial(ClientConfig{Brokers: kc.Brokers})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := offsets.Partition{Topic: topic, Partition: 0}
	b, err := ListBounds(c, []offsets.Partition{p})
	if err != nil {
		t.Fatalf("ListBounds after %d refused lookups: %v", failed.Load(), err)
	}
	if got := b[p]; got.LogStart != 0 || got.HighWatermark != 7 {
		t.Errorf("bounds %+v, want [0, 7)", got)
	}
}
