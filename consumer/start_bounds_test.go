package consumer

import (
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// storeWrittenWhileWaited is a store whose stream another kbatch writes
// while this one waits for it: at the first read, before it is answered,
// records are produced and the stream's next offset is stored past them,
// as a watch of the same stream holding the stream's file (a folder
// store) would have acked before this one got the file's lock.
type storeWrittenWhileWaited struct {
	*offsets.Store
	other func()
}

func (s *storeWrittenWhileWaited) Stream(name string) (offsets.StreamInfo, bool, error) {
	if s.other != nil {
		s.other()
		s.other = nil
	}
	return s.Store.Stream(name)
}

// TestStartReadsBoundsAfterTakingTheStream: the log's bounds a start
// checks the stored positions against are read once the stream is taken
// (its first read, which waits for another writer to let go): a position
// stored meanwhile, above the high watermark seen before, is not taken for
// one beyond the log, which would start again per --reset (the whole
// topic again with earliest, records skipped with latest).
func TestStartReadsBoundsAfterTakingTheStream(t *testing.T) {
	h, topic, st, cfg := storedStream(t, "events", 20, 10)
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	seedStore(t, h, st, []string{topic}, map[offsets.Partition]int64{p0: 10})
	cfg.Store = &storeWrittenWhileWaited{Store: st, other: func() {
		h.kc.ProduceN(topic, 0, 5, 20)
		if err := st.SetNext("test", map[offsets.Partition]int64{p0: 15}, offsets.Event{}); err != nil {
			t.Error(err)
		}
	}}
	cfg.Reset = offsets.ResetEarliest
	cfg.UntilEnd = true
	evs := runWithin(t, cfg, 30*time.Second)
	started, ok := evs[0].(*Started)
	if !ok {
		t.Fatalf("first event %T, want *Started", evs[0])
	}
	for _, s := range started.Starts {
		if s.Partition == p0 && (s.NextOffset != 15 || s.Source != offsets.SourceStored) {
			t.Errorf("%s starts at %d (%s), want 15 (stored); events:%s", p0, s.NextOffset, s.Source, describe(evs))
		}
	}
	if f, u, n := covered(t, batches(evs), p0); n != 0 {
		t.Errorf("%s read [%d,%d) %d records again, want none", p0, f, u, n)
	}
}
