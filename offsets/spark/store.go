package spark

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Store is where a checkpoint's files are read from: a local folder
// (DirStore) or an object store (package offsets/spark/objstore). Names are
// slash-separated and relative to the checkpoint: "metadata", "offsets",
// "offsets/7", "sources/0/0". A Store is only ever read.
type Store interface {
	// Location names the checkpoint for messages: a folder or a URL.
	Location() string
	// Path names the file name of the checkpoint for messages.
	Path(name string) string
	// ReadFile reads file name whole. A file larger than limit bytes is an
	// error, read no further. A missing file wraps fs.ErrNotExist.
	ReadFile(name string, limit int64) ([]byte, error)
	// ReadDir lists what is directly in folder name ("" is the
	// checkpoint): its files, with their modification times, and its
	// sub-folders. A missing folder wraps fs.ErrNotExist.
	ReadDir(name string) ([]Entry, error)
	// Stat says whether file name exists and when it was last modified.
	// A missing file wraps fs.ErrNotExist.
	Stat(name string) (Entry, error)
}

// Entry is a file or folder of a Store.
type Entry struct {
	// Name is the base name: "7", "0", ".7.crc".
	Name string
	// Dir is true for a folder (a common prefix in an object store).
	Dir bool
	// ModTime is when the file was last written; zero for a folder.
	ModTime time.Time
}

// DirStore is a checkpoint in a local folder. It reads only regular files
// that are, once symlinks are resolved, inside the folder: a FIFO, a device
// or a socket is refused without being opened for reading (the open is
// non-blocking, and the file is checked again on the open descriptor), so
// nothing blocks. Errors name the file and never quote what it holds.
type DirStore struct {
	dir     string
	realDir string
}

// NewDirStore opens the local checkpoint folder dir: it must exist and be a
// folder.
func NewDirStore(dir string) (*DirStore, error) {
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fileError(dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("spark checkpoint %s: not a directory", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fileError(dir, err)
	}
	return &DirStore{dir: dir, realDir: real}, nil
}

// Location is the folder, cleaned.
func (s *DirStore) Location() string { return s.dir }

// Path is the file's path in the folder.
func (s *DirStore) Path(name string) string { return filepath.Join(s.dir, filepath.FromSlash(name)) }

// ReadDir lists a folder of the checkpoint. Something else at its place (a
// FIFO, whose open would block) is an error and is not opened.
func (s *DirStore) ReadDir(name string) ([]Entry, error) {
	dir := s.Path(name)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fileError(dir, err)
	}
	if !fi.IsDir() {
		return nil, fileError(dir, syscall.ENOTDIR)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fileError(dir, err)
	}
	out := make([]Entry, 0, len(des))
	for _, d := range des {
		e := Entry{Name: d.Name(), Dir: d.IsDir()}
		if !e.Dir {
			if fi, err := d.Info(); err == nil {
				e.ModTime = fi.ModTime()
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Stat stats a file of the checkpoint.
func (s *DirStore) Stat(name string) (Entry, error) {
	p := s.Path(name)
	fi, err := os.Stat(p)
	if err != nil {
		return Entry{}, fileError(p, err)
	}
	return Entry{Name: path.Base(name), Dir: fi.IsDir(), ModTime: fi.ModTime()}, nil
}

// ReadFile reads a checkpoint file of at most limit bytes.
func (s *DirStore) ReadFile(name string, limit int64) ([]byte, error) {
	p := s.Path(name)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fileError(p, err)
	}
	if rel, err := filepath.Rel(s.realDir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("spark checkpoint %s: a symlink to a file outside the checkpoint; not read", p)
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return nil, fileError(p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(p, fi)
	}
	f, err := os.OpenFile(real, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, fileError(p, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fileError(p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(p, fi)
	}
	if fi.Size() > limit {
		return nil, tooLarge(p, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fileError(p, err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(p, limit)
	}
	return b, nil
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("spark checkpoint %s: larger than %d MiB, not a checkpoint file", path, limit>>20)
}

// TooLarge is the error of a Store whose file name is larger than limit.
func TooLarge(s Store, name string, limit int64) error { return tooLarge(s.Path(name), limit) }

// notRegular says what a file that is not a regular file is.
func notRegular(path string, fi fs.FileInfo) error {
	what := "a special file"
	switch m := fi.Mode(); {
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("spark checkpoint %s: %s, not a regular file; not read", path, what)
}
