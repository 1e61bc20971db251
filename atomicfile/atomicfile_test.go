package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// calls replaces the file system calls Commit makes with ones that record
// their order, and fail where fail says (by call name); it restores them
// when the test ends.
func calls(t *testing.T, fail map[string]error) *[]string {
	t.Helper()
	var got []string
	sf, rn, ln, sd := syncFile, rename, link, syncDir
	t.Cleanup(func() { syncFile, rename, link, syncDir = sf, rn, ln, sd })
	record := func(name string) error {
		got = append(got, name)
		return fail[name]
	}
	syncFile = func(f *os.File) error {
		if err := record("sync file"); err != nil {
			return err
		}
		return sf(f)
	}
	rename = func(from, to string) error {
		if err := record("rename"); err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return rn(from, to)
	}
	link = func(from, to string) error {
		if err := record("link"); err != nil {
			return &os.LinkError{Op: "link", Old: from, New: to, Err: err}
		}
		return ln(from, to)
	}
	syncDir = func(dir string) error {
		if err := record("sync folder " + dir); err != nil {
			return err
		}
		return sd(dir)
	}
	return &got
}

// withOld makes dir/out holding "old" and returns its path.
func withOld(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	return path
}

// onlyFile fails unless path's folder holds path alone, with want in it.
func onlyFile(t *testing.T, path, want string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(path) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("folder holds %q, want only %s", names, filepath.Base(path))
	}
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Fatalf("%s holds %q, want %q", path, got, want)
	}
}

// written starts a File for path holding "new".
func written(t *testing.T, path string) *File {
	t.Helper()
	f, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	return f
}

// namesPath fails unless err is an *fs.PathError on path wrapping cause.
func namesPath(t *testing.T, err error, path string, cause error) {
	t.Helper()
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, cause) {
		t.Fatalf("error %v (%T), want one naming %s wrapping %v", err, err, path, cause)
	}
}

func TestCommitSyncsTheFileThenRenamesThenSyncsTheFolder(t *testing.T) {
	path := withOld(t)
	got := calls(t, nil)
	if err := WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"sync file", "rename", "sync folder " + filepath.Dir(path)}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("calls %q, want %q", *got, want)
	}
	onlyFile(t, path, "new")
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestCommitNewLinksThenSyncsTheFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	got := calls(t, nil)
	f := written(t, path)
	if err := f.CommitNew(); err != nil {
		t.Fatal(err)
	}
	want := []string{"sync file", "link", "sync folder " + filepath.Dir(path)}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("calls %q, want %q", *got, want)
	}
	onlyFile(t, path, "new")
}

// A failure at any step before the rename leaves the old file as it was,
// no temporary file, and an error naming the path the caller gave.
func TestAFailedCommitKeepsTheOldFileAndLeavesNoTemporaryFile(t *testing.T) {
	for _, step := range []string{"sync file", "rename"} {
		t.Run(step, func(t *testing.T) {
			path := withOld(t)
			calls(t, map[string]error{step: syscall.EIO})
			err := WriteFile(path, []byte("new"), 0o600)
			namesPath(t, err, path, syscall.EIO)
			onlyFile(t, path, "old")
		})
	}
}

func TestCommitNewRefusesAPathThatExists(t *testing.T) {
	path := withOld(t)
	f := written(t, path)
	namesPath(t, f.CommitNew(), path, fs.ErrExist)
	onlyFile(t, path, "old")
}

// Without hard links (some FUSE and network file systems) CommitNew
// renames.
func TestCommitNewRenamesWhereLinksFail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	calls(t, map[string]error{"link": syscall.EPERM})
	f := written(t, path)
	if err := f.CommitNew(); err != nil {
		t.Fatal(err)
	}
	onlyFile(t, path, "new")
}

// A folder that cannot be synced is reported (the new name may not
// survive a crash), unless the file system cannot sync folders at all.
func TestAFolderThatCannotBeSyncedIsReported(t *testing.T) {
	path := withOld(t)
	calls(t, map[string]error{"sync folder " + filepath.Dir(path): syscall.EIO})
	namesPath(t, WriteFile(path, []byte("new"), 0o600), path, syscall.EIO)
	onlyFile(t, path, "new")

	path = withOld(t)
	calls(t, map[string]error{"sync folder " + filepath.Dir(path): syscall.EINVAL})
	if err := WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatalf("a file system that cannot sync a folder: %v", err)
	}
	onlyFile(t, path, "new")
}

func TestAbortKeepsTheOldFile(t *testing.T) {
	path := withOld(t)
	f := written(t, path)
	f.Abort()
	f.Abort()
	onlyFile(t, path, "old")
	namesPath(t, f.Commit(), path, os.ErrClosed)
	if _, err := f.Write(nil); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("write after abort: %v", err)
	}
}

func TestCreateInAMissingFolderFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "out")
	if err := WriteFile(path, []byte("new"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the folder was made: %v", err)
	}
}

func TestLeftoversListsOtherTemporaryFilesOfThePathOnly(t *testing.T) {
	path := withOld(t)
	dir := filepath.Dir(path)
	left := filepath.Join(dir, ".out.123.partial")
	for _, p := range []string{left, filepath.Join(dir, ".other.1.partial"), filepath.Join(dir, ".out.2.tmp")} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if got := f.Leftovers(); !reflect.DeepEqual(got, []string{left}) {
		t.Fatalf("leftovers %q, want %q", got, []string{left})
	}
}

// A real rename that fails (a folder took the name meanwhile) names the
// path the caller gave, not the temporary file, and leaves no temporary
// file.
func TestCommitOverAFolderNamesThePathAndLeavesNoTemporaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f := written(t, path)
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := f.Commit()
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != path || strings.Contains(err.Error(), tempSuffix) {
		t.Fatalf("error %v, want one naming %s only", err, path)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want the folder out alone", len(entries))
	}
}
