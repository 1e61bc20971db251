// Package atomicfile is the one way kbatch writes a file that must be
// complete or absent: records written with replay --out or from the
// screen, the Spark job replay --emit writes, a new offsets store and the
// folder of one file per stream a store's streams move into (Folder), the
// schema registry's disk cache.
// Bytes go to a temporary file in the same folder (a rename is atomic
// only within one file system); Commit syncs the file, renames
// it over the path, then syncs the folder so that the new name survives
// a crash too. On any failure the temporary file is removed and what was
// at the path before is untouched.
//
// It imports only the standard library, so that every package may use it.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The file system calls Commit makes, in order; tests replace them to see
// the sequence and to make one fail.
var (
	syncFile = (*os.File).Sync
	rename   = os.Rename
	link     = os.Link
	syncDir  = func(dir string) error {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		return err
	}
)

// tempSuffix ends the name of every temporary file: ".NAME.RANDOM.partial"
// beside NAME.
const tempSuffix = ".partial"

// File is a file being written in place of a path. It is used by one
// goroutine at a time.
type File struct {
	f    *os.File
	path string
	mode fs.FileMode
}

// Create starts writing path, which gets mode perm at Commit (whatever
// the umask). The error of a folder that cannot be written in is
// os.CreateTemp's: an *fs.PathError whose Path is the temporary name
// pattern beside path (".NAME.*.partial").
func Create(path string, perm fs.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*"+tempSuffix)
	if err != nil {
		return nil, err
	}
	return &File{f: f, path: path, mode: perm}, nil
}

// TempName is the temporary file's name, for a writer that opens it by
// name (the offsets store's database).
func (f *File) TempName() string { return f.f.Name() }

// Write writes to the temporary file; an error names the path.
func (f *File) Write(p []byte) (int, error) {
	if f.f == nil {
		return 0, pathError("write", f.path, os.ErrClosed)
	}
	n, err := f.f.Write(p)
	if err != nil {
		err = pathError("write", f.path, err)
	}
	return n, err
}

// Commit makes the written bytes the file at path, replacing what was
// there. After an error nothing is left but what was at path before,
// unless only the folder's sync failed: the file is then in place, and
// the error says its name may not survive a crash.
func (f *File) Commit() error { return f.commit(true) }

// CommitNew is Commit that never replaces: when path exists (another
// process created it meanwhile) the temporary file is removed and the
// error is fs.ErrExist. On a file system without hard links it falls
// back to a rename, which replaces.
func (f *File) CommitNew() error { return f.commit(false) }

func (f *File) commit(replace bool) error {
	if f.f == nil {
		return pathError("commit", f.path, os.ErrClosed)
	}
	file, tmp := f.f, f.f.Name()
	f.f = nil
	err := syncFile(file)
	if err == nil {
		err = file.Chmod(f.mode)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	op := "write"
	if err == nil {
		op = "rename into"
		if replace {
			err = rename(tmp, f.path)
		} else if err = link(tmp, f.path); errors.Is(err, fs.ErrExist) {
			_ = os.Remove(tmp)
			return pathError("create", f.path, fs.ErrExist)
		} else if err != nil {
			err = rename(tmp, f.path) // no hard links here
		} else {
			_ = os.Remove(tmp) // the data is under path now
		}
	}
	if err != nil {
		_ = os.Remove(tmp)
		return pathError(op, f.path, err)
	}
	if err := syncDir(filepath.Dir(f.path)); err != nil && !unsupported(err) {
		return pathError("sync the folder of", f.path, err)
	}
	return nil
}

// Abort removes the temporary file, leaving what was at path as it was.
// It does nothing after Commit or Abort.
func (f *File) Abort() {
	if f.f == nil {
		return
	}
	_ = f.f.Close()
	_ = os.Remove(f.f.Name())
	f.f = nil
}

// Leftovers lists the other temporary files of the path in its folder:
// those of writes that never finished (a process killed with SIGKILL, a
// machine that went down), or of one running now. Create cannot tell
// which, so it removes none; the caller says they are there.
func (f *File) Leftovers() []string {
	dir, base := filepath.Split(f.path)
	if dir == "" {
		dir = "."
	}
	own := ""
	if f.f != nil {
		own = f.f.Name()
	}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		n := e.Name()
		if p := filepath.Join(dir, n); strings.HasPrefix(n, "."+base+".") && strings.HasSuffix(n, tempSuffix) && p != own && e.Type().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// WriteFile writes data to path through a File, with mode perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// pathError names path (not the temporary file, which the user never
// named) and keeps the system's error.
func pathError(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// unsupported reports a folder that cannot be synced on this file system
// (some network and FUSE file systems refuse fsync of a directory).
func unsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported)
}
