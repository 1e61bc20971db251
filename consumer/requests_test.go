package consumer

import (
	"context"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Starting a stream over many partitions led by several brokers looks up
// offsets with one request per broker and bound (earliest, latest), not
// one per partition.
func TestStartLooksUpOffsetsOncePerBroker(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 60, 1, nil, "wide"); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	perBroker := map[int32]int{}
	fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		perBroker[fake.CurrentNode()]++
		mu.Unlock()
		return nil, nil, false
	})

	cc := kafka.ClientConfig{Brokers: fake.ListenAddrs()}
	client, err := kafka.DialWith(cc, kafka.Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s, started, err := Start(context.Background(), Config{Client: client, Brokers: cc.Brokers, Topics: []string{"wide"}, Name: "wide", Reset: offsets.ResetEarliest})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(started.Starts) != 60 {
		t.Fatalf("%d partitions started, want 60", len(started.Starts))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(perBroker) != 3 {
		t.Fatalf("ListOffsets went to brokers %v, want all three leaders", perBroker)
	}
	for id, n := range perBroker {
		if n != 2 {
			t.Errorf("broker %d got %d ListOffsets requests for its 20 partitions, want 2 (earliest, latest)", id, n)
		}
	}
}
