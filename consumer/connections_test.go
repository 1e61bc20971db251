package consumer

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A live stream of two topics led by three brokers holds at most two
// connections to each broker while it reads: one for its metadata,
// offsets and other requests, one for its fetches. The connections made
// to start (to the bootstrap address, for the fetch client's first
// metadata) are closed once they are idle, and reading on does not open
// more.
func TestStreamHoldsTwoConnectionsPerBroker(t *testing.T) {
	const clientID = "conn-count"
	kc, count := testkafka.Counted(t, 3)
	h := &harness{t: t, kc: kc, store: filepath.Join(t.TempDir(), "offsets.db")}
	topics := []string{kc.Topic("conns-a", 3), kc.Topic("conns-b", 3)}
	produce := func() {
		for _, topic := range topics {
			for p := int32(0); p < 3; p++ {
				kc.ProduceN(topic, p, 20, 100)
			}
		}
	}
	produce()

	client, err := kafka.DialWith(kafka.ClientConfig{Brokers: kc.Brokers, ClientID: clientID}, kafka.Tuning{MaxWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st := h.openStore()
	cfg := h.config(st, topics...)
	cfg.Client = client
	var explicit []offsets.Spec
	for _, topic := range topics {
		for _, p := range []string{":0=0", ":1=0", ":2=0"} {
			explicit = append(explicit, spec(t, topic+p))
		}
	}
	cfg.Explicit = explicit
	s := start(t, cfg)
	t.Cleanup(func() {
		_ = s.Close()
		_ = st.Close()
		_ = client.Close()
	})

	delivered := map[offsets.Partition]int64{}
	await := func(until int64) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			done := true
			for _, topic := range topics {
				for p := int32(0); p < 3; p++ {
					if delivered[offsets.Partition{Topic: topic, Partition: p}] < until {
						done = false
					}
				}
			}
			if done {
				return
			}
			select {
			case ev := <-s.Events():
				if b, ok := ev.(*BatchEvent); ok {
					for _, r := range b.Batch.Ranges {
						delivered[r.Partition] = max(delivered[r.Partition], r.Until)
					}
				}
			case <-deadline:
				t.Fatalf("not every partition delivered up to %d: %v", until, delivered)
			}
		}
	}
	await(20)
	t.Logf("connections opened to start: %v", count.Opened(clientID))

	// The connections made to start are closed once idle: wait for
	// that, as long as the stream goes on reading.
	atMostTwo := func() bool {
		for _, n := range count.Open(clientID) {
			if n > 2 {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(60 * time.Second)
	for !atMostTwo() {
		if time.Now().After(deadline) {
			t.Fatalf("connections open per broker while the stream reads: %v, want at most 2 to each", count.Open(clientID))
		}
		select {
		case <-s.Events():
		case <-time.After(100 * time.Millisecond):
		}
	}

	produce()
	await(40)
	open := count.Open(clientID)
	for _, topic := range topics {
		for p := int32(0); p < 3; p++ {
			leader, err := client.Leader(offsets.Partition{Topic: topic, Partition: p})
			if err != nil {
				t.Fatal(err)
			}
			if open[leader.Addr] == 0 {
				t.Errorf("no connection open to broker %s, which leads %s/%d: %v", leader.Addr, topic, p, open)
			}
		}
	}
	for b, n := range open {
		if n > 2 {
			t.Errorf("broker %s: %d connections open after reading on, want at most 2", b, n)
		}
	}
	t.Logf("connections open while reading: %v; opened in all: %v", open, count.Opened(clientID))
}
