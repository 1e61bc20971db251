package offsets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// movePaths is where a test keeps an old single store file and the
// folder its streams move to.
func movePaths(t *testing.T) (from, dir string) {
	root := t.TempDir()
	return filepath.Join(root, "offsets.db"), filepath.Join(root, "streams")
}

// oldStoreWith writes the store file from with the streams names, the
// i-th of them with one acked batch of one partition starting at i*10.
func oldStoreWith(t *testing.T, from string, names ...string) {
	t.Helper()
	s := mustOpen(t, from)
	for i, name := range names {
		mustEnsure(t, s, name)
		must(t, s.Plan(name, testBatch(1, 1, int64(i)*10)))
		must(t, s.Ack(name, 1, testNow))
	}
	must(t, s.Close())
}

// openTogether opens the folder store dir (moving from, when given) in n
// writers at one moment, each then creating the stream name(i), and
// returns each writer's error once every store is closed again.
func openTogether(t *testing.T, n int, dir, from string, timeout time.Duration, name func(int) string) []error {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	stores := make([]*Store, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st, err := OpenFolder(dir, from, OpenOptions{Timeout: timeout})
			if err != nil {
				errs[i] = err
				return
			}
			stores[i] = st
			errs[i] = st.EnsureStream(name(i), []string{"127.0.0.1:9092"}, []string{"events"})
		}()
	}
	close(start)
	wg.Wait()
	for _, st := range stores {
		if st != nil {
			must(t, st.Close())
		}
	}
	return errs
}

// TestMoveWithWritersStartingTogether: the first kbatch processes after
// the upgrade start at one moment, each on its own stream: one moves the
// old file's streams, the others wait for it and then use the folder.
// None fails, none recreates the old file, every stream is kept.
func TestMoveWithWritersStartingTogether(t *testing.T) {
	const writers = 4
	for try := range 20 {
		from, dir := movePaths(t)
		s := mustOpen(t, from)
		mustEnsure(t, s, "old")
		must(t, s.Plan("old", testBatch(1, 2, 0)))
		must(t, s.Ack("old", 1, testNow))
		must(t, s.Close())

		errs := openTogether(t, writers, dir, from, 5*time.Second, func(i int) string { return fmt.Sprint("w", i) })
		for i, err := range errs {
			if err != nil {
				t.Errorf("try %d: writer %d: %v", try, i, err)
			}
		}
		if fileExists(from) {
			t.Errorf("try %d: %s exists again after the move", try, from)
		}
		got := folderDump(t, dir, OpenOptions{ReadOnly: true})
		for _, w := range []string{"Name:old", "Name:w0", "Name:w3"} {
			if !strings.Contains(got, w) {
				t.Errorf("try %d: the folder reads\n%s\nwithout %q", try, got, w)
			}
		}
		if t.Failed() {
			return
		}
	}
}

// TestFolderSameNewStreamTogether: writers starting one new stream at
// one moment: exactly one holds it, the others are told it is in use.
func TestFolderSameNewStreamTogether(t *testing.T) {
	const writers = 4
	for try := range 20 {
		dir := filepath.Join(t.TempDir(), "streams")
		errs := openTogether(t, writers, dir, "", 300*time.Millisecond, func(int) string { return "orders" })
		held := 0
		for i, err := range errs {
			switch {
			case err == nil:
				held++
			case !errors.Is(err, ErrLocked):
				t.Errorf("try %d: writer %d: %v, want ErrLocked", try, i, err)
			}
		}
		if held != 1 {
			t.Errorf("try %d: %d writers hold the stream, want 1", try, held)
		}
		entries, err := os.ReadDir(dir)
		must(t, err)
		if len(entries) != 1 {
			t.Errorf("try %d: the folder holds %d entries, want the stream's file", try, len(entries))
		}
		if t.Failed() {
			return
		}
	}
}

// TestMoveKeepsOddStreamNames: streams whose names are no file name (a
// path, a long name, unicode, names that differ only in case, a dot) move
// into files of their own, none sharing a file name when case is ignored
// (macOS, Windows), and each reads back under its own name.
func TestMoveKeepsOddStreamNames(t *testing.T) {
	names := []string{"../x", "..", ".", "a/../../b", strings.Repeat("long", 80), "заказы", "注文",
		"Orders", "orders", "ORDERS", "x.db", "a b", "tab\tname", "-", "_"}
	from, dir := movePaths(t)
	oldStoreWith(t, from, names...)

	f, err := OpenFolder(dir, from, OpenOptions{})
	must(t, err)
	defer f.Close()
	infos, err := f.Streams()
	must(t, err)
	if len(infos) != len(names) {
		t.Fatalf("after the move %d streams, want %d", len(infos), len(names))
	}
	for i, name := range names {
		info, ok, err := f.Stream(name)
		if err != nil || !ok || info.Next[ev(0)] != int64(i)*10+10 {
			t.Errorf("stream %q after the move: %+v %v %v, want next %d", name, info, ok, err, i*10+10)
		}
	}
	entries, err := os.ReadDir(dir)
	must(t, err)
	folded := map[string]string{}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || strings.ContainsAny(n, "/\\") || len(n) > 100 {
			t.Errorf("stream file %q: want a plain file name", n)
		}
		if prev, dup := folded[strings.ToLower(n)]; dup {
			t.Errorf("stream files %q and %q are one file where case is ignored", prev, n)
		}
		folded[strings.ToLower(n)] = n
	}
	if len(entries) != len(names) {
		t.Errorf("the folder holds %d files, want %d", len(entries), len(names))
	}
}

// TestMoveOfAStoreWithoutStreams: an old file with no stream moves into
// an empty folder, and is kept as FROM.moved.
func TestMoveOfAStoreWithoutStreams(t *testing.T) {
	from, dir := movePaths(t)
	must(t, mustOpen(t, from).Close())
	f, err := OpenFolder(dir, from, OpenOptions{})
	must(t, err)
	infos, err := f.Streams()
	must(t, err)
	must(t, f.Close())
	if len(infos) != 0 || !fileExists(dir) || fileExists(from) || !fileExists(from+movedSuffix) {
		t.Errorf("streams %v, folder made %v, old file under its name %v, kept as .moved %v",
			infos, fileExists(dir), fileExists(from), fileExists(from+movedSuffix))
	}
}

// TestMoveOfEditedStoreBytes edits an old single-file store's bytes one
// at a time (the meta pages and page headers all, every 13th byte past
// them) and opens the folder from it as a watch does: the move either
// refuses with one line, leaving the old file byte for byte as it was
// and no folder nor temporary folder, or a start reads every stream after
// the move as a start from the same edited file reads it, the same
// positions or the same refusal (an edited next offset moves as it is,
// and is refused at the start, as TestMoveKeepsAnEditedNextOffsetRefused).
func TestMoveOfEditedStoreBytes(t *testing.T) {
	root := t.TempDir()
	clean := filepath.Join(root, "clean.db")
	editedStore(t, clean)
	orig := readBytes(t, clean)
	used, _ := usedBytes(orig, 4096)
	storePath := regexp.MustCompile(`store \S+/(single\.db|streams/[^ :]+)`)
	const stride = 13
	moved, refused := 0, 0
	for i := range orig {
		if !used[i] || (i >= 2*4096 && i%4096 >= boltPageHeader && i%stride != 0) {
			continue
		}
		b := append([]byte(nil), orig...)
		b[i] ^= 0xFF
		base := filepath.Join(root, fmt.Sprint(i))
		must(t, os.Mkdir(base, 0o700))
		single, from, dir := filepath.Join(base, "single.db"), filepath.Join(base, "offsets.db"), filepath.Join(base, "streams")
		writeBytes(t, single, b)
		writeBytes(t, from, b)
		want, wantErr := openAndStart(single)
		s, err := OpenFolder(dir, from, OpenOptions{})
		if err != nil {
			refused++
			if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "panic") || !strings.Contains(msg, from) {
				t.Errorf("byte %d: refused with %q; want one line naming %s", i, msg, from)
			}
			if wantErr == nil {
				t.Errorf("byte %d: the move refused with %v, a start from the file did not", i, err)
			}
			if fileExists(dir) || len(leftovers(t, dir)) != 0 || string(readBytes(t, from)) != string(b) {
				t.Errorf("byte %d: refused, but a folder was made (%v), temporary folders left (%v) or the file changed",
					i, fileExists(dir), leftovers(t, dir))
			}
			must(t, os.RemoveAll(base))
			continue
		}
		moved++
		got, gotErr := startOf(s)
		must(t, s.Close())
		switch {
		case (gotErr == nil) != (wantErr == nil):
			t.Errorf("byte %d: a start after the move: %v; from the file: %v", i, gotErr, wantErr)
		case gotErr != nil:
			if g, w := storePath.ReplaceAllString(gotErr.Error(), "store FILE"), storePath.ReplaceAllString(wantErr.Error(), "store FILE"); g != w {
				t.Errorf("byte %d: a start after the move refuses with\n%s\nfrom the file with\n%s", i, g, w)
			}
		case got != want:
			t.Errorf("byte %d: after the move a start reads other positions:\n%s", i, lineDiff(got, want))
		}
		must(t, os.RemoveAll(base))
	}
	t.Logf("%d bytes edited: %d moved, %d refused", moved+refused, moved, refused)
}

// TestOpenFolderBesideAnOldStoreWithStreams: a folder that holds no
// stream file (made by hand, or a link to an empty folder elsewhere)
// beside an old store file holding streams is refused, by readers and
// writers, in one line naming both: taking it as the store would start
// every stream of the old file anew (per --reset) without a word. A
// link to a folder that does not exist is refused too, naming the link.
func TestOpenFolderBesideAnOldStoreWithStreams(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
		says string
	}{
		{"empty folder", func(t *testing.T, dir string) { must(t, os.Mkdir(dir, 0o700)) }, "holds no stream"},
		{"link to an empty folder", func(t *testing.T, dir string) {
			must(t, os.Symlink(t.TempDir(), dir))
		}, "holds no stream"},
		{"link to nothing", func(t *testing.T, dir string) {
			must(t, os.Symlink(filepath.Join(t.TempDir(), "gone"), dir))
		}, "is a link to"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			from, dir := movePaths(t)
			oldStoreWith(t, from, "orders")
			orig := readBytes(t, from)
			tc.make(t, dir)
			for _, ro := range []bool{true, false} {
				s, err := OpenFolder(dir, from, OpenOptions{ReadOnly: ro})
				if err == nil {
					infos, serr := s.Streams()
					_ = s.Close()
					t.Errorf("read-only %v: opened, streams %v %v; want it refused", ro, infos, serr)
					continue
				}
				if msg := err.Error(); !strings.Contains(msg, tc.says) || !strings.Contains(msg, dir) || strings.Contains(msg, "\n") {
					t.Errorf("read-only %v: %q, want one line naming %s, %q", ro, msg, dir, tc.says)
				}
			}
			if string(readBytes(t, from)) != string(orig) {
				t.Error("the old store file was changed")
			}
		})
	}
}

// TestOpenFolderBesideAnOldStoreWithoutStreams: an existing folder beside
// an old file with no stream (a move stopped before the old file took its
// new name) is the store; nothing is refused.
func TestOpenFolderBesideAnOldStoreWithoutStreams(t *testing.T) {
	from, dir := movePaths(t)
	must(t, mustOpen(t, from).Close())
	must(t, os.Mkdir(dir, 0o700))
	for _, ro := range []bool{true, false} {
		s, err := OpenFolder(dir, from, OpenOptions{ReadOnly: ro})
		must(t, err)
		must(t, s.Close())
	}
}

// TestMoveKeepsAnEarlierMovedFile: an old file moved while the file of an
// earlier move is still there (its folder removed since) takes the next
// free name; the earlier one is kept byte for byte.
func TestMoveKeepsAnEarlierMovedFile(t *testing.T) {
	from, dir := movePaths(t)
	for i, name := range []string{"first", "second", "third"} {
		s := mustOpen(t, from)
		mustEnsure(t, s, name)
		must(t, s.Close())
		orig := readBytes(t, from)
		f, err := OpenFolder(dir, from, OpenOptions{})
		must(t, err)
		must(t, f.Close())
		want := from + movedSuffix
		if i > 0 {
			want = fmt.Sprintf("%s%s.%d", from, movedSuffix, i+1)
		}
		if got := readBytes(t, want); string(got) != string(orig) {
			t.Errorf("move %d: %s does not hold the file moved", i+1, want)
		}
		must(t, os.RemoveAll(dir))
	}
	if s := dumpOf(t, from+movedSuffix); !strings.Contains(s, "Name:first") || strings.Contains(s, "Name:second") {
		t.Errorf("the first moved file was replaced:\n%s", s)
	}
}

// TestFolderReaderNeverTakesACopyForTheStream: a copy of a stream's file
// kept in the folder under another name (a backup made by hand, older
// positions in it) is refused by Streams, and a reader that goes on to
// read the stream by name (offsets show --name, export) reads the
// stream's own file, never the copy.
func TestFolderReaderNeverTakesACopyForTheStream(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "streams")
	s, err := OpenFolder(dir, "", OpenOptions{})
	must(t, err)
	mustEnsure(t, s, "orders")
	must(t, s.Plan("orders", testBatch(1, 1, 0)))
	must(t, s.Ack("orders", 1, testNow))
	must(t, s.Close())
	writeBytes(t, filepath.Join(dir, "backup.db"), readBytes(t, filepath.Join(dir, streamFileName("orders"))))
	s, err = OpenFolder(dir, "", OpenOptions{})
	must(t, err)
	must(t, s.Plan("orders", testBatch(2, 1, 10)))
	must(t, s.Ack("orders", 2, testNow))
	must(t, s.Close())

	r, err := OpenFolder(dir, "", OpenOptions{ReadOnly: true, Snapshot: true})
	must(t, err)
	defer r.Close()
	if _, err := r.Streams(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Streams with a copy in the folder: %v, want ErrCorrupt", err)
	}
	info, ok, err := r.Stream("orders")
	if err != nil || !ok || info.LastBatch != 2 || info.Next[ev(0)] != 20 {
		t.Errorf("Stream(orders) after Streams: last batch %d next %v (%v, %v); want the stream's own file: batch 2, next 20",
			info.LastBatch, info.Next, ok, err)
	}
}
