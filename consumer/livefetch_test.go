package consumer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// TestLiveFetchesWaitForBytes: while partitions have a backlog the stream
// fetches with a minimum of 1 byte (the broker answers at once), and once
// every partition is at its high watermark it asks the broker to wait for
// liveMinBytes (or MaxWait): with a minimum of 1 byte, live traffic of
// 5,000 records/s over 50 partitions came in 84 answers a second of
// about one record per partition, which was most of the TUI's CPU.
func TestLiveFetchesWaitForBytes(t *testing.T) {
	if testkafka.Real() {
		t.Skip("reads the fetch requests a broker receives: kfake only")
	}
	h := newHarness(t)
	topic := h.kc.Topic("live", 2)
	h.kc.ProduceN(topic, 0, 500, 20)
	h.kc.ProduceN(topic, 1, 500, 20)

	var mu sync.Mutex
	var minBytes []int32
	h.kc.Fake.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		h.kc.Fake.KeepControl()
		mu.Lock()
		minBytes = append(minBytes, kreq.(*kmsg.FetchRequest).MinBytes)
		mu.Unlock()
		return nil, nil, false
	})
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got int64
	deadline := time.After(30 * time.Second)
	for got < 1000 {
		select {
		case ev := <-s.Events():
			if b, ok := ev.(*BatchEvent); ok {
				for _, r := range b.Batch.Ranges {
					got += r.Records
				}
			}
		case <-deadline:
			t.Fatalf("%d of 1000 records after 30s", got)
		}
	}
	// Caught up: the next fetches long-poll with the live minimum.
	for {
		mu.Lock()
		n := len(minBytes)
		last := minBytes[n-1]
		first := minBytes[0]
		mu.Unlock()
		if first != 1 {
			t.Fatalf("the first fetch, with a backlog, asked a minimum of %d bytes, want 1", first)
		}
		if last == liveMinBytes {
			return
		}
		select {
		case ev := <-s.Events():
			_ = ev
		case <-deadline:
			t.Fatalf("no fetch with a minimum of %d bytes after catching up; minimums asked: %v", liveMinBytes, minBytes)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
