package offsets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// damagedStoreSeeds is how many damaged copies TestOpenWritableChecksPages
// tries, each with a few bytes flipped at seeded places.
const damagedStoreSeeds = 40

// fillStore writes a stream with batches and events into a new store at
// path, enough for a few dozen pages.
func fillStore(t testing.TB, path string, batches int) {
	t.Helper()
	s := mustOpen(t, path)
	defer s.Close()
	must(t, s.EnsureStream("events", []string{"k:9092"}, []string{"events"}))
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for id := uint64(1); id <= uint64(batches); id++ {
		var ranges []BatchRange
		for p := int32(0); p < 8; p++ {
			ranges = append(ranges, BatchRange{Range: Range{Partition: Partition{Topic: "events", Partition: p}, From: int64(id-1) * 10, Until: int64(id) * 10}, Records: 10})
		}
		must(t, s.Plan("events", Batch{ID: id, Time: at, Ranges: ranges, Records: 80}))
		must(t, s.Ack("events", id, at))
	}
}

// readAll reads everything offsets show reads; an error means the damage
// is visible to a reader.
func readAll(path string) error {
	s, err := Open(path, OpenOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	streams, err := s.Streams()
	if err != nil {
		return err
	}
	for _, st := range streams {
		if _, err := s.Batches(st.Name, 0); err != nil {
			return err
		}
		if _, err := s.Events(st.Name, 0); err != nil {
			return err
		}
		if _, err := s.Pending(st.Name); err != nil {
			return err
		}
	}
	return nil
}

// TestOpenWritableChecksPages flips a few bytes of a store, as a failing
// disk or a stray write would, and checks that a writable open (watch) is
// at least as strict as a reader (offsets show): it must never write into a
// file whose damage a reader sees. And a writable open that succeeds leaves
// a file bbolt's own check passes.
func TestOpenWritableChecksPages(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	fillStore(t, clean, 300)
	orig := readBytes(t, clean)
	seen, refused := 0, 0
	for seed := uint64(1); seed <= damagedStoreSeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 15))
		b := append([]byte(nil), orig...)
		pageSize := 4096
		for range 4 {
			i := 2*pageSize + rng.IntN(len(b)-2*pageSize)
			b[i] ^= byte(1 + rng.IntN(255))
		}
		path := filepath.Join(dir, "damaged.db")
		writeBytes(t, path, b)
		readErr := readAll(path)
		s, openErr := Open(path, OpenOptions{})
		if openErr == nil {
			_ = s.Close()
		}
		if readErr != nil {
			seen++
		}
		if openErr != nil {
			refused++
			if after := readBytes(t, path); !bytes.Equal(after, b) {
				t.Errorf("seed %d: the refused file changed", seed)
			}
			if !errors.Is(openErr, ErrCorrupt) {
				t.Errorf("seed %d: writable open refused with %v, want ErrCorrupt", seed, openErr)
			}
		}
		if readErr != nil && openErr == nil {
			t.Errorf("seed %d: a reader sees damage (%v) but a writable open accepted the file", seed, readErr)
		}
	}
	t.Logf("%d of %d damaged files: damage seen by a reader in %d, writable open refused %d", damagedStoreSeeds, damagedStoreSeeds, seen, refused)
}

// TestOpenDamagedPageHeaders flips bytes in page headers (ids, types,
// element counts, overflow counts): a writable open must end, and either
// accept the file or refuse it with ErrCorrupt, never hang, panic or crash.
// A damaged overflow count makes bbolt's tx.Check loop for minutes while
// it fills memory (seed 6); preflight refuses such a file first.
func TestOpenDamagedPageHeaders(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	fillStore(t, clean, 300)
	orig := readBytes(t, clean)
	refused := 0
	for seed := uint64(1); seed <= 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		b := append([]byte(nil), orig...)
		for range 3 {
			page := 2 + rng.IntN(len(b)/4096-2)
			b[page*4096+rng.IntN(16)] ^= byte(1 + rng.IntN(255))
		}
		path := filepath.Join(dir, "damaged.db")
		writeBytes(t, path, b)
		done := make(chan error, 1)
		go func() {
			s, err := Open(path, OpenOptions{})
			if err == nil {
				err = s.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				refused++
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("seed %d: refused with %v, want ErrCorrupt", seed, err)
				}
			}
		case <-time.After(time.Minute):
			t.Fatalf("seed %d: a writable open of a damaged file did not end within a minute", seed)
		}
	}
	t.Logf("100 files with damaged page headers: %d refused", refused)
}

// FuzzPreflight checks that the bounded page walk ends without a panic on
// any bytes, seeded with a real store.
func FuzzPreflight(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.db")
	fillStore(f, path, 5)
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:8192])
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := preflightAt(bytes.NewReader(data), int64(len(data))); err != nil && !errors.Is(err, errPreflight) {
			t.Fatalf("preflight error %v is not errPreflight", err)
		}
	})
}

// TestOpenRefusesAnOverlongFreelist sets the count of the freelist page
// past what the page holds. A writable bolt.Open copies that many page ids
// from its memory map before any check of ours runs, reading past the page
// (and, at the end of the mapping, faulting, which no recover catches):
// preflight, run by the read-only look Open takes first, must refuse the
// file with ErrCorrupt.
func TestOpenRefusesAnOverlongFreelist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "freelist.db")
	fillStore(t, path, 30)
	b := readBytes(t, path)
	w := &pageWalker{f: bytes.NewReader(b), size: int64(len(b)), seen: map[uint64]bool{}}
	_, freelist, err := w.meta()
	if err != nil || freelist == boltNoFreelist {
		t.Fatalf("meta: freelist page %d, %v", freelist, err)
	}
	hdr := b[freelist*w.pageSize:]
	if overflow := binary.LittleEndian.Uint32(hdr[12:]); overflow != 0 {
		t.Fatalf("the freelist spans %d overflow pages; the edit below assumes one page", overflow)
	}
	binary.LittleEndian.PutUint16(hdr[10:], uint16(w.pageSize/8)) // one id more than the page holds
	writeBytes(t, path, b)
	if err := preflight(path); !errors.Is(err, errPreflight) || !strings.Contains(err.Error(), "freelist page") {
		t.Fatalf("preflight = %v, want the freelist named", err)
	}
	s, err := Open(path, OpenOptions{})
	if err == nil {
		_ = s.Close()
		t.Fatal("a store whose freelist runs past its page opened")
	}
	if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Open = %v, want one line of ErrCorrupt", err)
	}
}
