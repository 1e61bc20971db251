package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kbatch-dev/kbatch/atomicfile"
)

// File is a file written so that it is complete or untouched, through
// atomicfile: bytes go to a temporary file beside the path, which Commit
// syncs and renames over it, then syncs the folder; Abort removes it. It is how every output of records to a named file
// is written (replay --out, the screen's write), so a crash, a failed
// read or a quit never leaves half a file under the name the user gave.
//
// A new file is 0600 whatever the umask (records are production data,
// and kbatch's other files are 0600 too); a file replaced keeps its mode.
// A path that exists and is not a regular file (/dev/null, a named pipe)
// is written directly; a symbolic link to a regular file is followed, and
// the file it names is replaced; a link to nothing is refused. A File is used by one goroutine at
// a time.
type File struct {
	// direct is path itself, when it is not a regular file; else the
	// bytes go through out.
	direct *os.File
	out    *atomicfile.File
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
// refused with ErrDanglingLink. Errors from the file system are
// *fs.PathError, for the caller to put in its own words: CreateFile's
// name the file it could not open (the temporary one, in a folder that
// cannot be written); those of Write and Commit name path.
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
		return &File{direct: f}, nil
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
	mode := os.FileMode(0o600) // records are someone's data (docs/design.md §2.7)
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
	out, err := atomicfile.Create(path, mode)
	if err != nil {
		return nil, err
	}
	return &File{out: out}, nil
}

// Leftovers lists the other temporary files of the path in its folder
// (atomicfile.File.Leftovers); none for a path that is not a regular file.
func (f *File) Leftovers() []string {
	if f.out == nil {
		return nil
	}
	return f.out.Leftovers()
}

// Write writes to the temporary file (or the path, when it is not a
// regular file).
func (f *File) Write(p []byte) (int, error) {
	if f.direct != nil {
		return f.direct.Write(p)
	}
	return f.out.Write(p)
}

// Commit puts the file in place (atomicfile.File.Commit: the file and its
// folder synced). After an error nothing is left but what was at path
// before.
func (f *File) Commit() error {
	if f.direct != nil {
		d := f.direct
		f.direct = nil
		return d.Close()
	}
	if f.out == nil {
		return os.ErrClosed
	}
	return f.out.Commit()
}

// Abort closes the file and removes the temporary one, leaving any
// earlier file at path as it was. It does nothing after Commit or Abort.
func (f *File) Abort() {
	if f.direct != nil {
		_ = f.direct.Close()
		f.direct = nil
	}
	if f.out != nil {
		f.out.Abort()
	}
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
