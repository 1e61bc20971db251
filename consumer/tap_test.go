package consumer

import (
	"sync"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// countTap records the offsets the tap sees per partition.
type countTap struct {
	mu   sync.Mutex
	seen map[int32][]int64
}

func (c *countTap) Read(recs []*record.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range recs {
		c.seen[r.Partition] = append(c.seen[r.Partition], r.Offset)
	}
}

// The tap sees every record read, once, in offset order per partition:
// the screen's tail view shows every record, not only samples.
func TestTapSeesEveryRecordRead(t *testing.T) {
	h := newHarness(t)
	topic := h.topicWith("events", 20, 120, 70)
	tap := &countTap{seen: map[int32][]int64{}}
	cfg := h.config(nil, topic)
	cfg.Reset = offsets.ResetEarliest
	cfg.UntilEnd = true
	cfg.Tap = tap
	evs := run(t, cfg)
	bs := batches(evs)
	for p, want := range map[int32]int64{0: 120, 1: 70} {
		_, _, n := covered(t, bs, offsets.Partition{Topic: topic, Partition: p})
		got := tap.seen[p]
		if int64(len(got)) != want || n != want {
			t.Fatalf("partition %d: tap saw %d records, batches hold %d, want %d", p, len(got), n, want)
		}
		for i, o := range got {
			if o != int64(i) {
				t.Fatalf("partition %d: record %d of the tap is offset %d", p, i, o)
			}
		}
	}
}
