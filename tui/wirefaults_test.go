package tui

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/internal/faultproxy"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// probeKey is a key press stamped with the time it was sent.
type probeKey struct {
	key string
	at  time.Time
}

// keyProbe wraps the real model in the real program and measures, for
// each probeKey, how long until the program drew the screen after it
// (the key was taken) and until the stream's answer was on the screen
// (space: paused or resumed).
type keyProbe struct {
	m *Model

	mu              sync.Mutex
	sent            time.Time
	viewDue, ansDue bool
	views, answers  []time.Duration
}

func (p *keyProbe) Init() tea.Cmd { return p.m.Init() }

func (p *keyProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	p.mu.Lock()
	switch k := msg.(type) {
	case probeKey:
		p.sent, p.viewDue, p.ansDue = k.at, true, true
		msg = keyMsg(k.key)
	case controlDoneMsg:
		if p.ansDue {
			p.ansDue = false
			p.answers = append(p.answers, time.Since(p.sent))
		}
	}
	p.mu.Unlock()
	_, cmd := p.m.Update(msg)
	return p, cmd
}

func (p *keyProbe) View() tea.View {
	v := p.m.View()
	p.mu.Lock()
	if p.viewDue {
		p.viewDue = false
		p.views = append(p.views, time.Since(p.sent))
	}
	p.mu.Unlock()
	return v
}

func (p *keyProbe) counts() (views, answers int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.views), len(p.answers)
}

// take returns and forgets the measurements so far.
func (p *keyProbe) take() (views, answers []time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	views, answers = p.views, p.answers
	p.views, p.answers = nil, nil
	return views, answers
}

// The screen stays responsive during faults on the wire.
// The real program runs over a real stream from a kfake broker whose
// connections pass through internal/faultproxy; in each fault, space
// (pause / resume, a command to the stream's loop) is pressed 6 times and
// every press must be taken and answered, and the stream must go on
// delivering the records produced meanwhile. The times are logged (go
// test -v -run TestKeysAnswerDuringWireFaults ./tui), not asserted.
func TestKeysAnswerDuringWireFaults(t *testing.T) {
	if testkafka.Real() {
		t.Skip("wraps kfake's listeners: kfake only")
	}
	var mu sync.Mutex
	var wires []*faultproxy.Listener
	kc := testkafka.NewWith(t, kfake.NumBrokers(1), kfake.ListenFn(func(network, addr string) (net.Listener, error) {
		l, err := net.Listen(network, addr)
		if err != nil {
			return nil, err
		}
		w := faultproxy.Wrap(l)
		mu.Lock()
		wires = append(wires, w)
		mu.Unlock()
		return w, nil
	}))
	each := func(f func(*faultproxy.Listener)) {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range wires {
			f(w)
		}
	}
	set := func(f faultproxy.Faults) { each(func(w *faultproxy.Listener) { w.Set(f) }) }
	topic := kc.Topic("keys", 2)
	cc := kafka.ClientConfig{Brokers: kc.Brokers}
	// A black hole lasts until the network timeout (30 s in kbatch).
	client, err := kafka.DialWith(cc, kafka.Tuning{MaxWait: 100 * time.Millisecond, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s, _, err := consumer.Start(context.Background(), consumer.Config{Client: client, Brokers: kc.Brokers,
		Topics: []string{topic}, Name: "keys", Interval: 200 * time.Millisecond, Samples: 3,
		Reset: offsets.ResetEarliest, MetadataInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The events reach the model through a tap that counts records.
	tap := &tapStream{Stream: s, out: make(chan consumer.Event, 64)}
	go tap.run()
	m := New(tap, s, Options{Name: "keys", Interval: 200 * time.Millisecond})
	defer m.Close()
	p := &keyProbe{m: m}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(120, 40))
	defer func() {
		set(faultproxy.Faults{})
		tm.Send(keyMsg("ctrl+c"))
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(30*time.Second))
		_ = s.Close()
	}()

	produced := int64(0)
	produce := func() {
		for part := int32(0); part < 2; part++ {
			kc.ProduceN(topic, part, 50, 200)
		}
		produced += 100
	}
	awaitRecords := func(what string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for tap.records() < produced {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d of %d records delivered after 90s", what, tap.records(), produced)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	press := func(what string, n int) {
		t.Helper()
		for i := range n {
			v0, a0 := p.counts()
			tm.Send(probeKey{key: "space", at: time.Now()})
			deadline := time.Now().Add(30 * time.Second)
			for {
				if v, a := p.counts(); v > v0 && a > a0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: press %d not answered after 30s", what, i)
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(150 * time.Millisecond)
		}
	}
	produce()
	awaitRecords("start")
	p.take()
	type phase struct {
		name  string
		start func() (stop func())
	}
	resets := func() func() {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(300 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					each(func(w *faultproxy.Listener) { w.Reset() })
				}
			}
		})
		return func() { close(done); wg.Wait() }
	}
	faults := func(f faultproxy.Faults) func() func() {
		return func() func() { set(f); return func() { set(faultproxy.Faults{}) } }
	}
	for _, ph := range []phase{
		{"no fault", faults(faultproxy.Faults{})},
		{"latency 200ms", faults(faultproxy.Faults{Latency: 200 * time.Millisecond})},
		{"bandwidth 10 KiB/s", faults(faultproxy.Faults{BytesPerSecond: 10 << 10})},
		{"slow broker (2s per answer)", faults(faultproxy.Faults{Latency: 2 * time.Second})},
		{"resets every 300ms", resets},
		{"black hole", faults(faultproxy.Faults{BlackHole: true})},
	} {
		produce() // before the fault: the test's producer uses the same wire
		stop := ph.start()
		time.Sleep(time.Second) // the fault bites: fetches in flight meet it
		press(ph.name, 6)
		stop()
		awaitRecords(ph.name)
		views, answers := p.take()
		t.Logf("%-28s screen after a key: %s; pause/resume on screen: %s", ph.name, spread(views), spread(answers))
	}
	if got := tap.records(); got != produced {
		t.Errorf("delivered %d records, produced %d", got, produced)
	}
}

// spread is "median m, max x (n)" of ds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("median %s, max %s (%d)", s[len(s)/2].Round(10*time.Microsecond), s[len(s)-1].Round(10*time.Microsecond), len(s))
}

// tapStream passes a stream's events on and counts the records of acked
// batches.
type tapStream struct {
	*consumer.Stream
	out chan consumer.Event
	mu  sync.Mutex
	n   int64
	ids map[uint64]bool
}

func (s *tapStream) Events() <-chan consumer.Event { return s.out }

func (s *tapStream) run() {
	defer close(s.out)
	for ev := range s.Stream.Events() {
		if b, ok := ev.(*consumer.BatchEvent); ok && b.Batch.State == offsets.StateAcked {
			s.mu.Lock()
			if s.ids == nil {
				s.ids = map[uint64]bool{}
			}
			if !s.ids[b.Batch.ID] {
				s.ids[b.Batch.ID] = true
				s.n += b.Batch.Records
			}
			s.mu.Unlock()
		}
		s.out <- ev
	}
}

func (s *tapStream) records() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
