package consumer

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kbatch-dev/kbatch/internal/faultproxy"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// wireStream is a stream of a 2-partition topic read from offset 0 on a
// kfake broker whose connections pass through faultproxy, with what its
// batches delivered so far.
type wireStream struct {
	t        *testing.T
	wires    *faultproxy.Group
	kc       *testkafka.Cluster
	s        *Stream
	topic    string
	manual   bool // every batch is acked by await (--manual-ack)
	bs       []*Batch
	seen     map[uint64]bool
	produced int64
}

const wireParts = 2

// newWireStream starts the stream (kfake only); a black hole ends only in the network
// timeout, 2 s here to keep the test short. It is closed when the test
// ends.
func newWireStream(t *testing.T, name string, manualAck bool) *wireStream {
	t.Helper()
	w := &wireStream{t: t, wires: &faultproxy.Group{}, manual: manualAck, seen: map[uint64]bool{}}
	w.kc = testkafka.NewWith(t, kfake.NumBrokers(1), kfake.ListenFn(w.wires.Listen))
	h := &harness{t: t, kc: w.kc, store: filepath.Join(t.TempDir(), "offsets.db")}
	w.topic = w.kc.Topic(name, wireParts)
	cc := kafka.ClientConfig{Brokers: w.kc.Brokers}
	client, err := kafka.DialWith(cc, kafka.Tuning{MaxWait: 50 * time.Millisecond, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := h.openStore()
	cfg := h.config(st, w.topic)
	cfg.Client = client
	cfg.ManualAck = manualAck
	cfg.Explicit = []offsets.Spec{spec(t, w.topic+":0=0"), spec(t, w.topic+":1=0")}
	w.s = start(t, cfg)
	t.Cleanup(func() {
		// Cleared, or closing the client waits for a black hole.
		w.wires.Set(faultproxy.Faults{})
		_ = w.s.Close()
		_ = st.Close()
		_ = client.Close()
	})
	return w
}

// produce writes n records of size bytes to each partition.
func (w *wireStream) produce(n, size int) {
	for p := int32(0); p < wireParts; p++ {
		w.kc.ProduceN(w.topic, p, n, size)
	}
	w.produced += int64(n)
}

// await reads events until every partition's batches reach produced and,
// when wantError is set, a broker-error event came (then onError runs
// once) and a reconnected one. With manual acks it acks each batch (a
// key that must answer) and keeps it; else it keeps each acked batch.
func (w *wireStream) await(what string, wantError bool, onError func()) {
	t := w.t
	t.Helper()
	errs, reconnected := 0, 0
	start := time.Now()
	deadline := time.After(60 * time.Second)
	for {
		done := true
		for p := int32(0); p < wireParts; p++ {
			if _, until, _ := covered(t, w.bs, offsets.Partition{Topic: w.topic, Partition: p}); until != w.produced {
				done = false
			}
		}
		if done && (!wantError || (errs > 0 && reconnected > 0)) {
			t.Logf("%s: delivered up to %d on each partition in %s; %d broker errors, %d reconnected", what, w.produced, time.Since(start).Round(time.Millisecond), errs, reconnected)
			return
		}
		select {
		case ev := <-w.s.Events():
			switch ev := ev.(type) {
			case *BatchEvent:
				if w.seen[ev.Batch.ID] || (!w.manual && ev.Batch.State != offsets.StateAcked) {
					continue // the same batch again (its state changed), or not acked yet
				}
				w.seen[ev.Batch.ID] = true
				w.bs = append(w.bs, ev.Batch)
				if w.manual {
					answers(t, what+": ack", func() error { return w.s.Ack(ev.Batch.ID) })
				}
			case *Notice:
				t.Logf("%s: %s %s", what, ev.Code, ev.Message)
				switch ev.Code {
				case offsets.CodeBrokerError:
					errs++
					if onError != nil {
						onError()
						onError = nil
					}
				case offsets.CodeReconnected:
					reconnected++
				case offsets.CodeDataLoss, offsets.CodeOutOfRange:
					t.Fatalf("%s: %s: %s", what, ev.Code, ev.Message)
				}
			case *Ended:
				t.Fatalf("%s: ended: %+v", what, ev)
			}
		case <-deadline:
			var stacks bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			w.wires.Set(faultproxy.Faults{})
			t.Fatalf("%s: after 60s: %d broker errors, %d reconnected, not every partition delivered up to %d\n%s", what, errs, reconnected, w.produced, stacks.String())
		}
	}
}

// checkWhole fails the test unless every partition's batches cover
// [0, produced) with produced records: no offset lost.
func (w *wireStream) checkWhole() {
	for p := int32(0); p < wireParts; p++ {
		part := offsets.Partition{Topic: w.topic, Partition: p}
		from, until, n := covered(w.t, w.bs, part)
		w.t.Logf("%s: [%d,%d) with %d records, produced %d, lost %d", part, from, until, n, w.produced, w.produced-n)
		if from != 0 || until != w.produced || n != w.produced {
			w.t.Errorf("%s covered [%d,%d) with %d records, want [0,%d) with %d", part, from, until, n, w.produced, w.produced)
		}
	}
}

// Faults on the wire between kbatch and the broker
// (latency, a bandwidth cap, a black hole). In each,
// the stream recovers by itself, keys answer (acks, pause and resume
// return), the events say what is wrong where the fetches fail (broker
// error, then reconnected), and no offset is lost: every partition's
// batches cover [0, produced) contiguously.
func TestStreamRecoversFromWireFaults(t *testing.T) {
	if testkafka.Real() {
		t.Skip("wraps kfake's listeners: kfake only")
	}
	w := newWireStream(t, "wire", true)
	w.produce(50, 200)
	w.wires.Set(faultproxy.Faults{Latency: 100 * time.Millisecond})
	w.await("latency 100ms", false, nil)
	w.wires.Set(faultproxy.Faults{})

	w.wires.Set(faultproxy.Faults{BytesPerSecond: 20 << 10})
	w.produce(50, 200)
	w.await("bandwidth 20 KiB/s", false, nil)
	w.wires.Set(faultproxy.Faults{})

	w.produce(50, 200)
	w.wires.Set(faultproxy.Faults{BlackHole: true})
	w.await("black hole", true, func() {
		answers(t, "black hole: pause", w.s.PauseAll)
		answers(t, "black hole: resume", w.s.ResumeAll)
		w.wires.Set(faultproxy.Faults{})
	})

	if err := w.s.Close(); err != nil {
		t.Fatal(err)
	}
	w.checkWhole()
}

// A connection reset before a black hole: the black hole must still give
// a broker-error event. Each round resets every connection of the broker
// (the stream must report it and read on), then black-holes the wire
// (the stream must report that within the network timeout, 2 s here,
// and read on once it is cleared); no offset lost.
func TestStreamReportsABlackHoleAfterAReset(t *testing.T) {
	if testkafka.Real() {
		t.Skip("wraps kfake's listeners: kfake only")
	}
	w := newWireStream(t, "reset", false)
	w.produce(20, 100)
	w.await("start", false, nil)
	for round := range 4 {
		w.produce(20, 100)
		n := w.wires.Reset()
		t.Logf("round %d: reset %d connections", round, n)
		w.await(fmt.Sprintf("round %d: reset", round), false, nil)
		w.produce(20, 100)
		w.wires.Set(faultproxy.Faults{BlackHole: true})
		w.await(fmt.Sprintf("round %d: black hole", round), true, func() { w.wires.Set(faultproxy.Faults{}) })
	}
	w.checkWhole()
}
