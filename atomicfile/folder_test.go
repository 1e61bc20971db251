package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestFolderCommitNew: files written in the temporary folder appear under
// the path all at once; until then the path does not exist, and the
// unfinished folder is listed as a leftover.
func TestFolderCommitNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "streams")
	d, err := CreateFolder(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(d.TempName(), "a.db"), []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the path exists before CommitNew: %v", err)
	}
	if l := FolderLeftovers(path); len(l) != 1 || l[0] != d.TempName() {
		t.Errorf("FolderLeftovers = %v, want the unfinished %s", l, d.TempName())
	}
	if err := d.CommitNew(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(path, "a.db")); err != nil || string(b) != "a" {
		t.Errorf("after CommitNew: %q, %v", b, err)
	}
	if l := FolderLeftovers(path); len(l) != 0 {
		t.Errorf("leftovers after CommitNew: %v", l)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder's mode: %v, %v; want 0700", fi.Mode(), err)
	}
}

// TestFolderCommitNewKeepsAnExistingPath: a path that exists (another
// process got there first) is not replaced, even by an empty folder's
// rename, which the system would allow; Abort then removes the
// temporary folder.
func TestFolderCommitNewKeepsAnExistingPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "streams")
	d, err := CreateFolder(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitNew(); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CommitNew over an existing folder: %v, want fs.ErrExist", err)
	}
	d.Abort()
	if l := FolderLeftovers(path); len(l) != 0 {
		t.Errorf("leftovers after Abort: %v", l)
	}
}

// TestRenameSyncsTheFolder: Rename moves the file and syncs the folder it
// lands in.
func TestRenameSyncsTheFolder(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "a.moved")
	if err := WriteFile(from, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var synced []string
	old := syncDir
	syncDir = func(d string) error { synced = append(synced, d); return nil }
	defer func() { syncDir = old }()
	if err := Rename(from, to); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(to); err != nil || len(synced) != 1 || synced[0] != dir {
		t.Errorf("Rename: %v, folders synced %v; want %s synced", err, synced, dir)
	}
}
