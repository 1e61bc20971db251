package offsets

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// storeDump is everything a store holds of its streams, as text: what a
// start reads (startState), then each stream's whole batch and event log.
func storeDump(t *testing.T, s *Store) string {
	t.Helper()
	var out strings.Builder
	out.WriteString(startState(s))
	streams, err := s.Streams()
	must(t, err)
	for _, st := range streams {
		batches, err := s.Batches(st.Name, 0)
		must(t, err)
		events, err := s.Events(st.Name, 0)
		must(t, err)
		b, _ := json.Marshal(batches)
		e, _ := json.Marshal(events)
		fmt.Fprintf(&out, "%s batches %s\n%s events %s\n", st.Name, b, st.Name, e)
	}
	return out.String()
}

// dumpOf opens path read-only and dumps it.
func dumpOf(t *testing.T, path string) string {
	t.Helper()
	s, err := Open(path, OpenOptions{ReadOnly: true})
	must(t, err)
	defer s.Close()
	return storeDump(t, s)
}

// folderDump opens the folder store dir (no file to move) and dumps it.
func folderDump(t *testing.T, dir string, opt OpenOptions) string {
	t.Helper()
	s, err := OpenFolder(dir, "", opt)
	must(t, err)
	defer s.Close()
	return storeDump(t, s)
}

func TestStreamFileName(t *testing.T) {
	names := []string{"orders", "a/b", "a_b", "../../etc/passwd", ".hidden", "événements", strings.Repeat("x", 1024), strings.Repeat("x", 1023)}
	seen := map[string]string{}
	for _, n := range names {
		f := streamFileName(n)
		if strings.ContainsAny(f, "/\\\x00") || strings.HasPrefix(f, ".") || !isStreamFile(f) || len(f) > maxFileStem+20 {
			t.Errorf("streamFileName(%q) = %q: not a plain, visible stream file name", n, f)
		}
		if other, dup := seen[f]; dup {
			t.Errorf("streams %q and %q share the file %q", n, other, f)
		}
		seen[f] = n
	}
	if got := streamFileName("orders"); !strings.HasPrefix(got, "orders-") {
		t.Errorf("streamFileName(orders) = %q, want the name readable in it", got)
	}
}

// TestFolderTwoWritersOnTwoStreams: two writable opens of one folder
// store (two kbatch processes: bbolt's lock is per open file, so two
// opens in one process lock each other out as two processes do) write
// two streams at once; the second to touch a stream the first holds is
// refused with ErrLocked and one line naming the stream.
func TestFolderTwoWritersOnTwoStreams(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "streams")
	a, err := OpenFolder(dir, "", OpenOptions{})
	must(t, err)
	b, err := OpenFolder(dir, "", OpenOptions{Timeout: 100 * time.Millisecond})
	must(t, err)
	mustEnsure(t, a, "orders")
	mustEnsure(t, b, "payments")
	for id := uint64(1); id <= 3; id++ {
		must(t, a.Plan("orders", testBatch(id, 2, int64(id-1)*10)))
		must(t, b.Plan("payments", testBatch(id, 3, int64(id-1)*10)))
		must(t, a.Ack("orders", id, testNow))
		must(t, b.Ack("payments", id, testNow))
	}
	_, _, err = b.Stream("orders")
	want := "store " + dir + ` stream orders is in use by another kbatch process; stop it, or pass --name to use another stream`
	if !errors.Is(err, ErrLocked) || err.Error() != want {
		t.Errorf("second writer reading orders: %v, want ErrLocked %q", err, want)
	}
	if err := b.EnsureStream("orders", nil, []string{"events"}); !errors.Is(err, ErrLocked) {
		t.Errorf("second writer writing orders: %v, want ErrLocked", err)
	}
	// Each writer reads the other's stream (offsets show, the picker)
	// without taking it.
	for _, s := range []*Store{a, b} {
		infos, err := s.Streams()
		must(t, err)
		if len(infos) != 2 || infos[0].Name != "orders" || infos[1].Name != "payments" ||
			infos[0].Next[ev(1)] != 30 || infos[1].Next[ev(2)] != 30 {
			t.Errorf("Streams = %+v, want orders and payments at 30", infos)
		}
	}
	must(t, a.Close())
	must(t, b.Close())
	got := folderDump(t, dir, OpenOptions{ReadOnly: true})
	for _, w := range []string{"Name:orders", "Name:payments", "LastBatch:3"} {
		if !strings.Contains(got, w) {
			t.Errorf("after both closed, the folder reads\n%s\nwithout %q", got, w)
		}
	}
	// Once the first let go, the stream is free.
	c, err := OpenFolder(dir, "", OpenOptions{})
	must(t, err)
	must(t, c.Plan("orders", testBatch(4, 2, 30)))
	must(t, c.Close())
}

// TestFolderWriterHoldsANewStreamFromItsFirstRead: a writer that reads a
// stream no file holds yet (a watch planning its start) holds it from
// then on, so a second writer cannot create the stream, write it and go
// away before the first writes the start it planned from nothing.
func TestFolderWriterHoldsANewStreamFromItsFirstRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "streams")
	a, err := OpenFolder(dir, "", OpenOptions{})
	must(t, err)
	defer a.Close()
	if _, ok, err := a.Stream("orders"); err != nil || ok {
		t.Fatalf("a new stream reads ok=%v err=%v, want none yet", ok, err)
	}
	b, err := OpenFolder(dir, "", OpenOptions{Timeout: 100 * time.Millisecond})
	must(t, err)
	defer b.Close()
	if err := b.EnsureStream("orders", nil, []string{"events"}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer creating a stream the first has read: %v, want ErrLocked", err)
	}
	mustEnsure(t, a, "orders")
	must(t, a.Plan("orders", testBatch(1, 2, 0)))
	// A reader lists the stream; an empty stream file lists nothing.
	infos, err := b.Streams()
	must(t, err)
	if len(infos) != 1 || infos[0].Name != "orders" {
		t.Errorf("Streams = %+v, want orders alone", infos)
	}
}

// TestFolderReadersSeeEveryStream: while two writers hold two streams, a
// reader (offsets show, completion) lists both, read from copies, and
// says so.
func TestFolderReadersSeeEveryStream(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "streams")
	for _, name := range []string{"orders", "payments"} {
		s, err := OpenFolder(dir, "", OpenOptions{})
		must(t, err)
		mustEnsure(t, s, name)
		must(t, s.SetNext(name, map[Partition]int64{ev(0): 42}, NewEvent(testNow, CodeSet, ev(0), "offsets set")))
		t.Cleanup(func() { _ = s.Close() })
	}
	r, err := OpenFolder(dir, "", OpenOptions{ReadOnly: true, Snapshot: true})
	must(t, err)
	defer r.Close()
	infos, err := r.Streams()
	must(t, err)
	if len(infos) != 2 || infos[0].Next[ev(0)] != 42 || infos[1].Next[ev(0)] != 42 {
		t.Fatalf("reader's Streams = %+v, want both streams at 42", infos)
	}
	if _, copied := r.Snapshot(); !copied {
		t.Error("the reader read files two writers hold, and Snapshot does not say it read copies")
	}
	if err := r.SetNext("orders", map[Partition]int64{ev(0): 1}, Event{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a read-only folder store wrote: %v", err)
	}
}

// TestFolderRefusesAStreamInAnotherFile: a stream file copied under
// another stream's name is refused (it would give that stream the other
// one's positions), by readers and writers.
func TestFolderRefusesAStreamInAnotherFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "streams")
	s, err := OpenFolder(dir, "", OpenOptions{})
	must(t, err)
	mustEnsure(t, s, "orders")
	must(t, s.Close())
	writeBytes(t, filepath.Join(dir, streamFileName("payments")), readBytes(t, filepath.Join(dir, streamFileName("orders"))))
	r, err := OpenFolder(dir, "", OpenOptions{ReadOnly: true})
	must(t, err)
	if _, err := r.Streams(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "renamed or copied outside kbatch") {
		t.Errorf("reader's Streams: %v, want ErrCorrupt naming the copy", err)
	}
	_ = r.Close()
	w, err := OpenFolder(dir, "", OpenOptions{})
	must(t, err)
	defer w.Close()
	if _, _, err := w.Stream("payments"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("writer's Stream(payments): %v, want ErrCorrupt", err)
	}
}

// TestOpenFolderRefusesAFile: a file where the folder should be is
// refused, not taken as a store.
func TestOpenFolderRefusesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "streams")
	writeBytes(t, path, []byte("x"))
	for _, ro := range []bool{false, true} {
		if _, err := OpenFolder(path, "", OpenOptions{ReadOnly: ro}); !errors.Is(err, ErrForeign) {
			t.Errorf("read-only %v: %v, want ErrForeign", ro, err)
		}
	}
}

// leftovers lists the temporary folders beside dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".*"))
	must(t, err)
	return m
}

// TestMoveKeepsEveryStream: a single-file store with several streams
// (acked and pending batches, events, a seek kept past a pending batch,
// jump marks, topic ids, start choices, a wide stream) moves into a
// folder on the first writable open: every stream reads the same, before
// and after, and the old file is kept as FROM.moved.
func TestMoveKeepsEveryStream(t *testing.T) {
	from, dir := movePaths(t)
	editedStore(t, from)
	before := dumpOf(t, from)
	orig := readBytes(t, from)

	// A reader before the move reads the old file, and moves nothing.
	r, err := OpenFolder(dir, from, OpenOptions{ReadOnly: true})
	must(t, err)
	if got := storeDump(t, r); got != before {
		t.Errorf("a reader before the move reads other streams:\n%s", lineDiff(got, before))
	}
	must(t, r.Close())
	if fileExists(dir) {
		t.Fatal("a read-only open moved the streams")
	}

	s, err := OpenFolder(dir, from, OpenOptions{})
	must(t, err)
	if got := storeDump(t, s); got != before {
		t.Errorf("after the move the store reads other streams:\n%s", lineDiff(got, before))
	}
	// The pending batch is still pending, and the event log goes on
	// after its last event.
	must(t, s.Ack("audit", 7, testNow))
	must(t, s.AddEvent("audit", NewEvent(testNow.Add(time.Hour), CodeSet, ev(0), "after the move")))
	events, err := s.Events("audit", 2)
	must(t, err)
	if len(events) != 2 || events[0].Message != "after the move" {
		t.Errorf("newest events after the move = %+v, want the new one first", events)
	}
	must(t, s.Close())

	if fileExists(from) {
		t.Error("the old file is still under its name after the move")
	}
	if got := readBytes(t, from+movedSuffix); string(got) != string(orig) {
		t.Error("the old file was changed by the move")
	}
	entries, err := os.ReadDir(dir)
	must(t, err)
	if len(entries) != 4 {
		t.Errorf("the folder holds %d files, want one per stream (4)", len(entries))
	}
	for _, e := range entries {
		checkFile(t, filepath.Join(dir, e.Name()))
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary folders left: %v", l)
	}
	// The old file is not read again.
	writeBytes(t, from, orig)
	if got := folderDump(t, dir, OpenOptions{ReadOnly: true}); got == before {
		t.Error("the folder reads as before the ack: the old file was read again")
	}
}

// TestMoveStoppedAtEachStep stops the move at every point a kill can
// land on (after the check, after each stream's file, after the folder
// took its name, before the old file is renamed): the next open, reader
// or writer, reads every stream as it was, and no temporary folder is
// left once a writer opened.
func TestMoveStoppedAtEachStep(t *testing.T) {
	root := t.TempDir()
	clean := filepath.Join(root, "clean.db")
	editedStore(t, clean)
	want := dumpOf(t, clean)
	orig := readBytes(t, clean)
	steps := []string{"checked", "stream audit", "stream events", "stream orders", "stream wide", "folder"}
	errKilled := errors.New("killed")
	for i, step := range steps {
		t.Run(strings.ReplaceAll(step, " ", "_"), func(t *testing.T) {
			base := filepath.Join(root, fmt.Sprint(i))
			must(t, os.Mkdir(base, 0o700))
			from, dir := filepath.Join(base, "offsets.db"), filepath.Join(base, "streams")
			writeBytes(t, from, orig)
			reached := false
			err := moveStreams(from, dir, 0, func(s string) error {
				if s == step {
					reached = true
					return errKilled
				}
				return nil
			})
			if !reached || !errors.Is(err, errKilled) {
				t.Fatalf("the move did not stop at %q: %v", step, err)
			}
			if step != "folder" && fileExists(dir) {
				t.Fatalf("stopped at %q, the folder has its name", step)
			}
			for _, ro := range []bool{true, false} {
				s, err := OpenFolder(dir, from, OpenOptions{ReadOnly: ro})
				if err != nil {
					t.Fatalf("read-only %v: open after a stop at %q: %v", ro, step, err)
				}
				if got := storeDump(t, s); got != want {
					t.Errorf("read-only %v: after a stop at %q the store reads other streams:\n%s", ro, step, lineDiff(got, want))
				}
				must(t, s.Close())
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Errorf("temporary folders left after a writable open: %v", l)
			}
		})
	}
}

// TestMoveRefusesADamagedStore: an old file a writable open refuses (a
// batch's value edited, a damaged page) is refused by the move with the
// same line, left byte for byte as it was, and no folder is made.
func TestMoveRefusesADamagedStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		kind error
		says string
	}{
		{"batch", func(b []byte) []byte { return editAll(t, b, []byte(`"until":1017`), []byte(`"until":1273`)) },
			ErrChecksum, "batch 1 fails its checksum"},
		{"page id", func(b []byte) []byte {
			b[2*4096] ^= 0xFF // the first page after the meta pages says it is another
			return b
		}, ErrCorrupt, "is damaged"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			from, dir := movePaths(t)
			edited := tc.edit(readBytes(t, storeWithAckedBatch(t)))
			writeBytes(t, from, edited)
			_, err := OpenFolder(dir, from, OpenOptions{})
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), from) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("open of a folder from an edited store: %v, want one line naming %s, %q", err, from, tc.says)
			}
			if fileExists(dir) || len(leftovers(t, dir)) != 0 {
				t.Error("a folder was made from a damaged store")
			}
			if string(readBytes(t, from)) != string(edited) {
				t.Error("the damaged store was changed")
			}
		})
	}
}

// TestMoveKeepsAnEditedNextOffsetRefused: a next offset edited outside
// kbatch does not stop a writable open (offsets set mends it), so it
// does not stop the move either; the moved stream refuses a start with
// the same ChecksumError, and offsets set still mends it.
func TestMoveKeepsAnEditedNextOffsetRefused(t *testing.T) {
	from, dir := movePaths(t)
	writeBytes(t, from, editAll(t, readBytes(t, storeWithAckedBatch(t)), offsetValue(1017), offsetValue(1273)))
	s, err := OpenFolder(dir, from, OpenOptions{})
	must(t, err)
	defer s.Close()
	_, _, err = s.Stream("events")
	var sum *ChecksumError
	if !errors.As(err, &sum) || sum.Stored != 1273 || sum.AckedUntil != 1017 {
		t.Fatalf("moved stream with an edited next offset: Stream = %v, want its ChecksumError", err)
	}
	must(t, s.SetNext("events", map[Partition]int64{ev(0): 1017}, NewEvent(testNow, CodeSet, ev(0), "offsets set")))
	if info, _, err := s.Stream("events"); err != nil || info.Next[ev(0)] != 1017 {
		t.Errorf("after offsets set: %v, %v", info.Next, err)
	}
}

// TestEditedStreamFileBytes is TestEditedStoreBytes for the files of a
// folder store: each stream file of a moved store, its bytes edited one
// at a time (every 13th past the meta pages and page headers, all of
// those), opened through the folder as a watch opens it. Each must read
// exactly the stream as moved — an edited meta page too, as the move
// leaves both meta pages naming the whole stream — or refuse with one
// line, never a panic, never other positions.
func TestEditedStreamFileBytes(t *testing.T) {
	root := t.TempDir()
	from, moved := filepath.Join(root, "offsets.db"), filepath.Join(root, "moved")
	editedStore(t, from)
	s, err := OpenFolder(moved, from, OpenOptions{})
	must(t, err)
	must(t, s.Close())
	const stride = 13
	for _, name := range []string{"orders", "wide"} {
		t.Run(name, func(t *testing.T) {
			orig := readBytes(t, filepath.Join(moved, streamFileName(name)))
			dir := filepath.Join(t.TempDir(), "streams")
			must(t, os.Mkdir(dir, 0o700))
			path := filepath.Join(dir, streamFileName(name))
			writeBytes(t, path, orig)
			want, err := openFolderAndStart(dir)
			must(t, err)
			used, types := usedBytes(orig, 4096)
			t.Logf("pages: %v", types)
			same, refused := 0, 0
			for i := range orig {
				if !used[i] || (i >= 2*4096 && i%4096 >= boltPageHeader && i%stride != 0) {
					continue
				}
				b := append([]byte(nil), orig...)
				b[i] ^= 0xFF
				writeBytes(t, path, b)
				got, err := openFolderAndStart(dir)
				if err != nil {
					refused++
					if i < 2*4096 {
						t.Errorf("byte %d of a meta page: refused with %v; the other meta page names the whole stream", i, err)
					}
					if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
						t.Errorf("byte %d: refused with %q; want one line without a panic", i, msg)
					}
					if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrForeign) && !errors.Is(err, ErrSchema) {
						t.Errorf("byte %d: refused with %v, not a store error", i, err)
					}
					continue
				}
				if got != want {
					t.Errorf("byte %d (page %d): a start reads other positions:\n%s", i, i/4096, lineDiff(got, want))
					continue
				}
				same++
			}
			t.Logf("%d bytes of %d edited: %d read the same, %d refused", same+refused, len(orig), same, refused)
		})
	}
}

// openFolderAndStart opens the folder store dir writable and reads what a
// start reads of each stream (openAndStart for a folder).
func openFolderAndStart(dir string) (string, error) {
	s, err := OpenFolder(dir, "", OpenOptions{})
	if err != nil {
		return "", err
	}
	defer s.Close()
	return startOf(s)
}
