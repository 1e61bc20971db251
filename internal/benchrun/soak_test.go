package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMappedKiB: the soak splits the offset store's mapped pages out of
// RSS by reading smaps for the store's path; a file this process maps and
// reads is counted, and a path it does not map is 0.
func TestMappedKiB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.db")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 1<<20, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal("mmap:", err)
	}
	defer syscall.Munmap(m)
	buf := make([]byte, len(m))
	copy(buf, m) // reads every page through the mapping
	got := mappedKiB(os.Getpid(), path)
	if got < 512 || got > 1024 {
		t.Fatalf("mappedKiB = %d KiB for a 1 MiB mapping read through, want about 1024", got)
	}
	if other := mappedKiB(os.Getpid(), path+".not-mapped"); other != 0 {
		t.Fatalf("mappedKiB of a file not mapped = %d, want 0", other)
	}
}
