package record

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCreateFileRefusesExistingWithoutReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateFile(path, false); !errors.Is(err, ErrExists) {
		t.Fatalf("got %v, want ErrExists", err)
	}
	if _, err := CreateFile(dir, true); !errors.Is(err, ErrIsFolder) {
		t.Fatalf("folder: got %v, want ErrIsFolder", err)
	}
}

func TestWriteFileNewIsPrivateAndComplete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	recs := []Record{{Topic: "t", Offset: 1, Timestamp: time.UnixMilli(0), Value: []byte("a")}, {Topic: "t", Offset: 2, Timestamp: time.UnixMilli(0), Value: []byte{0xff}}}
	n, err := WriteFile(path, false, func(put func(*Record) error) error {
		for i := range recs {
			if err := put(&recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("n %d, err %v", n, err)
	}
	got, _ := os.ReadFile(path)
	want := string(AppendJSON(AppendJSON(nil, &recs[0]), &recs[1]))
	if string(got) != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// A failed fill leaves the earlier file as it was and no temporary file.
func TestWriteFileFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	_, err := WriteFile(path, true, func(put func(*Record) error) error {
		if err := put(&Record{Topic: "t"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Fatalf("old file changed: %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// Replacing keeps the file's mode.
	if _, err := WriteFile(path, true, func(func(*Record) error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
}

// TestReplaceThroughASymlinkReplacesItsFile: replacing a path that is a
// symbolic link to a file replaced the link with a regular file, leaving
// the file it named as it was (a shell's > writes the file).
func TestReplaceThroughASymlinkReplacesItsFile(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(data, "out.jsonl")
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "out-link.jsonl")
	if err := os.Symlink("data/out.jsonl", link); err != nil {
		t.Fatal(err)
	}
	f, err := CreateFile(link, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v, %v)", link, fi.Mode(), err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new\n" {
		t.Fatalf("the link's file holds %q, want the new content", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Fatalf("the link's file has mode %v, want its own 0640 kept", fi.Mode().Perm())
	}
	for _, d := range []string{dir, data} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if filepath.Ext(e.Name()) == ".partial" {
				t.Errorf("temporary file %s left in %s", e.Name(), d)
			}
		}
	}
}

// TestReplaceRefusesALinkToNothingOrALoop: with replace, a Stat error
// other than "does not exist" (a link loop) and a link to nothing are not
// taken as "no file here": the link is not replaced by a regular file.
func TestReplaceRefusesALinkToNothingOrALoop(t *testing.T) {
	dir := t.TempDir()
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("missing/out.jsonl", dangling); err != nil {
		t.Fatal(err)
	}
	loopA, loopB := filepath.Join(dir, "loop-a"), filepath.Join(dir, "loop-b")
	if err := os.Symlink("loop-b", loopA); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-a", loopB); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateFile(dangling, true); !errors.Is(err, ErrDanglingLink) {
		t.Errorf("a link to nothing: got %v, want ErrDanglingLink", err)
	}
	if _, err := CreateFile(loopA, true); err == nil {
		t.Error("a link loop: no error")
	}
	for _, l := range []string{dangling, loopA, loopB} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symbolic link (%v)", l, err)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 3 {
		t.Errorf("the folder holds %d entries, want the 3 links only", len(es))
	}
}
