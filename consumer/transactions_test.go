package consumer

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

func TestAbortMarks(t *testing.T) {
	p := offsets.Partition{Topic: "t", Partition: 0}
	data := func(pid, from, until int64) kafka.TxnMark {
		return kafka.TxnMark{ProducerID: pid, From: from, Until: until}
	}
	abort := func(pid, at int64) kafka.TxnMark {
		return kafka.TxnMark{ProducerID: pid, From: at, Until: at + 1, Marker: true, Abort: true}
	}
	commit := func(pid, at int64) kafka.TxnMark {
		return kafka.TxnMark{ProducerID: pid, From: at, Until: at + 1, Marker: true}
	}
	rng := func(from, until int64) offsets.Range { return offsets.Range{Partition: p, From: from, Until: until} }
	type cut struct{ from, until int64 }
	tests := []struct {
		name   string
		chunks [][]kafka.TxnMark // one add each, all before the first cut
		cuts   []cut
		want   [][]offsets.Range // per cut
	}{
		{"the doc comment's example", [][]kafka.TxnMark{{data(7, 10, 12), data(9, 12, 13), abort(7, 13)}},
			[]cut{{10, 14}}, [][]offsets.Range{{rng(10, 12)}}},
		{"committed is never marked", [][]kafka.TxnMark{{data(7, 0, 3), commit(7, 3)}},
			[]cut{{0, 4}}, [][]offsets.Range{nil}},
		{"the marker ends the transaction: the next one of the producer commits", [][]kafka.TxnMark{{data(7, 0, 2), abort(7, 2), data(7, 3, 5)}, {commit(7, 5)}},
			[]cut{{0, 6}}, [][]offsets.Range{{rng(0, 2)}}},
		{"batches of one transaction across chunks", [][]kafka.TxnMark{{data(7, 0, 2)}, {data(7, 2, 4), data(8, 4, 5)}, {data(7, 5, 6), abort(7, 6)}},
			[]cut{{0, 7}}, [][]offsets.Range{{rng(0, 4), rng(5, 6)}}},
		{"aborts out of order are sorted, touching ones merged", [][]kafka.TxnMark{{data(7, 0, 2), data(8, 3, 5), data(9, 2, 3), abort(8, 5), abort(7, 6), commit(9, 7)}},
			[]cut{{0, 8}}, [][]offsets.Range{{rng(0, 2), rng(3, 5)}}},
		{"offsets read twice (a seek back) are marked once", [][]kafka.TxnMark{{data(7, 0, 2), abort(7, 2)}, {data(7, 0, 2), abort(7, 2)}},
			[]cut{{0, 3}}, [][]offsets.Range{{rng(0, 2)}}},
		{"a cut through an aborted transaction", [][]kafka.TxnMark{{data(7, 0, 10), abort(7, 10)}},
			[]cut{{0, 4}, {4, 11}}, [][]offsets.Range{{rng(0, 4)}, {rng(4, 10)}}},
		{"a range starting past marks (a jump) leaves them out", [][]kafka.TxnMark{{data(7, 0, 10), abort(7, 10)}},
			[]cut{{6, 11}}, [][]offsets.Range{{rng(6, 10)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a abortMarks
			for _, c := range tc.chunks {
				a.add(1, c)
			}
			for i, c := range tc.cuts {
				if got := a.take(p, c.from, c.until); !reflect.DeepEqual(got, tc.want[i]) {
					t.Errorf("cut %d [%d, %d): %v, want %v", i, c.from, c.until, got, tc.want[i])
				}
			}
			if len(a.aborted) != 0 || len(a.open) != 0 {
				t.Errorf("left %v aborted, %v open", a.aborted, a.open)
			}
		})
	}
}

// A record cut before its transaction's abort marker was read is
// delivered unmarked, and the marker read later marks nothing of it; a
// new reader (seek) forgets the transactions open before it.
func TestAbortMarksAfterTheCut(t *testing.T) {
	p := offsets.Partition{Topic: "t", Partition: 0}
	var a abortMarks
	a.add(1, []kafka.TxnMark{{ProducerID: 7, From: 0, Until: 3}})
	if got := a.take(p, 0, 3); got != nil {
		t.Fatalf("cut before the marker: %v", got)
	}
	a.add(1, []kafka.TxnMark{{ProducerID: 7, From: 3, Until: 5}, {ProducerID: 7, From: 5, Until: 6, Marker: true, Abort: true}})
	if got := a.take(p, 3, 6); !reflect.DeepEqual(got, []offsets.Range{{Partition: p, From: 3, Until: 5}}) {
		t.Fatalf("second cut: %v, want [3, 5)", got)
	}
	a.add(1, []kafka.TxnMark{{ProducerID: 8, From: 6, Until: 8}})
	a.add(2, []kafka.TxnMark{{ProducerID: 8, From: 20, Until: 21, Marker: true, Abort: true}})
	if got := a.take(p, 6, 30); got != nil {
		t.Fatalf("a marker read by a new reader marked %v", got)
	}
}

func TestBatchIsAborted(t *testing.T) {
	a, b := offsets.Partition{Topic: "a", Partition: 1}, offsets.Partition{Topic: "b", Partition: 0}
	var bt Batch
	bt.addAborted([]offsets.Range{{Partition: b, From: 5, Until: 7}})
	bt.addAborted([]offsets.Range{{Partition: a, From: 0, Until: 2}, {Partition: a, From: 10, Until: 11}})
	for _, c := range []struct {
		p    offsets.Partition
		off  int64
		want bool
	}{{a, 0, true}, {a, 1, true}, {a, 2, false}, {a, 9, false}, {a, 10, true}, {a, 11, false}, {b, 4, false}, {b, 5, true}, {b, 6, true}, {b, 7, false},
		{offsets.Partition{Topic: "a", Partition: 0}, 0, false}} {
		if got := bt.IsAborted(c.p, c.off); got != c.want {
			t.Errorf("IsAborted(%s, %d) = %v", c.p, c.off, got)
		}
	}
}

// offsetsSink records the offsets each batch delivered and which of them
// the batch marks aborted.
type offsetsSink struct{ got, aborted []int64 }

func (s *offsetsSink) Process(_ context.Context, b *Batch, recs []*record.Record) error {
	for _, m := range recs {
		s.got = append(s.got, m.Offset)
		if b.IsAborted(offsets.Partition{Topic: m.Topic, Partition: m.Partition}, m.Offset) {
			s.aborted = append(s.aborted, m.Offset)
		}
	}
	return nil
}

// TestStreamIsolation reads a log with an aborted and a committed
// transaction of one producer: read_committed delivers neither the aborted
// records nor any mark; read_uncommitted delivers them marked aborted, in
// the batch and in the --sink's JSON lines.
func TestStreamIsolation(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("isolation", 1)
	h.kc.ProduceN(topic, 0, 3, 10) // 0..2
	tp := h.kc.TxnProducer()
	tp.Produce(false, testkafka.Values(topic, 0, "a0", "a1")...) // 3, 4, abort marker 5
	tp.Produce(true, testkafka.Values(topic, 0, "c0", "c1")...)  // 6, 7, commit marker 8
	h.kc.WaitVisible(topic, 0, 6)
	h.kc.ProduceN(topic, 0, 1, 10) // 9
	if end := h.kc.End(topic, 0); end != 10 {
		t.Fatalf("end %d, want 10 (markers at 5 and 8)", end)
	}
	for _, tc := range []struct {
		committed   bool
		got, marked []int64
	}{
		{true, []int64{0, 1, 2, 6, 7, 9}, nil},
		{false, []int64{0, 1, 2, 3, 4, 6, 7, 9}, []int64{3, 4}},
	} {
		t.Run(map[bool]string{true: "committed", false: "uncommitted"}[tc.committed], func(t *testing.T) {
			cc := kafka.ClientConfig{Brokers: h.kc.Brokers, ReadCommitted: tc.committed}
			c, err := kafka.Dial(cc)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			cfg := h.config(nil, topic)
			cfg.Client, cfg.Reset, cfg.UntilEnd = c, offsets.ResetEarliest, true
			rec := &offsetsSink{}
			cfg.Processor = rec
			evs := run(t, cfg)
			if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" {
				t.Fatalf("ended %+v", e)
			}
			if !reflect.DeepEqual(rec.got, tc.got) || !reflect.DeepEqual(rec.aborted, tc.marked) {
				t.Fatalf("delivered %v with %v aborted, want %v with %v", rec.got, rec.aborted, tc.got, tc.marked)
			}
			if from, until, _ := covered(t, batches(evs), offsets.Partition{Topic: topic, Partition: 0}); from != 0 || until != 10 {
				t.Fatalf("covered [%d, %d), want [0, 10)", from, until)
			}
		})
	}
	t.Run("sink", func(t *testing.T) {
		c, err := kafka.Dial(kafka.ClientConfig{Brokers: h.kc.Brokers})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		path := filepath.Join(t.TempDir(), "records.jsonl")
		sink, err := OpenFileSink(path)
		if err != nil {
			t.Fatal(err)
		}
		defer sink.Close()
		cfg := h.config(nil, topic)
		cfg.Client, cfg.Reset, cfg.UntilEnd, cfg.Processor = c, offsets.ResetEarliest, true, sink
		run(t, cfg)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var marked []int64
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r struct {
				Offset  int64
				Aborted *bool
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if r.Aborted != nil {
				if !*r.Aborted {
					t.Fatalf("%q: aborted false is never written", line)
				}
				marked = append(marked, r.Offset)
			}
		}
		if !reflect.DeepEqual(marked, []int64{3, 4}) {
			t.Fatalf("lines marked aborted: %v, want [3 4]\n%s", marked, data)
		}
	})
}

// TestOpenTransactionDoesNotGrowTheFetchSize: under read_committed an
// empty answer below the high watermark is an open transaction (the last
// stable offset is the reader's position), not an answer too small for
// the next batch, so the partition's fetch size stays. Under
// read_uncommitted the same answer means the batch did not fit: it grows.
func TestOpenTransactionDoesNotGrowTheFetchSize(t *testing.T) {
	p := offsets.Partition{Topic: "t", Partition: 0}
	for _, tc := range []struct {
		isolation sarama.IsolationLevel
		want      int32
	}{{sarama.ReadCommitted, 1 << 20}, {sarama.ReadUncommitted, 2 << 20}} {
		f := &fetcher{out: make(chan []chunk, 1), stop: make(chan struct{}), fetch: kafka.FetchOptions{Version: 11, ReadCommitted: tc.isolation == sarama.ReadCommitted},
			partBytes: 1 << 20, fastBytes: 1 << 20, growBytes: 4 << 20, maxBytes: 100 << 20, budget: 1 << 30}
		bf := &brokerFetcher{f: f, wake: make(chan struct{}, 1)}
		r := &reader{p: p, f: f, pos: 10, size: 1 << 20, maxHeld: 100, maxHeldBytes: 1 << 30}
		bf.readers = []*reader{r}
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 11
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.HighWatermark, rp.LastStableOffset = 20, 10
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		fr, err := kafka.ReadFetchResponse(resp.Version, resp.AppendTo(nil))
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := bf.handle(fr, []*reader{r}, 1<<20, 1<<30); !ok {
			t.Fatal("handle stopped")
		}
		if r.size != tc.want {
			t.Errorf("isolation %v: fetch size %d after an empty answer at the last stable offset, want %d", tc.isolation, r.size, tc.want)
		}
	}
}

// TestLagDoesNotCountTheMarkerReadPast: a partition whose log ends in a
// transaction marker shows no LAG once every record is in a batch. NEXT
// stays at the marker (a range ends after its last record), so HWM - NEXT
// would show LAG 1 for good. Offsets read past that hold no record
// (markers, aborted batches) are no lag: with nothing held, LAG counts from
// where the partition was read to.
func TestLagDoesNotCountTheMarkerReadPast(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("txn-lag", 1)
	txn, err := kgo.NewClient(kgo.SeedBrokers(h.kc.Brokers...), kgo.TransactionalID("lag-test"), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	ctx := context.Background()
	for _, commit := range []bool{true, false, true} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	hwm := h.kc.End(topic, 0) // 18: three transactions of 5 and their markers
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	s, _, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = s.Close()
		for range s.Events() {
		}
	}()
	deadline := time.After(20 * time.Second)
	records, progressAfter := int64(0), 0
	for {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *BatchEvent:
				records += ev.Batch.Records
			case *Progress:
				if records < 10 {
					continue
				}
				if progressAfter++; progressAfter < 2 {
					continue // one that may predate the last batch's ack
				}
				r := ev.Partitions[0]
				if r.Lag != 0 {
					t.Fatalf("every committed record is in a batch and the log ends in a marker at %d: NEXT %d, LAG %d, want 0", hwm-1, r.NextOffset, r.Lag)
				}
				return
			}
		case <-deadline:
			t.Fatalf("no progress after the 10 committed records (%d delivered)", records)
		}
	}
}

// TestProbeSeesCommittedAfterAbortedOfSameProducer: under read_committed
// the probe ends an aborted transaction at its abort marker. A probe that
// took every later batch of that producer as aborted would count a
// committed transaction written after it as "no records", and take a
// target as reached with records unread.
func TestProbeSeesCommittedAfterAbortedOfSameProducer(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("probe-txn", 1)
	tp := h.kc.TxnProducer()
	aborted := tp.Produce(false, testkafka.Values(topic, 0, "a0", "a1")...)  // 0, 1, abort marker 2
	committed := tp.Produce(true, testkafka.Values(topic, 0, "c0", "c1")...) // 3, 4, commit marker 5
	h.kc.WaitVisible(topic, 0, committed[0])
	if !reflect.DeepEqual(aborted, []int64{0, 1}) || !reflect.DeepEqual(committed, []int64{3, 4}) || h.kc.End(topic, 0) != 6 {
		t.Fatalf("unexpected layout: aborted %v, committed %v, end %d", aborted, committed, h.kc.End(topic, 0))
	}
	c := h.client()
	p := offsets.Partition{Topic: topic, Partition: 0}
	for _, tc := range []struct {
		from, until   int64
		committed     bool
		wantNoRecords bool
	}{
		{0, 3, true, true},   // the aborted transaction and its marker
		{2, 3, true, true},   // the abort marker alone
		{0, 6, true, false},  // the committed transaction follows
		{3, 6, true, false},  // the committed transaction alone
		{5, 6, true, true},   // its commit marker alone
		{0, 3, false, false}, // uncommitted: the aborted records are delivered
		{3, 6, false, false}, // uncommitted: so are the committed ones
		{2, 3, false, true},  // a marker is never a record
	} {
		got, err := kafka.NoRecordsBetween(c, p, tc.from, tc.until, tc.committed)
		if err != nil || got != tc.wantNoRecords {
			t.Errorf("kafka.NoRecordsBetween(%d, %d, committed %v) = %v, %v; want %v", tc.from, tc.until, tc.committed, got, err, tc.wantNoRecords)
		}
	}
}
