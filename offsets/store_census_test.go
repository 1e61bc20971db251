package offsets

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// wideStore makes streams "a" and "b" over 300 partitions: three acked
// batches, every partition moved by offsets set, batch 4 planned. Each
// bucket is large enough to have pages of its own.
func wideStore(t *testing.T, path string) {
	t.Helper()
	s := mustOpen(t, path)
	defer s.Close()
	for _, name := range []string{"a", "b"} {
		mustEnsure(t, s, name)
		for id := uint64(1); id <= 3; id++ {
			must(t, s.Plan(name, testBatch(id, 300, int64(id-1)*10)))
			must(t, s.Ack(name, id, testNow))
		}
		set := map[Partition]int64{}
		for p := range int32(300) {
			set[ev(p)] = 7
		}
		must(t, s.SetNext(name, set, NewEvent(testNow, CodeSet, ev(0), "offsets set")))
		must(t, s.Plan(name, testBatch(4, 300, 7)))
	}
}

// dropLastEntry lowers by one the element count of the last leaf page of
// the bucket at path (names from the root) in the bbolt file b, as one
// damaged byte would: the bucket's last entry is gone, and no value, key
// or order changed.
func dropLastEntry(t *testing.T, file string, b []byte, path ...string) {
	t.Helper()
	db, err := bolt.Open(file, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	_ = db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(path[0]))
		for _, name := range path[1:] {
			bk = bk.Bucket([]byte(name))
		}
		root = uint64(bk.Root())
		return nil
	})
	pageSize := db.Info().PageSize
	_ = db.Close()
	if root == 0 {
		t.Fatalf("bucket %v is inline", path)
	}
	le := binary.LittleEndian
	for id := root; ; {
		page := b[int(id)*pageSize:]
		count := le.Uint16(page[10:])
		if le.Uint16(page[8:]) == boltLeafPage {
			le.PutUint16(page[10:], count-1)
			return
		}
		id = le.Uint64(page[boltPageHeader+int(count-1)*boltElementSize+8:]) // the last child
	}
}

// TestLostEntriesAreRefused: a page that lost its last entry (its element
// count one lower) dropped a stream, a next offset, a jump mark or the
// pending batch with every seal intact; the start went on per --reset,
// without the jump mark, or without re-delivering. Each is now refused.
func TestLostEntriesAreRefused(t *testing.T) {
	clean := filepath.Join(t.TempDir(), "clean.db")
	wideStore(t, clean)
	orig := readBytes(t, clean)
	for _, path := range [][]string{
		{"streams"},
		{"streams", "a", "next"},
		{"streams", "a", "moved"},
		{"streams", "a", "batches"},
	} {
		t.Run(strings.Join(path, "/"), func(t *testing.T) {
			b := append([]byte(nil), orig...)
			dropLastEntry(t, clean, b, path...)
			file := filepath.Join(t.TempDir(), "lost.db")
			writeBytes(t, file, b)
			wantCorruptStart(t, file, "a start reads")
		})
	}
}

// TestMovedElementIsRefusedByAReader points a leaf element of a stream's
// next offsets at the key and value of the element after it (one edited
// byte of its position): both read intact, the count holds, and the
// partition it held was gone from a read-only open (offsets show). The
// walk before any open checks that keys sort in each page.
func TestMovedElementIsRefusedByAReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.db")
	wideStore(t, path)
	b := readBytes(t, path)
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	_ = db.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket(bucketStreams).Bucket([]byte("a")).Bucket(bucketNext).Root())
		return nil
	})
	pageSize := db.Info().PageSize
	_ = db.Close()
	le := binary.LittleEndian
	page := b[int(root)*pageSize:]
	for le.Uint16(page[8:]) == boltBranchPage { // down to the first leaf
		page = b[int(le.Uint64(page[boltPageHeader+8:]))*pageSize:]
	}
	e1, e2 := page[boltPageHeader+boltElementSize:], page[boltPageHeader+2*boltElementSize:]
	le.PutUint32(e1[4:], le.Uint32(e2[4:])+boltElementSize)
	writeBytes(t, path, b)
	for _, ro := range []bool{true, false} {
		s, err := Open(path, OpenOptions{ReadOnly: ro})
		if err == nil {
			info, _, serr := s.Stream("a")
			_ = s.Close()
			t.Fatalf("read-only %v: the store opened; stream a has %d next offsets (%v)", ro, len(info.Next), serr)
		}
		if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") {
			t.Errorf("read-only %v: Open = %v, want one line of ErrCorrupt", ro, err)
		}
	}
}
