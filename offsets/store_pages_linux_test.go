package offsets

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStoreLetsGoOfTheFilePagesItRead: bbolt reads the store through a
// memory map, so a long watch ended up with the whole batch log counted in
// its RSS (the soak's store pages rose 1 → 8 MiB an hour). After an ack the
// store lets go of them (releasePages); opening, which reads every page to
// check the file, does too.
func TestStoreLetsGoOfTheFilePagesItRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.db")
	s := mustOpen(t, path)
	mustEnsure(t, s, "events")
	s.releaseEvery = time.Hour // none while the log fills
	s.db.NoSync = true
	for id := uint64(1); id <= 100; id++ {
		must(t, s.Plan("events", testBatch(id, 1000, int64(id)*10)))
		must(t, s.Ack("events", id, testNow))
	}
	if _, err := s.Batches("events", 0); err != nil { // reads the whole log
		t.Fatal(err)
	}
	held := storeMappedKiB(t, path)
	if held < 4096 {
		t.Fatalf("%d KiB of the store mapped after reading a log of 100 batches of 1000 ranges; the test expects megabytes", held)
	}

	s.releaseEvery = 0
	must(t, s.Plan("events", testBatch(101, 1000, 1010)))
	must(t, s.Ack("events", 101, testNow))
	if after := storeMappedKiB(t, path); after > 256 {
		t.Fatalf("%d KiB of the store still mapped after an ack (%d before): its pages were not let go", after, held)
	}
	if b, ok, err := s.Batch("events", 50); err != nil || !ok || len(b.Ranges) != 1000 {
		t.Fatalf("batch 50 read after the release: %d ranges, ok %v, err %v", len(b.Ranges), ok, err)
	}
	must(t, s.Close())

	s = mustOpen(t, path)
	defer s.Close()
	if after := storeMappedKiB(t, path); after > 256 {
		t.Fatalf("%d KiB of the store mapped after Open checked it: its pages were not let go", after)
	}
	if p, err := s.Pending("events"); err != nil || p != nil {
		t.Fatalf("after reopening: pending %v, err %v; want none", p, err)
	}
}

// storeMappedKiB is the resident size of this process's mappings of path
// (the Rss: lines of /proc/self/smaps).
func storeMappedKiB(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	var kib int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = len(fs) >= 6 && fs[5] == path
			continue
		}
		if in && len(fs) >= 2 && fs[0] == "Rss:" {
			n, _ := strconv.ParseInt(fs[1], 10, 64)
			kib += n
		}
	}
	must(t, sc.Err())
	return kib
}
