package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Folder is a folder being filled in place of a path that does not exist
// yet: files go into a temporary folder beside it (".NAME.*.partial", mode
// 0700), written there with Create and Commit, and CommitNew gives it the
// path whole. It is used by one goroutine at a time.
type Folder struct {
	tmp  string
	path string
}

// CreateFolder starts filling path.
func CreateFolder(path string) (*Folder, error) {
	dir, base := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	tmp, err := os.MkdirTemp(dir, "."+base+".*"+tempSuffix)
	if err != nil {
		return nil, err
	}
	return &Folder{tmp: tmp, path: path}, nil
}

// TempName is the temporary folder's name, where the files go.
func (d *Folder) TempName() string { return d.tmp }

// CommitNew syncs the temporary folder and renames it to path, then syncs
// the folder around it. When path exists already the error is
// fs.ErrExist and the temporary folder stays for Abort. A rename is
// atomic: path is then either absent or the whole folder.
func (d *Folder) CommitNew() error {
	if d.tmp == "" {
		return pathError("commit", d.path, os.ErrClosed)
	}
	if err := syncDir(d.tmp); err != nil && !unsupported(err) {
		return pathError("sync", d.path, err)
	}
	if _, err := os.Lstat(d.path); err == nil {
		return pathError("create", d.path, fs.ErrExist)
	}
	if err := rename(d.tmp, d.path); err != nil {
		return pathError("rename into", d.path, err)
	}
	d.tmp = ""
	if err := syncDir(filepath.Dir(d.path)); err != nil && !unsupported(err) {
		return pathError("sync the folder of", d.path, err)
	}
	return nil
}

// Abort removes the temporary folder and what is in it. It does nothing
// after CommitNew or Abort.
func (d *Folder) Abort() {
	if d.tmp == "" {
		return
	}
	_ = os.RemoveAll(d.tmp)
	d.tmp = ""
}

// FolderLeftovers lists the temporary folders of path beside it: those
// of fillings that never finished, or of one running now, which only the
// caller can tell apart (by a lock it holds).
func FolderLeftovers(path string) []string {
	dir, base := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "."+base+".") && strings.HasSuffix(n, tempSuffix) && e.IsDir() {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// Rename gives the file at from the name to, replacing what was there,
// and syncs the folder so the new name survives a crash: a file set aside
// once kbatch no longer reads it.
func Rename(from, to string) error {
	if err := rename(from, to); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(to)); err != nil && !unsupported(err) {
		return pathError("sync the folder of", to, err)
	}
	return nil
}
