package consumer

import (
	"reflect"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

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
