package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestResolvedPathFollowsLinksAsTheKernelDoes: a path to a file that does
// not exist yet names the store's future file through a chain of more
// than 8 links, or through "link/.." (the link target's folder, not the
// link's); both are resolved as open(2) would resolve them, so the
// same-file check sees the store.
func TestResolvedPathFollowsLinksAsTheKernelDoes(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "st", "o.db") // not made yet
	if err := os.MkdirAll(filepath.Join(dir, "st", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	prev := store
	for i := range 12 {
		l := filepath.Join(dir, "c"+strconv.Itoa(i))
		if err := os.Symlink(prev, l); err != nil {
			t.Fatal(err)
		}
		prev = l
	}
	if err := os.Symlink(filepath.Join(dir, "st", "x"), filepath.Join(dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("st/x", filepath.Join(dir, "rel")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{prev, filepath.Join(dir, "lnk") + "/../o.db", filepath.Join(dir, "rel") + "/../o.db",
		filepath.Join(dir, "st", ".", "x", "..", "o.db")} {
		if !sameFile(p, store) {
			t.Errorf("%s: not seen as %s (resolved %s)", p, store, resolvedPath(p))
		}
	}
	for _, p := range []string{filepath.Join(dir, "o.db"), filepath.Join(dir, "st", "x", "o.db")} {
		if sameFile(p, store) {
			t.Errorf("%s seen as %s", p, store)
		}
	}
}
