package offsets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMoveWithWritersStartingTogether: the first kbatch processes after
// the upgrade start at one moment, each on its own stream: one moves the
// old file's streams, the others wait for it and then use the folder.
// None fails, none recreates the old file, every stream is kept.
func TestMoveWithWritersStartingTogether(t *testing.T) {
	const writers = 4
	for round := range 20 {
		root := t.TempDir()
		from, dir := filepath.Join(root, "offsets.db"), filepath.Join(root, "streams")
		s := mustOpen(t, from)
		mustEnsure(t, s, "old")
		must(t, s.Plan("old", testBatch(1, 2, 0)))
		must(t, s.Ack("old", 1, testNow))
		must(t, s.Close())

		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, writers)
		stores := make([]*Store, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				st, err := OpenFolder(dir, from, OpenOptions{Timeout: 5 * time.Second})
				if err != nil {
					errs[i] = err
					return
				}
				stores[i] = st
				errs[i] = st.EnsureStream(fmt.Sprint("w", i), []string{"127.0.0.1:9092"}, []string{"events"})
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: writer %d: %v", round, i, err)
			}
		}
		for _, st := range stores {
			if st != nil {
				must(t, st.Close())
			}
		}
		if fileExists(from) {
			t.Errorf("round %d: %s exists again after the move", round, from)
		}
		got := folderDump(t, dir, OpenOptions{ReadOnly: true})
		for _, w := range []string{"Name:old", "Name:w0", "Name:w3"} {
			if !strings.Contains(got, w) {
				t.Errorf("round %d: the folder reads\n%s\nwithout %q", round, got, w)
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
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), "streams")
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, writers)
		stores := make([]*Store, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				st, err := OpenFolder(dir, "", OpenOptions{Timeout: 300 * time.Millisecond})
				if err != nil {
					errs[i] = err
					return
				}
				stores[i] = st
				errs[i] = st.EnsureStream("orders", []string{"127.0.0.1:9092"}, []string{"events"})
			}()
		}
		close(start)
		wg.Wait()
		held := 0
		for i, err := range errs {
			switch {
			case err == nil:
				held++
			case !errors.Is(err, ErrLocked):
				t.Errorf("round %d: writer %d: %v, want ErrLocked", round, i, err)
			}
		}
		if held != 1 {
			t.Errorf("round %d: %d writers hold the stream, want 1", round, held)
		}
		for _, st := range stores {
			if st != nil {
				must(t, st.Close())
			}
		}
		entries, err := os.ReadDir(dir)
		must(t, err)
		if len(entries) != 1 {
			t.Errorf("round %d: the folder holds %d entries, want the stream's file", round, len(entries))
		}
		if t.Failed() {
			return
		}
	}
}
