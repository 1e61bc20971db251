package consumer

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A broker whose Fetch answer asks for a wait of 2^31-1 ms (24 days)
// before the next fetch was not heard: no event said so. The stream waits
// at most its limit (kafka.MaxThrottle), says it in one broker-error
// event naming the broker's throttle, and reads every record once.
func TestHugeThrottleIsABrokerErrorAndReadingGoesOn(t *testing.T) {
	if testkafka.Real() {
		t.Skip("scripts kfake's Fetch answers")
	}
	h := newHarness(t)
	topic := h.topicWith("throttled", 10, 20, 20)
	throttled := false
	h.kc.Fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		h.kc.Fake.KeepControl()
		if throttled {
			return nil, nil, false
		}
		throttled = true
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ThrottleMillis = 1<<31 - 1 // and every partition left out
		return resp, nil, true
	})
	c, err := kafka.DialWith(kafka.ClientConfig{Brokers: h.kc.Brokers}, kafka.Tuning{MaxWait: 50 * time.Millisecond, MaxThrottle: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	cfg := h.config(nil, topic)
	cfg.Client, cfg.Reset, cfg.UntilEnd = c, offsets.ResetEarliest, true
	s := start(t, cfg)
	defer s.Close()
	var bs []*Batch
	reported := 0
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *Notice:
				if ev.Code == offsets.CodeBrokerError {
					t.Log(ev.Message)
					if strings.Contains(ev.Message, "throttle_time_ms 2147483647") {
						reported++
					}
				}
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Ended:
				if reported == 0 {
					t.Error("no broker-error event names the broker's throttle")
				}
				for p := int32(0); p < 2; p++ {
					if from, until, n := covered(t, bs, offsets.Partition{Topic: topic, Partition: p}); from != 0 || until != 20 || n != 20 {
						t.Errorf("%s[%d]: [%d, %d) with %d records, want [0, 20) with 20", topic, p, from, until, n)
					}
				}
				return
			}
		case <-deadline:
			t.Fatalf("no end after 60s: %d batches, %d throttle reports", len(bs), reported)
		}
	}
}
