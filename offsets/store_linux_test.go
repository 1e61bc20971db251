package offsets

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// checkReadOnlyRefusal checks a writable open of a store that can be read
// but not written: its own one line (not "damaged … move it away"), while
// a read-only open (offsets show) reads it.
func checkReadOnlyRefusal(t *testing.T, path string) {
	t.Helper()
	s, err := Open(path, OpenOptions{})
	if err == nil {
		_ = s.Close()
		t.Fatal("a writable open of a read-only store succeeded")
	}
	msg := err.Error()
	if !errors.Is(err, ErrReadOnly) || errors.Is(err, ErrCorrupt) || !strings.Contains(msg, "cannot be written") ||
		!strings.Contains(msg, "--no-store") || strings.Contains(msg, "damaged") || strings.Contains(msg, "\n") {
		t.Errorf("writable open = %v; want one line saying it cannot be written, suggesting --no-store", err)
	}
	ro, err := Open(path, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("a read-only open of the read-only store: %v", err)
	}
	defer ro.Close()
	if info, ok, err := ro.Stream("events"); err != nil || !ok || info.Next[ev(0)] != 1017 {
		t.Errorf("read-only store reads %v, %v, %v", info.Next, ok, err)
	}
}

// TestReadOnlyStoreFile: a store file without write permission. Root
// ignores the mode; TestReadOnlyStoreMount covers it there.
func TestReadOnlyStoreFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes a file whatever its mode")
	}
	path := storeWithAckedBatch(t)
	must(t, os.Chmod(path, 0o400))
	checkReadOnlyRefusal(t, path)
}

// TestReadOnlyStoreMount: a store on a read-only file system (a tmpfs
// mounted read-only, when this process may mount) was reported as "not a
// bbolt file or is damaged … move it away".
func TestReadOnlyStoreMount(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skip("cannot mount a tmpfs here:", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	src := storeWithAckedBatch(t)
	path := filepath.Join(dir, "offsets.db")
	writeBytes(t, path, readBytes(t, src))
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skip("cannot remount the tmpfs read-only:", err)
	}
	checkReadOnlyRefusal(t, path)
}

// TestOpenErrorOfAReadOnlyFileSystem: the failure of a writable open on a
// read-only file system (EROFS, which is not a permission error to Go) is
// classified as read-only wherever mounting is not possible.
func TestOpenErrorOfAReadOnlyFileSystem(t *testing.T) {
	s := &Store{path: "/ro/offsets.db"}
	erofs := &fs.PathError{Op: "open", Path: "/ro/offsets.db", Err: syscall.EROFS}
	if err := s.openError(erofs, false); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "--no-store") {
		t.Errorf("writable open failing with EROFS = %v, want ErrReadOnly suggesting --no-store", err)
	}
	eacces := &fs.PathError{Op: "open", Path: "/ro/offsets.db", Err: syscall.EACCES}
	if err := s.openError(eacces, false); !errors.Is(err, ErrReadOnly) {
		t.Errorf("writable open failing with EACCES = %v, want ErrReadOnly", err)
	}
	if err := s.openError(eacces, true); errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "cannot be opened") {
		t.Errorf("read-only open failing with EACCES = %v, want cannot be opened", err)
	}
}

// TestStoreInAReadOnlyFolder: a store to be made in a folder on a
// read-only file system says it cannot be created and how to go on.
func TestStoreInAReadOnlyFolder(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=1m"); err != nil {
		t.Skip("cannot mount a tmpfs here:", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	_, err := Open(filepath.Join(dir, "offsets.db"), OpenOptions{})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "cannot be created") || !strings.Contains(err.Error(), "--no-store") {
		t.Errorf("Open in a read-only folder = %v, want it cannot be created, suggesting --no-store", err)
	}
}

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
