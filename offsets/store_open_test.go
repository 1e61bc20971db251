package offsets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// checkFile registers a cleanup that opens the bbolt file at path and fails
// the test on any tx.Check error. Register it before the store's Close so
// it runs after it.
func checkFile(t *testing.T, path string) {
	t.Helper()
	t.Cleanup(func() {
		if _, err := os.Stat(path); err != nil {
			return
		}
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			t.Errorf("check %s: %v", path, err)
			return
		}
		defer db.Close()
		err = db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				t.Errorf("check %s: %v", path, err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("check %s: %v", path, err)
		}
	})
}

// must fails the test at once on a non-nil err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mustOpen opens the store at path writable, failing the test on an error.
func mustOpen(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path, OpenOptions{})
	must(t, err)
	return s
}

// writeBytes writes b to the file at path, mode 0600, failing the test on
// an error.
func writeBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	must(t, os.WriteFile(path, b, 0o600))
}

// openTest opens a new store in a fresh folder below t.TempDir(), checked
// and closed at cleanup.
func openTest(t *testing.T) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "kbatch", "offsets.db")
	checkFile(t, path)
	s := mustOpen(t, path)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestOpenCreates(t *testing.T) {
	s := openTest(t)
	for path, want := range map[string]fs.FileMode{s.Path(): 0o600, filepath.Dir(s.Path()): 0o700 | fs.ModeDir} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != want {
			t.Errorf("%s mode = %v, want %v", path, info.Mode(), want)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path()), ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
	must(t, s.Close())
	// Reopen, read-only and read-write.
	for _, ro := range []bool{true, false} {
		s2, err := Open(s.Path(), OpenOptions{ReadOnly: ro})
		if err != nil {
			t.Fatalf("reopen (read-only %v): %v", ro, err)
		}
		must(t, s2.Close())
	}
}

// TestOpenRefusesEmptyFile: a 0-byte file is a store that was truncated as
// often as a new one; taking it as new would restart every stream per
// --reset and skip records. It is refused, read-only or not, with a line
// that says how to start anew, and left as it was.
func TestOpenRefusesEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	writeBytes(t, path, nil)
	for _, ro := range []bool{true, false} {
		_, err := Open(path, OpenOptions{ReadOnly: ro})
		if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "empty") || !strings.Contains(err.Error(), "--store") || !strings.Contains(err.Error(), "remove") {
			t.Errorf("open (read-only %v) of an empty file: %v, want ErrForeign saying how to start anew", ro, err)
		}
	}
	if b := readBytes(t, path); len(b) != 0 {
		t.Errorf("the empty file now holds %d bytes", len(b))
	}
}

// TestOpenRefuses proves that files kbatch must not use are refused with a
// clear error and left byte for byte as they were.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		writeBytes(t, path, data)
		return path
	}
	boltFile := func(name string, fn func(tx *bolt.Tx) error) string {
		path := filepath.Join(dir, name)
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		must(t, db.Update(fn))
		must(t, db.Close())
		return path
	}
	kbatchFile := func(name string, schema string) string {
		path := filepath.Join(dir, name)
		s := mustOpen(t, path)
		must(t, s.Close())
		return boltFile(name, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte(schema)) })
	}
	damaged := func(name string) string {
		path := filepath.Join(dir, name)
		s := mustOpen(t, path)
		must(t, s.EnsureStream("events", nil, nil))
		must(t, s.Close())
		b := readBytes(t, path)
		for i := 2 * os.Getpagesize(); i < len(b); i++ { // keep both meta pages, wreck the rest
			b[i] = 0xab
		}
		return write(name, b)
	}
	noise := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}

	tests := []struct {
		name, path string
		kind       error
		msg        string
	}{
		{"text", write("notes.txt", []byte("hello, not a database\n")), ErrCorrupt, "is not a bbolt file or is damaged"},
		{"noise", write("noise.bin", noise), ErrCorrupt, "is not a bbolt file or is damaged"},
		{"foreign bbolt", boltFile("foreign.db", func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket([]byte("other-app"))
			if err != nil {
				return err
			}
			return b.Put([]byte("k"), []byte("v"))
		}), ErrForeign, "is a bbolt file but not a kbatch store; pass --store to use another file"},
		{"empty bbolt", boltFile("bare.db", func(*bolt.Tx) error { return nil }), ErrForeign, "not a kbatch store"},
		{"newer schema", kbatchFile("future.db", "3"), ErrSchema,
			"was written by a newer kbatch (schema 3, this one reads 2); upgrade kbatch or pass --store"},
		{"garbled schema", kbatchFile("garbled.db", "one"), ErrCorrupt, `has a damaged schema version "one"`},
		{"damaged pages", damaged("damaged.db"), ErrCorrupt, "is damaged ("},
		{"directory", dir, ErrForeign, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := readBytes(t, tt.path)
			for _, ro := range []bool{false, true} {
				s, err := Open(tt.path, OpenOptions{ReadOnly: ro})
				if err == nil {
					_ = s.Close()
					t.Fatalf("Open (read-only %v) succeeded", ro)
				}
				if !errors.Is(err, tt.kind) {
					t.Errorf("Open (read-only %v) = %v, want %v", ro, err, tt.kind)
				}
				var se *StoreError
				if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "store "+tt.path+" ") ||
					!strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "\n") {
					t.Errorf("Open error %q: want one line, a *StoreError naming the file and saying %q", err, tt.msg)
				}
			}
			if after := readBytes(t, tt.path); !bytes.Equal(before, after) {
				t.Errorf("%s was modified", tt.path)
			}
		})
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenLocked(t *testing.T) {
	s := openTest(t)
	want := "store " + s.Path() + " is in use by another kbatch process; pass --store to use another file"
	for _, opt := range []OpenOptions{{}, {ReadOnly: true, Timeout: 100 * time.Millisecond}} {
		start := time.Now()
		s2, err := Open(s.Path(), opt)
		if err == nil {
			_ = s2.Close()
			t.Fatalf("second Open(%+v) succeeded", opt)
		}
		t.Logf("second Open(%+v) failed after %v", opt, time.Since(start).Round(time.Millisecond))
		if !errors.Is(err, ErrLocked) || err.Error() != want {
			t.Errorf("second Open(%+v) = %q, want ErrLocked %q", opt, err, want)
		}
	}
	must(t, s.Close())
	s2, err := Open(s.Path(), OpenOptions{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	_ = s2.Close()
}

func TestOpenReadOnly(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope", "offsets.db")
	if _, err := Open(missing, OpenOptions{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open of a missing file = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open created the folder")
	}

	s := openTest(t)
	must(t, s.EnsureStream("events", []string{"b:9092"}, []string{"events"}))
	must(t, s.Close())
	r1, err := Open(s.Path(), OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Open(s.Path(), OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("second read-only Open: %v", err)
	}
	defer r2.Close()
	if _, ok, err := r2.Stream("events"); !ok || err != nil {
		t.Errorf("Stream on a read-only store = %v, %v", ok, err)
	}
	writes := streamWrites(r1, "events", "x")
	writes["EnsureStream"] = r1.EnsureStream("events", nil, nil)
	for name, err := range writes {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only store = %v, want ErrReadOnly", name, err)
		}
	}
}

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
