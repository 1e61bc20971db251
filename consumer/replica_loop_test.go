package consumer

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Two brokers that each name the other as the partition's preferred read
// replica (KIP-392; only a leader names one) passed the partition back
// and forth at the network's pace, reading nothing and saying nothing:
// 214,000 fetches in 5 s. The replica that names another is a broker
// error, reported once, and the leader's choice of it is followed after a
// wait that grows; once the brokers answer with records, they are read,
// with a reconnected event.
func TestReplicasNamingEachOtherAreABrokerError(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	const lies = 6 // fetches answered with the other broker as the replica
	var fetches atomic.Int64
	fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		lying, other := fetches.Add(1) <= lies, 1-fake.CurrentNode()
		return testkafka.AnswerFetch(req.(*kmsg.FetchRequest), func(sp *kmsg.FetchResponseTopicPartition, offset int64) {
			sp.HighWatermark, sp.LastStableOffset = 10, 10
			if lying {
				sp.PreferredReadReplica = other
				return
			}
			for o := max(offset, 0); o < 10; o++ {
				sp.RecordBatches = append(sp.RecordBatches, testkafka.At(o, o, o).Encode()...)
			}
		}), nil, true
	})
	fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		return testkafka.AnswerListOffsets(req.(*kmsg.ListOffsetsRequest), func(sp *kmsg.ListOffsetsResponseTopicPartition, ts int64) {
			sp.Offset, sp.LeaderEpoch = 10, 0
			if ts == -2 {
				sp.Offset = 0
			}
		}), nil, true
	})
	cc := kafka.ClientConfig{Brokers: fake.ListenAddrs()}
	cfg := Config{Client: dial(t, cc), Brokers: cc.Brokers, Topics: []string{"t"}, Name: "test", Reset: offsets.ResetEarliest,
		Interval: 50 * time.Millisecond, Samples: 3, IdleDone: 300 * time.Millisecond, MetadataInterval: 200 * time.Millisecond}
	s := start(t, cfg)
	defer s.Close()
	p := offsets.Partition{Topic: "t", Partition: 0}
	var bs []*Batch
	var reports []string
	reconnected := false
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *Notice:
				switch ev.Code {
				case offsets.CodeBrokerError:
					reports = append(reports, ev.Message)
				case offsets.CodeReconnected:
					reconnected = true
				}
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			t.Fatalf("after 30s: %d fetches, broker-error events %q", fetches.Load(), reports)
		}
		if _, until, _ := covered(t, bs, p); until == 10 {
			break
		}
	}
	if len(reports) != 1 || !strings.Contains(reports[0], "the preferred read replica, names broker") {
		t.Errorf("broker-error events %q, want one naming the replica that names another", reports)
	}
	if !reconnected {
		t.Error("no reconnected event once records came")
	}
	if from, until, n := covered(t, bs, p); from != 0 || until != 10 || n != 10 {
		t.Errorf("t[0]: [%d, %d) with %d records, want [0, 10) with 10", from, until, n)
	}
}
