package offsets

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedMetaPageUsesTheOtherCopy zeroes one of bbolt's two meta pages
// (or its header): a writable open goes on with the other copy, with every
// position as it was, and leaves two valid meta pages. With both damaged
// the store is refused, and no message quotes a panic.
func TestDamagedMetaPageUsesTheOtherCopy(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	prev, want := fillStoreLastAck(t, clean)
	orig := readBytes(t, clean)
	for _, c := range []struct {
		name     string
		from, to int
	}{{"meta page 0", 0, 4096}, {"meta page 1", 4096, 8192}, {"header of page 0", 0, 16}, {"header of page 1", 4096, 4112},
		{"checksum of meta 0", 72, 80}, {"checksum of meta 1", 4096 + 72, 4096 + 80}} {
		t.Run(c.name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			clear(b[c.from:c.to])
			path := filepath.Join(t.TempDir(), "zeroed.db")
			writeBytes(t, path, b)
			s, err := Open(path, OpenOptions{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			_ = s.Close()
			if got := streamState(t, path); got != want && got != prev {
				t.Errorf("after the open:\n%s\nwant the last transaction's\n%s\nor the one before\n%s", got, want, prev)
			}
			if _, err := repairMeta(path); err != nil {
				t.Errorf("the meta pages after a writable open: %v", err)
			}
			if n, _ := repairMeta(path); n >= 0 {
				t.Errorf("meta page %d was still damaged after a writable open", n)
			}
		})
	}
	t.Run("both meta pages", func(t *testing.T) {
		b := append([]byte(nil), orig...)
		clear(b[:8192])
		path := filepath.Join(t.TempDir(), "zeroed.db")
		writeBytes(t, path, b)
		for _, ro := range []bool{false, true} {
			s, err := Open(path, OpenOptions{ReadOnly: ro})
			if err == nil {
				_ = s.Close()
				t.Fatalf("read-only %v: a store with no valid meta page opened", ro)
			}
			if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "panic") || strings.Contains(err.Error(), "assertion") {
				t.Errorf("read-only %v: Open = %v; want ErrCorrupt without a panic's words", ro, err)
			}
		}
	})
}

// fillStoreLastAck fills a store at path as fillStore does, and returns
// what a start reads (streamState) before and after its last transaction
// (the ack of its last batch). bbolt's two meta pages name these two.
func fillStoreLastAck(t *testing.T, path string) (prev, last string) {
	t.Helper()
	fillStore(t, path, 29)
	s := mustOpen(t, path)
	must(t, s.Plan("events", testBatch(30, 8, 290)))
	_ = s.Close()
	return statesAroundAck(t, path, "events", 30)
}

// statesAroundAck returns what a start reads (streamState) of the closed
// store at path before and after one transaction that acks batch id of
// stream.
func statesAroundAck(t *testing.T, path, stream string, id uint64) (prev, last string) {
	t.Helper()
	prev = streamState(t, path)
	s := mustOpen(t, path)
	must(t, s.Ack(stream, id, testNow))
	_ = s.Close()
	return prev, streamState(t, path)
}
