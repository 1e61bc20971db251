package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File is a file written so that it is complete or untouched: bytes go to
// a temporary file beside the path, which Commit syncs and renames over
// it; Abort removes it. It is how every output of records to a named file
// is written (replay --out, the screen's write), so a crash, a failed
// read or a quit never leaves half a file under the name the user gave.
//
// A new file is 0600 whatever the umask (records are production data,
// and kbatch's other files are 0600 too); a file replaced keeps its mode.
// A path that exists and is not a regular file (/dev/null, a named pipe)
// is written directly; a symbolic link to a regular file is followed, and
// the file it names is replaced; a link to nothing is refused. A File is used by one goroutine at a time.
type File struct {
	f    *os.File
	path string
	// tmp is the temporary file renamed to path at Commit; "" when f is
	// path itself (not a regular file).
	tmp  string
	mode os.FileMode
}

// ErrExists is returned by CreateFile without replace for a path that
// exists.
var ErrExists = errors.New("file exists")

// ErrIsFolder is returned by CreateFile for a path that is a folder.
var ErrIsFolder = errors.New("is a folder")

// ErrDanglingLink is returned by CreateFile with replace for a path that is
// a symbolic link to a file that does not exist.
var ErrDanglingLink = errors.New("is a symbolic link to a file that does not exist")

// CreateFile starts writing path. With replace unset, a path that exists
// (as anything) is refused with ErrExists; with it set, an existing
// regular file is replaced at Commit, and a symbolic link to nothing is
// refused with ErrDanglingLink. Errors from the file system come
// back as they are (an *fs.PathError naming the temporary file, say), for
// the caller to put in its own words.
func CreateFile(path string, replace bool) (*File, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && !replace:
		return nil, ErrExists
	case err == nil && fi.IsDir():
		return nil, ErrIsFolder
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{f: f, path: path}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err // a link loop, a folder that cannot be searched
	case err != nil:
		if _, lerr := os.Lstat(path); lerr == nil {
			// A symbolic link to nothing: refused either way, rather than
			// creating a file wherever the link points, or replacing it.
			if !replace {
				return nil, ErrExists
			}
			target, _ := os.Readlink(path)
			return nil, fmt.Errorf("%w (to %q)", ErrDanglingLink, target)
		} else if !errors.Is(lerr, fs.ErrNotExist) {
			return nil, lerr
		}
	}
	mode := os.FileMode(0o600) // records are someone's data (DESIGN §2.7)
	if err == nil {
		mode = fi.Mode().Perm()
		// A symbolic link to a file: replace the file it names, as a
		// shell's > does, not the link.
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, err
		}
		path = real
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.partial")
	if err != nil {
		return nil, err
	}
	return &File{f: f, path: path, tmp: f.Name(), mode: mode}, nil
}

// Leftovers lists the other temporary files of the path in its folder:
// those of writes that never finished (a process killed with SIGKILL,
// a machine that went down), or of one running now. CreateFile cannot
// tell which, so it removes none; the caller says they are there.
func (f *File) Leftovers() []string {
	if f.tmp == "" {
		return nil
	}
	dir, base := filepath.Split(f.path)
	if dir == "" {
		dir = "."
	}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		n := e.Name()
		if p := filepath.Join(dir, n); strings.HasPrefix(n, "."+base+".") && strings.HasSuffix(n, ".partial") && p != f.tmp && e.Type().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// Write writes to the temporary file (or the path, when it is not a
// regular file).
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Commit syncs and closes the file and renames it into place, then syncs
// the folder so the rename is durable too where the system allows. After
// an error nothing is left but what was at path before.
func (f *File) Commit() error {
	if f.f == nil {
		return os.ErrClosed
	}
	file := f.f
	f.f = nil
	if f.tmp == "" {
		return file.Close()
	}
	err := file.Sync()
	if err == nil {
		err = file.Chmod(f.mode)
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp, f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		_ = d.Sync() // not every system can sync a folder
		_ = d.Close()
	}
	return nil
}

// Abort closes the file and removes the temporary one, leaving any
// earlier file at path as it was. It does nothing after Commit or Abort.
func (f *File) Abort() {
	if f.f == nil {
		return
	}
	_ = f.f.Close()
	if f.tmp != "" {
		_ = os.Remove(f.tmp)
	}
	f.f = nil
}

// LineWriter writes records as lines of an Appender's shape (docs/design.md §4
// JSON by default) to a writer, through a buffer of bufferSize. It is
// used by one goroutine at a time; Flush hands what is buffered over.
type LineWriter struct {
	w   *bufio.Writer
	buf []byte
	enc Appender
}

// lineBufferSize is the write buffer of a LineWriter: encoded records
// are handed to the OS in writes of about this size.
const lineBufferSize = 256 << 10

// NewLineWriter writes docs/design.md §4 JSON lines to w.
func NewLineWriter(w io.Writer) *LineWriter {
	return &LineWriter{w: bufio.NewWriterSize(w, lineBufferSize), enc: &JSONEncoder{}}
}

// SetEncoder makes the writer use enc's shape (KcatEncoder for --format
// kcat). Call it before the first Write.
func (l *LineWriter) SetEncoder(enc Appender) { l.enc = enc }

// Write encodes recs, in order, and writes them.
func (l *LineWriter) Write(recs []Record) error {
	buf := l.buf[:0]
	for i := range recs {
		buf = l.enc.Append(buf, &recs[i])
		if len(buf) >= lineBufferSize {
			if _, err := l.w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := l.w.Write(buf)
	l.buf = buf[:0]
	return err
}

// WriteRecord encodes r and writes it.
func (l *LineWriter) WriteRecord(r *Record) error {
	l.buf = l.enc.Append(l.buf[:0], r)
	_, err := l.w.Write(l.buf)
	return err
}

// Flush writes what is buffered.
func (l *LineWriter) Flush() error { return l.w.Flush() }

// WriteFile writes the records fill puts to path as JSON lines through a
// File (complete or absent; see CreateFile for replace), and reports how
// many it wrote. An error from fill or from put aborts the file.
func WriteFile(path string, replace bool, fill func(put func(*Record) error) error) (n int, err error) {
	f, err := CreateFile(path, replace)
	if err != nil {
		return 0, err
	}
	lw := NewLineWriter(f)
	err = fill(func(r *Record) error {
		n++
		return lw.WriteRecord(r)
	})
	if err == nil {
		err = lw.Flush()
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		f.Abort()
		return 0, err
	}
	return n, nil
}
