package sparkwatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The oldest batch Spark keeps starts in a
// purged file; that is retention, and is not reported at every start.
func TestSparkPurgedOldestNotReportedAtStart(t *testing.T) {
	c := newSparkCheckpoint(t)
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for id := int64(5); id <= 8; id++ { // batches 0-4 purged
		c.offsets(id, at, "e", 10*id, 10*id)
		c.commit(id)
	}
	w, err := Start(context.Background(), Config{Dir: c.dir, Once: true, Last: 100})
	if err != nil {
		t.Fatal(err)
	}
	evs := sparkCollect(t, w)
	if n := sparkNoticesOf(evs); len(n) != 0 {
		t.Errorf("notices at start: %+v", n)
	}
	var ids []uint64
	for _, b := range sparkBatchesOf(evs) {
		ids = append(ids, b.ID)
	}
	if len(ids) != 3 || ids[0] != 6 || ids[2] != 8 {
		t.Errorf("batches shown %v, want 6 7 8", ids)
	}
}

// A checkpoint deleted and started afresh
// in the same place (a new metadata id) is said once, and the new
// query's batches are shown from batch 0.
func TestSparkRecreatedCheckpoint(t *testing.T) {
	c := newSparkCheckpoint(t)
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	c.initial("e", 0, 0)
	for id := int64(0); id <= 3; id++ {
		c.offsets(id, at, "e", 10*(id+1), 10*(id+1))
		c.commit(id)
	}
	w, err := Start(context.Background(), Config{Dir: c.dir, Interval: 20 * time.Millisecond, Last: 0, MaxBatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"offsets", "commits", "sources"} {
		if err := os.RemoveAll(filepath.Join(c.dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	c.write("metadata", `{"id":"0e1d2c3b-4a59-4867-8f90-a1b2c3d4e5f6"}`)
	c.initial("e", 40, 40)
	c.offsets(0, at, "e", 45, 41)
	c.commit(0)
	c.offsets(1, at, "e", 47, 41)
	c.commit(1)
	evs := sparkCollect(t, w)
	var recreated int
	for _, n := range sparkNoticesOf(evs) {
		if n.Code == CodeSparkRecreated {
			recreated++
			if !strings.Contains(n.Message, "0e1d2c3b-4a59-4867-8f90-a1b2c3d4e5f6") {
				t.Errorf("notice %q does not name the new query id", n.Message)
			}
		}
	}
	if recreated != 1 {
		t.Errorf("%d spark-recreated notices, want 1: %+v", recreated, sparkNoticesOf(evs))
	}
	bs := sparkBatchesOf(evs)
	if len(bs) == 0 || bs[0].ID != 0 || bs[0].Ranges[0].From != 40 || bs[0].Ranges[0].Until != 45 {
		t.Fatalf("after the recreation, batches %+v; want batch 0 e[0] 40-45 first", bs)
	}
}
