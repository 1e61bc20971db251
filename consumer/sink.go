package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// FileSink appends each batch's records to a file as JSON lines (docs/design.md
// §4, or another record.Appender's shape) and fsyncs before the batch is
// acked. It is the --sink of watch. A record the batch marks as aborted
// (Batch.IsAborted) gets "aborted":true.
//
// A named regular file gets only whole lines: a batch whose write fails
// is cut back off the file (it is not acked, so it comes again whole), a
// line cut off by a write that never finished (a crash, a kill) is
// removed when the file is opened again (OpenFileSink), and each batch
// starts on a line of its own, even after another process appending to
// the same file was killed in the middle of a line.
type FileSink struct {
	w    io.Writer
	f    *os.File // w when it is a file (to sync and close); nil otherwise
	name string
	buf  []byte
	enc  record.Appender
	// keepOpen is set for standard output: Close leaves it open.
	keepOpen bool
	// cut, for a named regular file, is a handle (without O_APPEND) to read
	// the file's last byte and cut a failed batch off with; nil for
	// others, or an append-only file.
	cut *os.File
	// written counts the bytes the batch in Process wrote so far.
	written int64
	// Repair says what OpenFileSink did to the file's last line, for the
	// user; empty when nothing.
	Repair string
}

// OpenFileSink opens path for appending, creating it (mode 0600). A
// regular file that does not end with a newline is mended first
// (mendLastLine).
func OpenFileSink(path string) (*FileSink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("cannot open --sink %s: folder %s does not exist", path, filepath.Dir(path))
		}
		return nil, fmt.Errorf("cannot open --sink %s: %w", path, err)
	}
	s := &FileSink{w: f, f: f, name: path, buf: make([]byte, 0, 1<<20), enc: &record.JSONEncoder{}}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		// Cutting a file needs a handle without O_APPEND (on Windows an
		// appending handle has no right to set the size). Without one
		// (an append-only file), lines are only ever added.
		if t, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			s.cut = t
		}
		if s.Repair, err = mendLastLine(s.cut, f, path, st.Size()); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("cannot open --sink %s: %w", path, err)
		}
	}
	return s, nil
}

// mendLastLine makes the file f (path, size bytes, opened for appending)
// end with a whole line. A last line without a newline that begins as
// kbatch's record lines do (lineStart, in both --format shapes) and is not
// a whole JSON value is a record line cut off by a write that never
// finished — kbatch was killed, the machine went down — and its batch was
// not acked (a batch is acked after its lines are written whole and
// synced), so it is removed: the batch is written again whole. Any other
// last line (a user's, or a whole JSON value) is kept, ended with a
// newline so that the next record gets a line of its own. It says what it
// did ("" for nothing).
//
// cut is a handle to cut the file with; with none, or when cutting fails,
// a cut-off line is ended with a newline instead and stays.
func mendLastLine(cut, f *os.File, path string, size int64) (string, error) {
	if size == 0 {
		return "", nil
	}
	r := cut // O_RDWR
	if r == nil {
		ro, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer ro.Close()
		r = ro
	}
	// The start of the last line: after the last newline, read backwards
	// in chunks, or the file's start.
	chunk := make([]byte, 64<<10)
	lineAt := int64(0)
	for at := size; at > 0; {
		n := min(at, int64(len(chunk)))
		c := chunk[:n]
		if _, err := r.ReadAt(c, at-n); err != nil {
			return "", err
		}
		if at == size && c[n-1] == '\n' {
			return "", nil // whole lines
		}
		if i := bytes.LastIndexByte(c, '\n'); i >= 0 {
			lineAt = at - n + int64(i) + 1
			break
		}
		at -= n
	}
	head := make([]byte, min(int64(len(lineStart)), size-lineAt))
	if _, err := r.ReadAt(head, lineAt); err != nil {
		return "", err
	}
	ours := bytes.HasPrefix([]byte(lineStart), head)
	if ours && size-lineAt <= maxMendRead {
		// A whole JSON value is kept: a user's line, or one of kbatch's
		// cut just before its newline, which then comes twice.
		tail := make([]byte, size-lineAt)
		if _, err := r.ReadAt(tail, lineAt); err != nil {
			return "", err
		}
		ours = !json.Valid(tail)
	}
	var cutErr error
	if ours {
		if cut == nil {
			cutErr = errors.New("the file cannot be opened to be cut")
		} else if cutErr = cut.Truncate(lineAt); cutErr == nil {
			return fmt.Sprintf("removed its last line, %d bytes cut off by a write that did not finish (its batch was not acked and is written again whole)", size-lineAt), nil
		}
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		return "", err
	}
	if ours {
		return fmt.Sprintf("its last line, %d bytes cut off by a write that did not finish, could not be removed (%v): ended it with a newline; its batch was not acked and is written again whole on the lines after it", size-lineAt, cutErr), nil
	}
	return "its last line had no newline: added one, so the records start on a line of their own", nil
}

// maxMendRead bounds the last line mendLastLine reads whole to tell a
// whole JSON value from a cut-off one; a longer line that begins as a
// record line is taken as cut off.
const maxMendRead = 64 << 20

// lineStart is how every record line of a sink begins (record.JSONEncoder
// and record.KcatEncoder).
const lineStart = `{"topic":`

// NewStdoutSink is --sink -: the records go to w (standard output),
// written before each ack and synced too when w is a file; Close does not
// close w.
func NewStdoutSink(w io.Writer) *FileSink {
	f, _ := w.(*os.File)
	return &FileSink{w: w, f: f, name: "-", buf: make([]byte, 0, 1<<20), enc: &record.JSONEncoder{}, keepOpen: true}
}

// SetEncoder makes the sink write records in enc's shape (KcatEncoder for
// --format kcat) instead of docs/design.md §4's. Call it before the first Process.
func (s *FileSink) SetEncoder(enc record.Appender) { s.enc = enc }

// Process writes the records and syncs the file. When that fails, a named
// file is cut back to its size before the batch, so that the batch, which
// is not acked and comes again whole, leaves no part line behind.
func (s *FileSink) Process(_ context.Context, b *Batch, records []*record.Record) error {
	if s.cut == nil {
		return s.process(b, records)
	}
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("sink %s: %w", s.name, err)
	}
	s.written = 0
	// Another process appending to the same file may have been killed
	// in the middle of a line since the last batch: the batch's records
	// start on a line of their own all the same (that line stays, ended;
	// its batch is not acked, and its stream writes it again).
	if st.Size() > 0 && len(records) > 0 {
		last := []byte{0}
		if _, rerr := s.cut.ReadAt(last, st.Size()-1); rerr == nil && last[0] != '\n' {
			s.buf = append(s.buf, '\n')
		}
	}
	err = s.process(b, records)
	if err != nil {
		s.buf = s.buf[:0]
		// Only what this batch wrote is cut: a file that grew by more
		// has another writer's lines at its end.
		if now, serr := s.f.Stat(); serr == nil && now.Size() == st.Size()+s.written {
			if terr := s.cut.Truncate(st.Size()); terr != nil {
				return fmt.Errorf("%w (and cutting the batch off the file failed: %v; the next start removes a cut-off last line)", err, terr)
			}
		}
	}
	return err
}

func (s *FileSink) process(b *Batch, records []*record.Record) error {
	for _, m := range records {
		if len(b.Aborted) > 0 && b.IsAborted(offsets.Partition{Topic: m.Topic, Partition: m.Partition}, m.Offset) {
			s.buf = s.enc.AppendAborted(s.buf, m)
		} else {
			s.buf = s.enc.Append(s.buf, m)
		}
		if len(s.buf) >= 1<<20 {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	if err := s.flush(); err != nil {
		return err
	}
	if s.f == nil {
		return nil
	}
	if err := s.f.Sync(); err != nil && !isUnsyncable(err) {
		return fmt.Errorf("sink %s: fsync: %w", s.name, err)
	}
	return nil
}

func (s *FileSink) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	n, err := s.w.Write(s.buf)
	s.written += int64(n)
	s.buf = s.buf[:0]
	if err != nil {
		return fmt.Errorf("sink %s: %w", s.name, err)
	}
	return nil
}

// isUnsyncable reports fsync errors of files that cannot be synced, such
// as /dev/null or a pipe; writing to them is all there is.
func isUnsyncable(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP)
}

// Close closes the file (not standard output).
func (s *FileSink) Close() error {
	if s.keepOpen {
		return nil
	}
	if s.cut != nil {
		_ = s.cut.Close()
	}
	return s.f.Close()
}
