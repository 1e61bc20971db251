package consumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// TestRecreatedTopicIsReported: a topic deleted and created again while
// kbatch was stopped, the new one already holding more records than the
// stored position: resuming at the old offset with no event would skip
// the new topic's first records silently. The topic id (KIP-516) tells
// the two apart: a topic-recreated event says so and how to read the new
// topic from its start, and a batch planned on the old topic is dropped.
// The stored positions are kept (a topic recreated while a stream ran has
// positions of the new topic acked under the old id; resetting them would
// deliver those twice).
func TestRecreatedTopicIsReported(t *testing.T) {
	h, topic, st, cfg := storedStream(t, "recreated", 10, 5)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	cfg.Reset, cfg.UntilEnd = offsets.ResetEarliest, true
	if _, until, _ := covered(t, batches(runWithin(t, cfg, time.Minute)), p0); until != 5 {
		t.Fatalf("first run read up to %d, want 5", until)
	}
	// A batch planned on the old topic, never acked.
	if err := st.Plan("test", offsets.Batch{ID: 2, Ranges: []offsets.BatchRange{
		{Range: offsets.Range{Partition: p0, From: 5, Until: 6}, Records: 1}}}); err != nil {
		t.Fatal(err)
	}

	h.kc.Recreate(topic, 1)
	produceNew(t, h, topic, 0, 8)

	evs := runWithin(t, cfg, time.Minute)
	from, until, records := covered(t, batches(evs), p0)
	if from != 5 || until != 8 || records != 3 {
		t.Fatalf("after the topic was created again: read [%d, %d) with %d records, want the stored position on: [5, 8): %s", from, until, records, describe(evs))
	}
	var recreated, dropped bool
	for _, ev := range evs {
		if n, ok := ev.(*Notice); ok {
			recreated = recreated || (n.Code == offsets.CodeRecreated && n.Topic == topic && strings.Contains(n.Message, "-o "+topic+"=earliest"))
			dropped = dropped || (n.Code == offsets.CodeDropped && strings.Contains(n.Message, "deleted and created again"))
		}
	}
	if !recreated || !dropped || batches(evs)[0].Redelivered {
		t.Errorf("recreated event %v, dropped event %v; want both and no redelivery: %s", recreated, dropped, describe(evs))
	}
	// The next run knows the new id: no event again.
	produceNew(t, h, topic, 0, 2)
	for _, ev := range runWithin(t, cfg, time.Minute) {
		if n, ok := ev.(*Notice); ok && n.Code == offsets.CodeRecreated {
			t.Errorf("the recreation was reported again: %s", n.Message)
		}
	}
}

// produceNew writes n records to a topic just created again, with a
// producer of its own: the test cluster's may keep the old topic's id, and
// a real broker's metadata lags its controller (UNKNOWN_TOPIC_ID), so it
// tries again with a new one.
func produceNew(t *testing.T, h *harness, topic string, partition int32, n int) {
	t.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: topic, Partition: partition, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, `{"seq":%d}`, i)}
		}
		pc, err := kgo.NewClient(kgo.SeedBrokers(h.kc.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = pc.ProduceSync(ctx, recs...).FirstErr()
		cancel()
		pc.Close()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("produce to %s created again: %v", topic, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestTopicRecreatedWhileRunning: a topic deleted and created again under
// a running stream. The fetch at the old position is out of range, and
// a leader-epoch check alone would take the new log's end for a
// truncation by an unclean election and skip the new topic's records
// below it as "data loss"; with the new topic already past the old
// position the fetch would even go on there with no word. The stream
// notices the new topic id (a lookup after out of range, or the metadata
// refresh), says so, and reads every partition of the new topic from its
// log start; the move is stored at once with the new id, so a restart
// goes on from there without reporting the recreation again.
func TestTopicRecreatedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int // records produced to each new partition
	}{{"fewer records than read", 3}, {"more records than read", 9}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			topic := h.kc.Topic("recreated-live", 2)
			p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}
			h.kc.ProduceN(topic, 0, 5, 10)
			h.kc.ProduceN(topic, 1, 5, 10)
			st := h.storeClosedAtEnd()
			cfg := h.config(st, topic)
			cfg.Reset = offsets.ResetEarliest
			s := start(t, cfg)
			br := newBatchReader(s)
			seen, inNew := br.until, br.moved
			br.readUntil(t, "batch up to 5 on both partitions", func() bool { return seen[p0] == 5 && seen[p1] == 5 })
			first := len(batches(br.evs))

			h.kc.Recreate(topic, 2)
			produceNew(t, h, topic, 0, tc.after)
			produceNew(t, h, topic, 1, tc.after)
			// With more records than read, the old position may read some
			// of the new topic before the refresh sees its id: those are
			// delivered twice, none is skipped.
			br.readUntil(t, fmt.Sprintf("batch up to %d on both partitions, after the move", tc.after), func() bool {
				return inNew[p0] && inNew[p1] && seen[p0] == int64(tc.after) && seen[p1] == int64(tc.after)
			})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, e := range notices(br.evs, offsets.CodeDataLoss) {
				t.Errorf("a recreated topic was reported as data loss: %s", e.Message)
			}
			for _, p := range []offsets.Partition{p0, p1} {
				// The new topic's records, every one: a range from its
				// log start, marked as the jump it is.
				var from int64 = -1
				var records int64
				for _, b := range batches(br.evs)[first:] {
					for _, r := range b.Ranges {
						if r.Partition != p {
							continue
						}
						if r.Jump == offsets.CodeRecreated {
							from, records = r.From, 0
						}
						if from >= 0 {
							records += r.Records
						}
					}
				}
				if from != 0 || records != int64(tc.after) {
					t.Errorf("%s: after the recreation read from %d, %d records, want all %d from 0: %s", p, from, records, tc.after, describe(br.evs))
				}
			}

			// A restart goes on where the new topic was acked, quietly.
			produceNew(t, h, topic, 0, 2)
			cfg.UntilEnd = true
			evs := runWithin(t, cfg, time.Minute)
			if n := notices(evs, offsets.CodeRecreated); len(n) > 0 {
				t.Errorf("the restart reported the recreation again: %s", n[0].Message)
			}
			if from, until, _ := covered(t, batches(evs), p0); from != int64(tc.after) || until != int64(tc.after)+2 {
				t.Errorf("restart read %s [%d, %d), want [%d, %d): %s", p0, from, until, tc.after, tc.after+2, describe(evs))
			}
		})
	}
}

// readRanges passes the range of every batch s delivers to fn, and adds
// every event to *evs, until done holds; 30 s without done fails the test
// with why() and the events read.
func readRanges(t *testing.T, s *Stream, evs *[]Event, done func() bool, fn func(r offsets.BatchRange), why func() string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for !done() {
		select {
		case ev := <-s.Events():
			*evs = append(*evs, ev)
			if b, ok := ev.(*BatchEvent); ok {
				for _, r := range b.Batch.Ranges {
					fn(r)
				}
			}
		case <-timeout:
			t.Fatalf("%s: %s", why(), describe(*evs))
		}
	}
}

// batchReader reads a stream's events and keeps them, with the end of
// each partition's last range and whether a range of it marked
// topic-recreated came.
type batchReader struct {
	s     *Stream
	evs   []Event
	until map[offsets.Partition]int64
	moved map[offsets.Partition]bool
}

func newBatchReader(s *Stream) *batchReader {
	return &batchReader{s: s, until: map[offsets.Partition]int64{}, moved: map[offsets.Partition]bool{}}
}

// readUntil reads events until done; the test fails when the stream ends
// first or after 30 s, saying there was no what.
func (br *batchReader) readUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for !done() {
		select {
		case ev, ok := <-br.s.Events():
			if !ok {
				t.Fatalf("stream ended: %s", describe(br.evs))
			}
			br.evs = append(br.evs, ev)
			if b, ok := ev.(*BatchEvent); ok {
				for _, r := range b.Batch.Ranges {
					br.until[r.Partition] = r.Until
					br.moved[r.Partition] = br.moved[r.Partition] || r.Jump == offsets.CodeRecreated
				}
			}
		case <-timeout:
			t.Fatalf("no %s: %s", what, describe(br.evs))
		}
	}
}

// readToEnd makes a topic of partitions partitions with 5 records each
// and a stream with a store that has read and acked all of them
// (--reset earliest --until-end, the config it returns).
func readToEnd(t *testing.T, name string, partitions int32) (*harness, string, *offsets.Store, Config) {
	t.Helper()
	h := newHarness(t)
	topic := h.kc.Topic(name, partitions)
	for p := range partitions {
		h.kc.ProduceN(topic, p, 5, 10)
	}
	st := h.openStore()
	t.Cleanup(func() { _ = st.Close() })
	cfg := h.config(st, topic)
	cfg.Reset, cfg.UntilEnd = offsets.ResetEarliest, true
	runWithin(t, cfg, time.Minute)
	return h, topic, st, cfg
}

// failGate blocks the processing of batch id until released, then fails
// it: the batch stays planned, as after a crash.
type failGate struct {
	id      uint64
	entered chan struct{}
	release chan struct{}
}

func newFailGate(id uint64) *failGate {
	return &failGate{id: id, entered: make(chan struct{}), release: make(chan struct{})}
}

// crash releases the batch, which fails, and closes s once it ended.
func (g *failGate) crash(s *Stream) {
	close(g.release)
	for range s.Events() {
	}
	_ = s.Close()
}

// restartDropsTheBatch runs cfg to its end and checks that it dropped the
// pending batch 2 (its event saying why contains why) and read p from the
// newest topic's start: [0, until), none of it as re-delivered.
func restartDropsTheBatch(t *testing.T, cfg Config, p offsets.Partition, why string, until int64) {
	t.Helper()
	evs := runWithin(t, cfg, time.Minute)
	if d := notices(evs, offsets.CodeDropped); len(d) != 1 || !strings.Contains(d[0].Message, why) {
		t.Errorf("dropped events %v, want batch 2 dropped: %s", d, describe(evs))
	}
	from, got, records := covered(t, batches(evs), p)
	if from != 0 || got != until || records != until {
		t.Errorf("restart read [%d, %d) with %d records, want the newest topic's [0, %d): %s", from, got, records, until, describe(evs))
	}
	for _, b := range batches(evs) {
		if b.Redelivered {
			t.Errorf("batch %d re-delivered a range of an earlier topic", b.ID)
		}
	}
}

func (g *failGate) Process(_ context.Context, b *Batch, _ []*record.Record) error {
	if b.ID != g.id {
		return nil
	}
	close(g.entered)
	<-g.release
	return errors.New("stopped here")
}

// waitNotice reads s's events until one of code comes.
func waitNotice(t *testing.T, s *Stream, code string) []Event {
	t.Helper()
	var evs []Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("stream ended before a %s event: %s", code, describe(evs))
			}
			evs = append(evs, ev)
			if n, ok := ev.(*Notice); ok && n.Code == code {
				return evs
			}
		case <-timeout:
			t.Fatalf("no %s event: %s", code, describe(evs))
		}
	}
}

// TestRecreatedAfterAPlannedBatch: a batch of the old topic planned and
// not acked when the running stream saw the topic created again, then a
// crash. The restart finds the ids matching; re-delivering the batch's old
// range against the new topic would wait for offsets the new topic does
// not have, then deliver new records as the old range. The stored move
// (topic-recreated) says the batch is the old topic's: it is dropped, and
// the new topic is read from its start.
func TestRecreatedAfterAPlannedBatch(t *testing.T) {
	h, topic, st, cfg := readToEnd(t, "recreated-planned", 1)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	h.kc.ProduceN(topic, 0, 50, 10)

	g := newFailGate(2)
	live := cfg
	live.UntilEnd, live.Processor = false, g
	s := start(t, live)
	<-g.entered
	h.kc.Recreate(topic, 1)
	produceNew(t, h, topic, 0, 3)
	waitNotice(t, s, offsets.CodeRecreated)
	g.crash(s)
	if p, _ := st.Pending("test"); p == nil || p.ID != 2 {
		t.Fatalf("pending batch %+v, want batch 2 of the old topic", p)
	}

	restartDropsTheBatch(t, cfg, p0, "after it was planned", 3)
}

// TestTopicRecreatedWithFewerPartitions: a partition the new topic does
// not have must not keep its old position, or, when the topic gets it
// back, the new records below that position are skipped as "data loss",
// and a --until-end run waits for its old high watermark for good.
func TestTopicRecreatedWithFewerPartitions(t *testing.T) {
	h, topic, _, cfg := readToEnd(t, "recreated-fewer", 2)
	p0, p1 := offsets.Partition{Topic: topic, Partition: 0}, offsets.Partition{Topic: topic, Partition: 1}

	live := cfg
	live.UntilEnd = false
	s := start(t, live)
	h.kc.Recreate(topic, 1)
	produceNew(t, h, topic, 0, 3)
	evs := waitNotice(t, s, offsets.CodeRecreated)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.kc.Admin().UpdatePartitions(ctx, 2, topic); err != nil {
		t.Fatal(err)
	}
	h.kc.Client().PurgeTopicsFromClient(topic)
	produceNew(t, h, topic, 1, 4)
	var got1 int64
	readRanges(t, s, &evs, func() bool { return got1 >= 4 }, func(r offsets.BatchRange) {
		if r.Partition == p1 {
			if r.From != 0 && got1 == 0 {
				t.Fatalf("%s: first range after the recreation starts at %d: %s", p1, r.From, describe(evs))
			}
			got1 += r.Records
		}
	}, func() string { return fmt.Sprintf("%s: %d of the 4 new records read", p1, got1) })
	_ = s.Close()
	for _, e := range notices(evs, offsets.CodeDataLoss) {
		t.Errorf("reported as data loss: %s", e.Message)
	}
	if _, until, _ := covered(t, batches(evs), p0); until != 3 {
		t.Errorf("%s read to %d, want 3", p0, until)
	}
}

// TestTopicRecreatedBesideADeletedTopic: with another topic of the stream
// deleted, the metadata refresh must not fail as a whole, or the
// recreation of the first goes unseen and its new records below the old
// position are skipped.
func TestTopicRecreatedBesideADeletedTopic(t *testing.T) {
	h := newHarness(t)
	a, b := h.kc.Topic("recreated-a", 1), h.kc.Topic("deleted-b", 1)
	pa := offsets.Partition{Topic: a, Partition: 0}
	h.kc.ProduceN(a, 0, 10, 10)
	h.kc.ProduceN(b, 0, 1, 10)
	cfg := h.config(nil, a, b)
	cfg.Reset = offsets.ResetEarliest
	s := start(t, cfg)
	defer s.Close()
	waitBatchUntil(t, s, pa, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.kc.Admin().DeleteTopics(ctx, b); err != nil {
		t.Fatal(err)
	}
	h.kc.Recreate(a, 1)
	produceNew(t, h, a, 0, 30) // past the old position: no out of range
	evs := waitNotice(t, s, offsets.CodeRecreated)
	// The new topic from its start: the old position may have read some
	// of it before the refresh saw the id (delivered twice, not skipped).
	var from, until int64 = -1, -1
	readRanges(t, s, &evs, func() bool { return until >= 30 }, func(r offsets.BatchRange) {
		if r.Partition == pa && r.Jump == offsets.CodeRecreated {
			from = r.From
		}
		if r.Partition == pa && from >= 0 {
			until = r.Until
		}
	}, func() string { return fmt.Sprintf("the new topic not read from 0 to 30 (read [%d, %d))", from, until) })
	if from != 0 {
		t.Errorf("the new topic read from %d, want 0: %s", from, describe(evs))
	}
	// The deleted topic's partition says so, not only "no leader".
	gone := func() bool {
		for _, n := range notices(evs, offsets.CodeBrokerError) {
			if n.Topic == b && strings.Contains(n.Message, "does not have it now (deleted?)") {
				return true
			}
		}
		return false
	}
	timeout := time.After(20 * time.Second)
	for !gone() {
		select {
		case ev := <-s.Events():
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("no broker-error that says %s is gone: %v", b, notices(evs, offsets.CodeBrokerError))
		}
	}
}

// TestRecreatedReportedUntilAStartSucceeds: a start that stored the new id
// before it could fail (--fail-on-data-loss, a usage error) would let the
// next start skip the new topic's records below the stored position
// without reporting the recreation. With
// --fail-on-data-loss, the recreation itself stops the start: records of
// the new topic would be skipped.
func TestRecreatedReportedUntilAStartSucceeds(t *testing.T) {
	h, topic, _, cfg := readToEnd(t, "recreated-fail", 1)
	h.kc.Recreate(topic, 1)
	produceNew(t, h, topic, 0, 8)

	failing := cfg
	failing.FailOnDataLoss = true
	if _, _, err := Start(context.Background(), failing); err == nil {
		t.Fatal("--fail-on-data-loss started on a recreated topic at the stored position")
	} else if dl, ok := err.(*DataLossError); !ok || dl.Event.Code != offsets.CodeRecreated {
		t.Fatalf("start error %v, want a topic-recreated *DataLossError", err)
	}
	evs := runWithin(t, cfg, time.Minute)
	if len(notices(evs, offsets.CodeRecreated)) != 1 {
		t.Errorf("the start after a failed one did not report the recreation: %s", describe(evs))
	}
	// -o TOPIC=earliest: no loss at stake, and --fail-on-data-loss starts.
	h.kc.Recreate(topic, 1)
	produceNew(t, h, topic, 0, 2)
	failing.Explicit = []offsets.Spec{spec(t, topic+"=earliest")}
	evs = runWithin(t, failing, time.Minute)
	if n := notices(evs, offsets.CodeRecreated); len(n) != 1 || strings.Contains(n[0].Message, "resumes at the stored") {
		t.Errorf("recreated events %v, want one that says -o chose the starts", n)
	}
}

// TestRecreatedTwiceWithABatchInFlight: a batch of the first new topic
// (its range marked topic-recreated) in flight when the topic was created
// again a second time, then a crash. Its range starts at a recreation, but
// re-delivering it on the newest topic would wait for offsets that topic
// lacks (--until-end hangs) or deliver other records under the batch's
// ranges. The second move was made after the batch was cut: the batch is
// dropped.
func TestRecreatedTwiceWithABatchInFlight(t *testing.T) {
	h, topic, _, cfg := storedStream(t, "recreated-twice", 10, 5)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	cfg.Reset = offsets.ResetEarliest
	g := newFailGate(2)
	live := cfg
	live.Processor = g
	s := start(t, live)
	waitBatchUntil(t, s, p0, 5)
	// The first new topic's records come after the stream saw it: had
	// they come first, the read at offset 5 could take them before the
	// check of the topic id (the recreated-topic window), cutting batch 2
	// before the move, and a second recreation within one metadata
	// refresh is seen as one.
	h.kc.Recreate(topic, 1)
	waitNotice(t, s, offsets.CodeRecreated)
	produceNew(t, h, topic, 0, 30)
	<-g.entered // batch 2, of the first new topic
	h.kc.Recreate(topic, 1)
	produceNew(t, h, topic, 0, 4)
	waitNotice(t, s, offsets.CodeRecreated)
	g.crash(s)

	cfg.UntilEnd = true
	restartDropsTheBatch(t, cfg, p0, "", 4)
}

// TestRecreatedTopicIsNotReadUnderTheOldID: a topic deleted and created
// again while the stream runs, the new one holding more records than the
// stream had read. A fetch without the topic's id (before Fetch v13) at
// the old position would take the new topic's records as the old topic's
// until the next metadata refresh saw the new id: a batch would have them
// in the old topic's range, and they would come again from the new
// topic's start. Fetches carry the topic's id, the broker refuses the old
// one (UNKNOWN_TOPIC_ID), and that
// refusal makes the stream look at the ids at once: the metadata refresh
// here is an hour away. Every record of the new topic comes once, in
// ranges from its log start marked topic-recreated.
func TestRecreatedTopicIsNotReadUnderTheOldID(t *testing.T) {
	h := newHarness(t)
	skipWithoutTopicIDs(t, h)
	topic := h.kc.Topic("recreated-by-id", 2)
	parts := []offsets.Partition{{Topic: topic, Partition: 0}, {Topic: topic, Partition: 1}}
	for _, p := range parts {
		h.kc.ProduceN(topic, p.Partition, 5, 10)
	}
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.MetadataInterval = offsets.ResetEarliest, time.Hour
	s := start(t, cfg)
	defer s.Close()
	br := newBatchReader(s)
	until := br.until
	br.readUntil(t, "batch up to 5 on both partitions", func() bool { return until[parts[0]] == 5 && until[parts[1]] == 5 })
	first := len(batches(br.evs))

	h.kc.Recreate(topic, 2)
	for _, p := range parts {
		produceNew(t, h, topic, p.Partition, 9)
	}
	recreated := func() bool { return len(notices(br.evs, offsets.CodeRecreated)) > 0 }
	br.readUntil(t, "batch up to 9 on both partitions, after the move", func() bool { return recreated() && until[parts[0]] == 9 && until[parts[1]] == 9 })
	for _, p := range parts {
		var jumped bool
		var records int64
		for _, b := range batches(br.evs)[first:] {
			for _, r := range b.Ranges {
				if r.Partition != p {
					continue
				}
				jumped = jumped || r.Jump == offsets.CodeRecreated
				if !jumped && r.Records > 0 {
					t.Errorf("%s: batch %d has [%d, %d) with %d records before the move: the new topic's, read under the old id: %s", p, b.ID, r.From, r.Until, r.Records, describe(br.evs))
				}
				if jumped {
					records += r.Records
				}
			}
		}
		if !jumped || records != 9 {
			t.Errorf("%s: after the move %d records (moved %v), want the new topic's 9 once: %s", p, records, jumped, describe(br.evs))
		}
	}
	// One event says it all: no partition also gets a broker-error for
	// UNKNOWN_TOPIC_ID, then a reconnected one.
	if n, b, c := len(notices(br.evs, offsets.CodeRecreated)), len(notices(br.evs, offsets.CodeBrokerError)), len(notices(br.evs, offsets.CodeReconnected)); n != 1 || b+c > 0 {
		t.Errorf("%d topic-recreated, %d broker-error and %d reconnected events; want one topic-recreated alone: %s", n, b, c, describe(br.evs))
	}
}

// TestTopicIDLearnedAfterAFailedLookup: the lookup of the topics' ids at
// start fails (a timeout of the first request, say). The ids the
// refresher learns later are taken, the readers started again under them,
// and the store keeps them; a stream that threw them away would read by
// names for the rest of the run, and read a topic created again at the
// old topic's offsets, its first records skipped, with no event.
func TestTopicIDLearnedAfterAFailedLookup(t *testing.T) {
	h := newHarness(t)
	skipWithoutTopicIDs(t, h)
	failFirstIDLookup(t)

	topic := h.topicWith("recreated-late-id", 10, 5)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	st, s := startStoredTo(t, h, topic, p0, 5)
	defer s.Close()
	var evs []Event
	waitIDStored(t, st, topic)

	h.kc.Recreate(topic, 1)
	produceNew(t, h, topic, 0, 9)
	var jumped bool
	var records int64
	timeout := time.After(30 * time.Second)
	for !jumped || records < 9 {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("stream ended: %s", describe(evs))
			}
			evs = append(evs, ev)
			b, ok := ev.(*BatchEvent)
			if !ok {
				continue
			}
			for _, r := range b.Batch.Ranges {
				jumped = jumped || r.Jump == offsets.CodeRecreated
				if !jumped && r.Records > 0 && r.From >= 5 {
					t.Fatalf("batch %d has [%d, %d) before the move: the new topic's records read under the old topic: %s", b.Batch.ID, r.From, r.Until, describe(evs))
				}
				if jumped {
					records += r.Records
				}
			}
		case <-timeout:
			t.Fatalf("the new topic was not read from its start: %s", describe(evs))
		}
	}
	if records != 9 || len(notices(evs, offsets.CodeRecreated)) != 1 {
		t.Errorf("%d records after the move, %d topic-recreated events; want 9 and 1: %s", records, len(notices(evs, offsets.CodeRecreated)), describe(evs))
	}
}

// TestRecreatedTopicClearsItsErrors: a topic deleted while the stream
// reads it (each partition reports the broker's error), then created
// again with no records yet. The partitions stayed "error" on the screen
// until the new topic's first records came, and then each got a
// reconnected event: the topic-recreated event already says what the
// errors meant.
func TestRecreatedTopicClearsItsErrors(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("recreated-errors", 2)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	h.kc.ProduceN(topic, 0, 5, 10)
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	s := start(t, cfg)
	defer s.Close()
	waitBatchUntil(t, s, p0, 5)
	if _, err := h.kc.Admin().DeleteTopics(context.Background(), topic); err != nil {
		t.Fatal(err)
	}
	evs := waitNotice(t, s, offsets.CodeBrokerError)
	if resp, err := h.kc.Admin().CreateTopic(context.Background(), 2, 1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create %s again: %v %v", topic, err, resp.Err)
	}
	evs = append(evs, waitNotice(t, s, offsets.CodeRecreated)...)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-s.Events():
			evs = append(evs, ev)
			pr, ok := ev.(*Progress)
			if !ok {
				continue
			}
			clean := true
			for _, st := range pr.Partitions {
				clean = clean && !st.Errored
			}
			if clean {
				if n := notices(evs, offsets.CodeReconnected); len(n) > 0 {
					t.Errorf("reconnected events after the recreation: %s", describe(evs))
				}
				return
			}
		case <-timeout:
			t.Fatalf("the partitions of the new topic are still in error: %s", describe(evs))
		}
	}
}

// TestAdoptedIDKeepsTheEpochCheck: the id of a topic learnt after start
// (adoptID) does not start the topic's readers again. A new reader knows
// no leader epoch of what was read, so after a leader change it would not
// check the log (the fetch from position-1, KIP-320) and would read a
// truncated log's new history as if it continued the old one (the
// unclean suite on three real brokers, "frozen", shows it). The readers
// take the id where they are; after an election the next fetch is the
// check.
func TestAdoptedIDKeepsTheEpochCheck(t *testing.T) {
	h := newBrokersHarness(t, 1)
	skipWithoutTopicIDs(t, h)
	failFirstIDLookup(t)
	topic := h.topicWith("adopted-epoch", 10, 5)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	id := h.kc.TopicID(topic)
	var mu sync.Mutex
	var asked []int64 // offsets the fetches of p0 asked for
	watchFetches(h, func(req *kmsg.FetchRequest) {
		for _, rp := range fetchedPartitions(req, topic, id) {
			mu.Lock()
			asked = append(asked, rp.FetchOffset)
			mu.Unlock()
		}
	})

	st, s := startStoredTo(t, h, topic, p0, 5)
	defer s.Close()
	waitIDStored(t, st, topic)
	mu.Lock()
	asked = nil
	mu.Unlock()
	h.lead(topic, 0, 0) // an election: the epoch moves on
	h.kc.ProduceN(topic, 0, 3, 10)
	waitBatchUntil(t, s, p0, 8)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(asked, 4) {
		t.Errorf("after the election the fetches asked for %v: none from 4, the check of the record before position 5", asked)
	}
}

// startStoredTo starts a stream of topic from the earliest offset with a
// store closed at the end of the test, and waits until p is read to until;
// the caller closes the stream.
func startStoredTo(t *testing.T, h *harness, topic string, p offsets.Partition, until int64) (*offsets.Store, *Stream) {
	t.Helper()
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset = offsets.ResetEarliest
	s := start(t, cfg)
	waitBatchUntil(t, s, p, until)
	return st, s
}

// failFirstIDLookup makes the stream's first lookup of topic ids fail, as
// with a seed broker down at start; the later ones ask the cluster.
func failFirstIDLookup(t *testing.T) {
	var calls atomic.Int32
	topicIDs = func(c *kafka.Client, topics []string) (map[string]string, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("no answer in time")
		}
		return kafka.TopicIDs(c, topics)
	}
	t.Cleanup(func() { topicIDs = kafka.TopicIDs })
}

// waitIDStored waits until the store holds topic's id for stream "test".
func waitIDStored(t *testing.T, st *offsets.Store, topic string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, _, err := st.Stream("test")
		if err != nil {
			t.Fatal(err)
		}
		if info.TopicIDs[topic] != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the id of %s was never stored after the lookup at start failed", topic)
		}
	}
}

// skipWithoutTopicIDs skips the test when the broker cannot fetch by
// topic id.
func skipWithoutTopicIDs(t *testing.T, h *harness) {
	t.Helper()
	if v := h.kc.FetchMaxVersion(); v < 13 {
		t.Skipf("the broker serves Fetch v%d at most; topic ids came in v13 (Kafka 3.1)", v)
	}
}
