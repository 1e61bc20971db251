package consumer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// runWithin is run with a deadline: a stream that has not ended by then is
// closed and the test fails, so a hang is a failure, not a stuck test.
func runWithin(t *testing.T, cfg Config, d time.Duration) []Event {
	t.Helper()
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	var evs []Event
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				_ = s.Close()
				return evs
			}
			evs = append(evs, ev)
		case <-deadline:
			_ = s.Close()
			for range s.Events() {
			}
			t.Fatalf("the stream did not end within %s; events so far: %s", d, describe(evs))
		}
	}
}

// describe lists batches and notices, for failure messages.
func describe(evs []Event) string {
	var sb strings.Builder
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *BatchEvent:
			fmt.Fprintf(&sb, "\n  batch %d %s redelivered=%v", ev.Batch.ID, ev.Batch.State, ev.Batch.Redelivered)
			for _, r := range ev.Batch.Ranges {
				fmt.Fprintf(&sb, " %s (%d records) jump=%q", r.Range, r.Records, r.Jump)
			}
		case *Notice:
			fmt.Fprintf(&sb, "\n  %s: %s", ev.Code, ev.Message)
		case *Ended:
			fmt.Fprintf(&sb, "\n  end %s %v", ev.Reason, ev.Err)
		}
	}
	return sb.String()
}

// docs/design.md §2.5: an explicit offset below the log start
// is data loss. Reading goes on at the log start (what still exists), not
// per --reset; the event says how many offsets were lost, and the first
// batch is marked as a jump.
func TestDataLossAtStartReadsFromTheLogStart(t *testing.T) {
	h := newHarness(t)
	topic := h.topicWith("expiring", 20, 300)
	h.kc.DeleteRecords(topic, 0, 100)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetLatest
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=20")}
	cfg.UntilEnd = true
	evs := runWithin(t, cfg, time.Minute)
	st := evs[0].(*Started).Starts[0]
	if st.NextOffset != 100 {
		t.Errorf("start %+v, want 100 (the log start)", st)
	}
	loss := notices(evs, offsets.CodeDataLoss)
	if len(loss) != 1 || loss[0].Expected != 20 || loss[0].LogStart != 100 || loss[0].Lost != 80 || loss[0].To != 100 {
		t.Fatalf("data-loss events %+v, want one: expected 20, log start 100, 80 lost, continuing at 100", loss)
	}
	bs := batches(evs)
	if len(bs) == 0 {
		t.Fatalf("no batch; events:%s", describe(evs))
	}
	if r := bs[0].Ranges[0]; r.From != 100 || r.Jump != offsets.CodeDataLoss || !bs[0].Jumped() {
		t.Fatalf("first batch %+v, want it to start at 100 marked data-loss", r)
	}
	if f, u, n := covered(t, bs, p0); f != 100 || u != 300 || n != 200 {
		t.Errorf("read [%d,%d) %d records, want [100,300) 200", f, u, n)
	}
}

// A batch planned and never acked; retention then moves the
// log start into or past its range. The restart re-delivers the batch with
// its planned ranges and reports the loss once; the batch after it never
// claims deleted offsets: when the log start is past the planned range, it
// starts at the log start, marked as data loss.
func TestRedeliveryAfterRetentionMarksTheLoss(t *testing.T) {
	for _, tc := range []struct {
		name          string
		logStart      int64
		redelivered   int64 // records in the re-delivered [0,100)
		nextFrom      int64
		nextJump      string
		lost          int64
		wantNextBatch bool
	}{
		{name: "past the range", logStart: 150, redelivered: 0, nextFrom: 150, nextJump: offsets.CodeDataLoss, lost: 150},
		{name: "inside the range", logStart: 40, redelivered: 60, nextFrom: 100, nextJump: "", lost: 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			topic := h.topicWith("events", 20, 300)
			p0 := offsets.Partition{Topic: topic, Partition: 0}
			st := h.storeClosedAtEnd()
			seedStore(t, h, st, []string{topic}, map[offsets.Partition]int64{p0: 0}, planned(p0, 0, 100))
			h.kc.DeleteRecords(topic, 0, tc.logStart)
			cfg := h.config(st, topic)
			cfg.Reset = offsets.ResetLatest
			cfg.UntilEnd = true
			evs := runWithin(t, cfg, time.Minute)
			bs := batches(evs)
			if len(bs) < 2 {
				t.Fatalf("%d batches, want the re-delivered one and one after it; events:%s", len(bs), describe(evs))
			}
			if r := bs[0].Ranges[0]; bs[0].ID != 1 || !bs[0].Redelivered || r.From != 0 || r.Until != 100 || r.Records != tc.redelivered {
				t.Fatalf("first batch %d %+v (redelivered %v), want batch 1 [0,100) again with %d records", bs[0].ID, r, bs[0].Redelivered, tc.redelivered)
			}
			if r := bs[1].Ranges[0]; r.From != tc.nextFrom || r.Jump != tc.nextJump {
				t.Fatalf("batch after the re-delivery %+v, want from %d marked %q; events:%s", r, tc.nextFrom, tc.nextJump, describe(evs))
			}
			if _, u, _ := covered(t, bs, p0); u != 300 {
				t.Errorf("read up to %d, want 300", u)
			}
			loss := notices(evs, offsets.CodeDataLoss)
			if len(loss) != 1 || loss[0].Expected != 0 || loss[0].LogStart != tc.logStart || loss[0].Lost != tc.lost {
				t.Fatalf("data-loss events %+v, want one: expected 0, log start %d, %d lost", loss, tc.logStart, tc.lost)
			}
		})
	}
}

// Data loss at start, across a crash: it stores the log start
// as the position; when the stream stops before its first batch, the next
// start still marks that batch as a data-loss jump (the store keeps why
// the position moved until a range from it is acked). A start that moves
// a stored position with -o marks its first range as a reset.
func TestStartJumpsSurviveARestartBeforeTheFirstBatch(t *testing.T) {
	h := newHarness(t)
	topic := h.topicWith("expiring", 20, 300)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	st := h.storeClosedAtEnd()
	seedStore(t, h, st, []string{topic}, map[offsets.Partition]int64{p0: 20})
	h.kc.DeleteRecords(topic, 0, 100)
	cfg := h.config(st, topic)
	cfg.Interval, cfg.MaxPerPartition = time.Hour, 1_000_000 // no batch before the stop
	s := start(t, cfg)
	_ = s.Close()
	var evs []Event
	for ev := range s.Events() {
		evs = append(evs, ev)
	}
	if bs := batches(evs); len(bs) != 0 {
		t.Fatalf("the first run cut a batch: %s", describe(evs))
	}
	if info, _, _ := st.Stream("test"); info.Next[p0] != 100 || info.Moved[p0] != offsets.CodeDataLoss {
		t.Fatalf("stored %d, moved %v; want 100 (the log start) marked data-loss", info.Next[p0], info.Moved)
	}

	cfg = h.config(st, topic)
	cfg.MaxBatches = 1
	bs := batches(runWithin(t, cfg, time.Minute))
	if r := bs[0].Ranges[0]; r.From != 100 || r.Jump != offsets.CodeDataLoss {
		t.Fatalf("first batch after the restart %+v, want from 100 marked data-loss", r)
	}
	if info, _, _ := st.Stream("test"); info.Moved != nil {
		t.Fatalf("moved %v after the ack, want none", info.Moved)
	}

	// -o moves the stored position: the first range says reset.
	cfg = h.config(st, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=150")}
	cfg.MaxBatches = 1
	bs = batches(runWithin(t, cfg, time.Minute))
	if r := bs[0].Ranges[0]; r.From != 150 || r.Jump != offsets.CodeReset {
		t.Fatalf("first batch after -o %+v, want from 150 marked reset", r)
	}
}

// KIP-320: after an unclean leader election the new leader's log is
// shorter than what the stream read, and new records are then written at
// the offsets the stream had read past. A stream that went on at its
// position would silently read the new history from there: the new
// records below its position never read, and what it had read there gone
// without a word. The first fetch after the
// leader changed checks the record before the position against the leader
// epoch it was read in; the stream reports data loss for [divergence,
// position) and reads on at the divergence point.
//
// kfake has no unclean election; the topic is deleted and created again
// instead, which to a reader that knows no topic ids (topicIDs below)
// looks the same: the first 60 records again (the part of the log the
// stale replica had, in the same leader epoch), then, after a leader
// election, 70 records that replace the old 60..99 and go on past the
// stream's position 100.
func TestTruncatedLogIsDataLossAndReadFromTheDivergence(t *testing.T) {
	for _, failStop := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail-on-data-loss=%v", failStop), func(t *testing.T) {
			testTruncation(t, failStop)
		})
	}
}

func testTruncation(t *testing.T, failStop bool) {
	if testkafka.Real() {
		t.Skip("deletes and re-creates a topic to truncate its log: kfake only")
	}
	// A recreated topic has a new id, and the stream reads it from its
	// start (onRecreated); an unclean election keeps the id. So the
	// stream is told no ids here.
	topicIDs = func(*kafka.Client, []string) (map[string]string, error) { return nil, nil }
	t.Cleanup(func() { topicIDs = kafka.TopicIDs })
	h := newBrokersHarness(t, 1)
	topic := h.kc.Topic("unclean", 1)
	p := offsets.Partition{Topic: topic, Partition: 0}
	old := func(i int) *testkafka.Record {
		return &testkafka.Record{Topic: topic, Partition: 0, Value: fmt.Appendf(nil, "old-%d", i)}
	}
	var recs []*testkafka.Record
	for i := range 100 {
		recs = append(recs, old(i))
	}
	h.kc.Produce(recs...)

	var mu sync.Mutex
	got := map[int64][]string{} // offset -> values delivered, in order
	var order []int64
	cfg := h.config(nil, topic)
	cfg.Explicit = []offsets.Spec{spec(t, topic+":0=0")}
	cfg.FailOnDataLoss = failStop
	cfg.Processor = procFunc(func(_ *Batch, rs []*record.Record) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range rs {
			got[r.Offset] = append(got[r.Offset], string(r.Value))
			order = append(order, r.Offset)
		}
	})
	s := start(t, cfg)
	defer s.Close()
	var bs []*Batch
	var losses []offsets.Event
	var end *Ended
	truncated := false
	deadline := time.After(60 * time.Second)
	for end == nil {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Notice:
				if ev.Code == offsets.CodeDataLoss || ev.Code == offsets.CodeOutOfRange {
					losses = append(losses, ev.Event)
				}
			case *Ended:
				end = ev
			}
		case <-deadline:
			_, until, n := covered(t, bs, p)
			t.Fatalf("after 60s: read to %d (%d records), events %+v", until, n, losses)
		}
		if _, until, _ := covered(t, bs, p); until >= 100 && !truncated {
			truncated = true
			// Paused while the log is rebuilt: the stream sees the new
			// leader's log whole, as after an election.
			if err := s.Pause(p); err != nil {
				t.Fatal(err)
			}
			if _, err := h.kc.Admin().DeleteTopics(context.Background(), topic); err != nil {
				t.Fatal(err)
			}
			waitGone(t, h, topic)
			if _, err := h.kc.Admin().CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			// A new producer: the set-up client keeps the old topic id.
			pc, err := kgo.NewClient(kgo.SeedBrokers(h.kc.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			produce := func(rs ...*testkafka.Record) {
				for _, r := range rs {
					r.Offset = 0
				}
				if err := pc.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
					t.Fatalf("produce: %v", err)
				}
			}
			produce(recs[:60]...)
			h.lead(topic, 0, 0) // the unclean election: a new leader epoch
			var fresh []*testkafka.Record
			for i := 60; i < 130; i++ {
				fresh = append(fresh, &testkafka.Record{Topic: topic, Partition: 0, Value: fmt.Appendf(nil, "new-%d", i)})
			}
			produce(fresh...)
			if err := s.Resume(p); err != nil {
				t.Fatal(err)
			}
		}
		if failStop || len(losses) == 0 {
			continue
		}
		if _, until, _ := covered(t, bs, p); until >= 130 {
			break
		}
	}

	if len(losses) != 1 {
		t.Fatalf("loss events %+v, want one data-loss", losses)
	}
	e := losses[0]
	if e.Code != offsets.CodeDataLoss || e.Expected != 100 || e.Lost != 40 || e.Partition != 0 {
		t.Fatalf("event %+v, want data-loss expected 100, lost 40", e)
	}
	if failStop {
		if end == nil || end.Err == nil {
			t.Fatalf("ended %+v, want the stream to stop with --fail-on-data-loss", end)
		}
		return
	}
	if e.To != 60 {
		t.Fatalf("event %+v, want reading on at 60", e)
	}
	mu.Lock()
	defer mu.Unlock()
	for off := int64(0); off < 130; off++ {
		vs := got[off]
		want := []string{fmt.Sprintf("old-%d", off)}
		switch {
		case off >= 100:
			want = []string{fmt.Sprintf("new-%d", off)}
		case off >= 60:
			want = []string{fmt.Sprintf("old-%d", off), fmt.Sprintf("new-%d", off)}
		}
		if fmt.Sprint(vs) != fmt.Sprint(want) {
			t.Errorf("offset %d delivered %q, want %q (the old history up to 100, the new from 60 on after the event)", off, vs, want)
		}
	}
	// The range after the event starts at 60, marked as data loss.
	jumped := false
	for _, b := range bs {
		for _, r := range b.Ranges {
			if r.From == 60 && r.Jump == offsets.CodeDataLoss {
				jumped = true
			}
		}
	}
	if !jumped {
		t.Errorf("no range starts at 60 marked data-loss: %+v", bs)
	}
}

func waitGone(t *testing.T, h *harness, topic string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		md, err := h.kc.Admin().Metadata(context.Background(), topic)
		if err == nil {
			if td, ok := md.Topics[topic]; !ok || td.Err != nil {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("topic %s still there after 10s", topic)
}
