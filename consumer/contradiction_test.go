package consumer

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A broker that answers OFFSET_OUT_OF_RANGE to a fetch at an offset its
// ListOffsets says the log holds, again and again: the stream read on at
// once after each lookup, a fetch and two lookups at the network's pace,
// for ever and without a word. The second contradiction in a row is a
// broker-error event naming both answers, and the partition is asked again
// after a wait that grows; the other partition is read whole.
func TestOutOfRangeInsideTheBoundsIsABrokerError(t *testing.T) {
	var fetches0 atomic.Int64
	fake, err := testkafka.NewScriptedWith("t", 2,
		func(sp *kmsg.FetchResponseTopicPartition, offset int64) {
			sp.HighWatermark, sp.LastStableOffset = 10, 10
			if sp.Partition == 0 {
				fetches0.Add(1)
				sp.ErrorCode = 1 // OFFSET_OUT_OF_RANGE
				return
			}
			for o := max(offset, 0); o < 10; o++ {
				sp.RecordBatches = append(sp.RecordBatches, testkafka.At(o, o, o).Encode()...)
			}
		},
		func(sp *kmsg.ListOffsetsResponseTopicPartition, timestamp int64) {
			sp.Offset, sp.LeaderEpoch = 10, 0
			if timestamp == -2 {
				sp.Offset = 0
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	cc := kafka.ClientConfig{Brokers: fake.ListenAddrs()}
	cfg := Config{Client: dial(t, cc), Brokers: cc.Brokers, Topics: []string{"t"}, Name: "test", Reset: offsets.ResetEarliest,
		Interval: 50 * time.Millisecond, Samples: 3, IdleDone: 300 * time.Millisecond, MetadataInterval: 200 * time.Millisecond}
	s := start(t, cfg)
	defer s.Close()
	var bs []*Batch
	var reports []string
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *Notice:
				if ev.Code == offsets.CodeBrokerError && ev.Partition == 0 {
					reports = append(reports, ev.Message)
				}
				if ev.Code == offsets.CodeOutOfRange || ev.Code == offsets.CodeDataLoss {
					t.Fatalf("an offset inside the bounds taken for out of range: %s", ev.Message)
				}
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			t.Fatalf("after 30s: %d fetches of t[0], broker-error events %q", fetches0.Load(), reports)
		}
		if _, until, _ := covered(t, bs, offsets.Partition{Topic: "t", Partition: 1}); until == 10 && len(reports) > 0 {
			break
		}
	}
	t.Log(reports[0])
	if !strings.Contains(reports[0], "t[0]") || !strings.Contains(reports[0], "out of range") || !strings.Contains(reports[0], "0 to 10") {
		t.Errorf("broker-error event %q, want it to name t[0], the out-of-range answer and the bounds 0 to 10", reports[0])
	}
	if len(reports) != 1 {
		t.Errorf("%d broker-error events for one streak: %q", len(reports), reports)
	}
}
