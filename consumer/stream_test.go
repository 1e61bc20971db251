package consumer

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// harness is one test's cluster, client and store file.
type harness struct {
	t     *testing.T
	kc    *testkafka.Cluster
	store string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{t: t, kc: testkafka.New(t), store: filepath.Join(t.TempDir(), "offsets.db")}
}

func (h *harness) client() *kafka.Client {
	h.t.Helper()
	cc := kafka.ClientConfig{Brokers: h.kc.Brokers}
	c, err := kafka.DialWith(cc, kafka.Tuning{MaxWait: 50 * time.Millisecond})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (h *harness) openStore() *offsets.Store {
	h.t.Helper()
	st, err := offsets.Open(h.store, offsets.OpenOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// config is a fast-cutting configuration over topics with the store.
func (h *harness) config(st *offsets.Store, topics ...string) Config {
	cfg := Config{Client: h.client(), Brokers: h.kc.Brokers, Topics: topics, Name: "test",
		Interval: 50 * time.Millisecond, Samples: 3, IdleDone: 300 * time.Millisecond, MetadataInterval: 200 * time.Millisecond}
	if st != nil {
		cfg.Store = st
	}
	return cfg
}

// run starts a stream and collects every event until it ends.
func run(t *testing.T, cfg Config) []Event {
	t.Helper()
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	var evs []Event
	for ev := range s.Events() {
		evs = append(evs, ev)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return evs
}

func batches(evs []Event) []*Batch {
	var out []*Batch
	for _, ev := range evs {
		if b, ok := ev.(*BatchEvent); ok {
			out = append(out, b.Batch)
		}
	}
	return out
}

func notices(evs []Event, code string) []offsets.Event {
	var out []offsets.Event
	for _, ev := range evs {
		if n, ok := ev.(*Notice); ok && n.Code == code {
			out = append(out, n.Event)
		}
	}
	return out
}

func ended(t *testing.T, evs []Event) *Ended {
	t.Helper()
	e, ok := evs[len(evs)-1].(*Ended)
	if !ok {
		t.Fatalf("last event is %T, not *Ended", evs[len(evs)-1])
	}
	return e
}

// covered merges a partition's ranges over batches and checks contiguity.
func covered(t *testing.T, bs []*Batch, p offsets.Partition) (from, until, records int64) {
	t.Helper()
	from, until = -1, -1
	for _, b := range bs {
		for _, r := range b.Ranges {
			if r.Partition != p {
				continue
			}
			if until >= 0 && r.From != until && r.Jump == "" {
				t.Fatalf("%s: batch %d starts at %d, previous ended at %d, no jump marked", p, b.ID, r.From, until)
			}
			if from < 0 {
				from = r.From
			}
			until = r.Until
			records += r.Records
		}
	}
	return from, until, records
}

func spec(t *testing.T, s string) offsets.Spec {
	t.Helper()
	sp, err := offsets.ParseSpec(s, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestExplicitOffsetsThenStored(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 2)
	h.kc.ProduceN(topic, 0, 300, 50)
	h.kc.ProduceN(topic, 1, 400, 50)
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}

	st := h.openStore()
	cfg := h.config(st, topic)
	cfg.UntilEnd = true
	cfg.MaxPerPartition = 70
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=50"), spec(t, topic+":1=120")}
	evs := run(t, cfg)
	if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
		t.Fatalf("ended %+v", e)
	}
	start := evs[0].(*Started)
	for _, s := range start.Starts {
		if s.Source != offsets.SourceExplicit {
			t.Errorf("%s source %s, want explicit", s.Partition, s.Source)
		}
	}
	bs := batches(evs)
	if f, u, n := covered(t, bs, p0); f != 50 || u != 300 || n != 250 {
		t.Errorf("p0 covered [%d,%d) %d records, want [50,300) 250", f, u, n)
	}
	if f, u, n := covered(t, bs, p1); f != 120 || u != 400 || n != 280 {
		t.Errorf("p1 covered [%d,%d) %d records, want [120,400) 280", f, u, n)
	}
	for _, b := range bs {
		for _, r := range b.Ranges {
			if r.Records > 70 {
				t.Errorf("batch %d %s has %d records > max-per-partition 70", b.ID, r.Partition, r.Records)
			}
		}
		if b.State != offsets.StateAcked {
			t.Errorf("batch %d state %s", b.ID, b.State)
		}
	}
	st.Close()

	// A second run resumes from the store.
	h.kc.ProduceN(topic, 0, 10, 50)
	st = h.openStore()
	defer st.Close()
	cfg = h.config(st, topic)
	cfg.UntilEnd = true
	evs = run(t, cfg)
	for _, s := range evs[0].(*Started).Starts {
		want := map[int32]int64{0: 300, 1: 400}[s.Partition.Partition]
		if s.Source != offsets.SourceStored || s.NextOffset != want {
			t.Errorf("restart %s at %d (%s), want %d (stored)", s.Partition, s.NextOffset, s.Source, want)
		}
	}
	bs = batches(evs)
	if f, u, n := covered(t, bs, p0); f != 300 || u != 310 || n != 10 {
		t.Errorf("second run p0 [%d,%d) %d, want [300,310) 10", f, u, n)
	}
	if id := bs[0].ID; id <= 1 {
		t.Errorf("second run's first batch id %d, want ids to continue", id)
	}
}

func TestExplicitForOnePartitionOthersReset(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 2)
	h.kc.ProduceN(topic, 0, 100, 20)
	h.kc.ProduceN(topic, 1, 100, 20)
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetLatest
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=90")}
	cfg.UntilEnd = true
	evs := run(t, cfg)
	starts := evs[0].(*Started).Starts
	if starts[0].Source != offsets.SourceExplicit || starts[0].NextOffset != 90 {
		t.Errorf("p0 start %+v", starts[0])
	}
	if starts[1].Source != offsets.SourceResetLatest || starts[1].NextOffset != 100 {
		t.Errorf("p1 start %+v, want 100 reset-latest", starts[1])
	}
	bs := batches(evs)
	if _, _, n := covered(t, bs, offsets.Partition{Topic: topic, Partition: 1}); n != 0 {
		t.Errorf("p1 read %d records, want 0", n)
	}
}

// failOnce fails processing of the first batch it sees, like a kill
// between planned and acked.
type failOnce struct {
	mu     sync.Mutex
	failed bool
	seen   []*Batch
}

func (f *failOnce) Process(_ context.Context, b *Batch, _ []*record.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, b)
	if !f.failed {
		f.failed = true
		return errors.New("simulated crash")
	}
	return nil
}

func TestPlannedBatchIsRedelivered(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 2)
	h.kc.ProduceN(topic, 0, 50, 20)
	h.kc.ProduceN(topic, 1, 30, 20)
	st := h.openStore()
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.MaxPerPartition = 20
	f := &failOnce{}
	cfg.Processor = f
	evs := run(t, cfg)
	if e := ended(t, evs); e.Err == nil {
		t.Fatalf("first run should end with the processing error, got %+v", e)
	}
	first := f.seen[0]
	pend, err := st.Pending("test")
	if err != nil || pend == nil || pend.ID != first.ID {
		t.Fatalf("pending %+v, %v", pend, err)
	}
	st.Close()

	st = h.openStore()
	defer st.Close()
	cfg = h.config(st, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.MaxPerPartition = 20
	cfg.UntilEnd = true
	evs = run(t, cfg)
	bs := batches(evs)
	if len(bs) == 0 || !bs[0].Redelivered || bs[0].ID != first.ID {
		t.Fatalf("first batch of second run: %+v", bs[0])
	}
	if len(bs[0].Ranges) != len(first.Ranges) {
		t.Fatalf("redelivered ranges %v, want %v", bs[0].Ranges, first.Ranges)
	}
	for i, r := range bs[0].Ranges {
		if r.Range != first.Ranges[i].Range || r.Records != first.Ranges[i].Records {
			t.Errorf("redelivered range %v (%d records), want %v (%d)", r.Range, r.Records, first.Ranges[i].Range, first.Ranges[i].Records)
		}
	}
	for _, p := range []int32{0, 1} {
		want := map[int32]int64{0: 50, 1: 30}[p]
		if f, u, n := covered(t, bs, offsets.Partition{Topic: topic, Partition: p}); f != 0 || u != want || n != want {
			t.Errorf("p%d covered [%d,%d) %d records, want [0,%d) %d", p, f, u, n, want, want)
		}
	}
	for _, b := range bs[1:] {
		if b.Redelivered {
			t.Errorf("batch %d marked redelivered", b.ID)
		}
	}
}

func TestStoredBelowLogStartIsDataLoss(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 1)
	h.kc.ProduceN(topic, 0, 40, 20)
	st := h.openStore()
	cfg := h.config(st, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=10")}
	cfg.MaxBatches = 1
	cfg.MaxPerPartition = 5
	cfg.Interval = time.Minute // the batch is cut by max-per-partition alone
	evs := run(t, cfg)
	if bs := batches(evs); len(bs) != 1 || bs[0].Ranges[0].Until != 15 {
		t.Fatalf("first run batches %+v", bs[0].Ranges)
	}
	st.Close()

	h.kc.DeleteRecords(topic, 0, 30)
	st = h.openStore()
	cfg = h.config(st, topic)
	cfg.Reset = offsets.ResetLatest // data loss reads on at the log start whatever --reset says
	cfg.UntilEnd = true
	evs = run(t, cfg)
	loss := notices(evs, offsets.CodeDataLoss)
	if len(loss) != 1 || loss[0].Expected != 15 || loss[0].LogStart != 30 || loss[0].Lost != 15 || loss[0].Partition != 0 {
		t.Fatalf("data-loss notices %+v", loss)
	}
	bs := batches(evs)
	if f, u, _ := covered(t, bs, offsets.Partition{Topic: topic, Partition: 0}); f != 30 || u != 40 {
		t.Errorf("after data loss read [%d,%d), want [30,40)", f, u)
	}
	if r := bs[0].Ranges[0]; r.Jump != offsets.CodeDataLoss {
		t.Errorf("first batch after the loss %+v, want it marked data-loss", r)
	}
	st.Close()

	// --fail-on-data-loss refuses to start.
	h.kc.DeleteRecords(topic, 0, 40)
	h.kc.ProduceN(topic, 0, 5, 20)
	st = h.openStore()
	defer st.Close()
	if err := st.SetNext("test", map[offsets.Partition]int64{{Topic: topic, Partition: 0}: 35}, offsets.NewEvent(time.Now(), offsets.CodeSet, offsets.Partition{}, "test")); err != nil {
		t.Fatal(err)
	}
	cfg = h.config(st, topic)
	cfg.FailOnDataLoss = true
	_, _, err := Start(context.Background(), cfg)
	var dl *DataLossError
	if !errors.As(err, &dl) || dl.Event.Code != offsets.CodeDataLoss || dl.Event.Expected != 35 {
		t.Fatalf("start with data loss and --fail-on-data-loss: %v, want a *DataLossError for 35", err)
	}
	// The event is in the store before the stream refuses to start.
	stored, _ := st.Events("test", 1)
	if len(stored) != 1 || stored[0].Code != offsets.CodeDataLoss || stored[0].Expected != 35 {
		t.Fatalf("newest stored event %+v, want the data loss", stored)
	}
}

func TestStartAboveHighWatermarkIsReported(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 1)
	h.kc.ProduceN(topic, 0, 10, 20)
	cfg := h.config(nil, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=500")}
	cfg.UntilEnd = true
	evs := run(t, cfg)
	oor := notices(evs, offsets.CodeOutOfRange)
	if len(oor) != 1 || oor[0].Expected != 500 || oor[0].HighWatermark != 10 {
		t.Fatalf("out-of-range notices %+v", oor)
	}
}

func TestPauseAndSeek(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 2)
	h.kc.ProduceN(topic, 0, 100, 20)
	h.kc.ProduceN(topic, 1, 100, 20)
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
	st := h.openStore()
	defer st.Close()
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetLatest
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Pause(p1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seek(p0, spec(t, topic+":0=40")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seek(p0, offsets.Spec{Kind: offsets.SpecOffset, Offset: 1000}); err == nil {
		t.Error("seek beyond the high watermark accepted")
	}
	var got *Batch
	var seekSeen bool
	for ev := range s.Events() {
		switch ev := ev.(type) {
		case *Notice:
			if ev.Code == offsets.CodeSeek && ev.From == 100 && ev.To == 40 {
				seekSeen = true
			}
		case *BatchEvent:
			got = ev.Batch
		}
		if got != nil {
			break
		}
	}
	if !seekSeen {
		t.Error("no seek notice from 100 to 40")
	}
	if len(got.Ranges) != 1 || got.Ranges[0].Partition != p0 || got.Ranges[0].From != 40 || got.Ranges[0].Until != 100 || got.Ranges[0].Jump != offsets.CodeSeek {
		t.Fatalf("batch after seek %+v", got.Ranges)
	}
	// Paused partition 1 gets new records but no batch until resumed.
	h.kc.ProduceN(topic, 1, 5, 20)
	h.kc.ProduceN(topic, 0, 1, 20)
	if err := s.Resume(p1); err != nil {
		t.Fatal(err)
	}
	for ev := range s.Events() {
		if b, ok := ev.(*BatchEvent); ok {
			for _, r := range b.Batch.Ranges {
				if r.Partition == p1 {
					if r.From != 100 || r.Until != 105 {
						t.Fatalf("p1 range after resume %v", r.Range)
					}
					return
				}
			}
		}
	}
	t.Fatal("no batch for p1 after resume")
}

func TestNewPartitionStartsAtEarliest(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 1)
	cfg := h.config(nil, topic)
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h.kc.AddPartitions(topic, 2)
	h.kc.ProduceN(topic, 1, 3, 20)
	until := int64(-1)
	for ev := range s.Events() {
		b, ok := ev.(*BatchEvent)
		if !ok {
			continue
		}
		r := b.Batch.Ranges[0]
		switch {
		case r.Partition.Partition != 1:
			t.Fatalf("batch for %s, want only the new partition", r.Partition)
		case until < 0 && (r.From != 0 || r.Jump != offsets.CodeNewPartition):
			t.Fatalf("first range of the new partition %+v, want from 0 marked new-partition", r)
		case until >= 0 && r.From != until:
			t.Fatalf("range %v does not follow %d", r.Range, until)
		}
		if until = r.Until; until == 3 {
			return
		}
	}
	t.Fatal("stream ended without a batch for the new partition")
}

// TestDataLossWhileRunning deletes records the stream has not read yet:
// with manual acks nothing is acked, so the stream stops fetching after a
// bounded read-ahead well below the deletion point; after the deletion,
// acking lets it go on, and the broker reports the position out of range.
// 20000 records of 2 KiB are far more than the read-ahead (a batch's worth
// held, plus sarama's buffers and one fetch). Reading goes on at the log
// start although --reset is latest (DESIGN §2.5), and the event counts the
// offsets lost.
func TestDataLossWhileRunning(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("events", 1)
	for i := 0; i < 4; i++ {
		h.kc.ProduceN(topic, 0, 5000, 2048)
	}
	cfg := h.config(nil, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=earliest")}
	cfg.Reset = offsets.ResetLatest
	cfg.ManualAck = true
	cfg.MaxPerPartition = 500
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deleted := false
	var loss *offsets.Event
	var until int64
	for ev := range s.Events() {
		switch ev := ev.(type) {
		case *Notice:
			if ev.Code == offsets.CodeDataLoss {
				e := ev.Event
				loss = &e
			}
		case *BatchEvent:
			b := ev.Batch
			if b.State != offsets.StatePlanned {
				continue
			}
			r := b.Ranges[0]
			if !deleted {
				h.kc.DeleteRecords(topic, 0, 15000)
				deleted = true
			}
			if r.Jump == offsets.CodeDataLoss {
				if loss == nil || loss.Expected != until || loss.LogStart != 15000 || loss.To != 15000 || loss.Lost != 15000-until || loss.Partition != 0 {
					t.Fatalf("data-loss event %+v, want expected %d (where the last range ended), log start 15000, %d lost", loss, until, 15000-until)
				}
				if r.From != 15000 {
					t.Fatalf("range after data loss %+v, want from 15000", r)
				}
				return
			}
			if until != 0 && r.From != until {
				t.Fatalf("range %v does not follow %d", r.Range, until)
			}
			until = r.Until
			if until >= 15000 {
				t.Fatalf("read up to %d before the deletion took effect; the read-ahead is not bounded", until)
			}
			if err := s.Ack(b.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("stream ended")
}

// waitBatchUntil reads events until a batch takes p up to until.
func waitBatchUntil(t *testing.T, s *Stream, p offsets.Partition, until int64) {
	t.Helper()
	for ev := range s.Events() {
		if b, ok := ev.(*BatchEvent); ok {
			for _, r := range b.Batch.Ranges {
				if r.Partition == p && r.Until >= until {
					return
				}
			}
		}
	}
	t.Fatal("stream ended")
}
