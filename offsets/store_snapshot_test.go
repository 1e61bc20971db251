package offsets

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

// A store another process writes is read from a copy (Snapshot): every
// copy taken while batches are planned and acked back to back opens and
// holds one committed state, never a mix; without Snapshot the open fails
// as before. Close removes the copy.
func TestSnapshotOfAStoreInUse(t *testing.T) {
	w := openTest(t)
	mustEnsure(t, w, "events")
	if _, err := Open(w.Path(), OpenOptions{ReadOnly: true, Timeout: 50 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("read-only open of a held store without Snapshot: %v, want ErrLocked", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var werr error
	go func() {
		defer wg.Done()
		for id := uint64(1); ; id++ {
			select {
			case <-stop:
				return
			default:
			}
			if werr = w.Plan("events", testBatch(id, 50, int64(id-1)*10)); werr != nil {
				return
			}
			if werr = w.Ack("events", id, testNow); werr != nil {
				return
			}
			time.Sleep(5 * time.Millisecond) // a catch-up commits every 10 ms or so
		}
	}()
	last := uint64(0)
	for i := 0; i < 10; i++ {
		r, err := Open(w.Path(), OpenOptions{ReadOnly: true, Snapshot: true})
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("snapshot %d: %v", i, err)
		}
		if _, ok := r.Snapshot(); !ok {
			t.Fatalf("snapshot %d: Snapshot() says it is not a copy", i)
		}
		info, _, err := r.Stream("events")
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		// Committed states only: the stored next offsets are the ends of
		// the last acked batch, and that batch is in the log, acked.
		if info.LastBatch < last {
			t.Fatalf("snapshot %d went back from batch %d to %d", i, last, info.LastBatch)
		}
		last = info.LastBatch
		if last > 0 {
			b, ok, err := r.Batch("events", last)
			if err != nil || !ok || b.State != StateAcked {
				t.Fatalf("snapshot %d: last batch %d: %+v, %v, %v", i, last, b, ok, err)
			}
			for p, next := range info.Next {
				if want := int64(last-1)*10 + 10; next != want {
					t.Fatalf("snapshot %d: %s next %d, want %d after batch %d", i, p, next, want, last)
				}
			}
		}
		copyPath := r.snapshot
		must(t, r.Close())
		if _, err := os.Stat(copyPath); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("snapshot %d: the copy %s is still there after Close: %v", i, copyPath, err)
		}
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	if last == 0 {
		t.Fatal("no snapshot saw an acked batch")
	}
}
