package replay

import (
	"reflect"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

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
