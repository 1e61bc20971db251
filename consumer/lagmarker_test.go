package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/offsets"
)

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
