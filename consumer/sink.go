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

// FileSink appends each batch's records to a file as JSON lines (DESIGN
// §4, or another record.Appender's shape) and fsyncs before the batch is
// acked. It is the --sink of watch. A record the batch marks as aborted
// (Batch.IsAborted) gets "aborted":true.
//
// A named regular file holds only whole lines: a batch whose write fails
// is cut back off the file (it is not acked, so it comes again whole),
// and a line cut off by a write that never finished (a crash, a kill) is
// removed when the file is opened again (OpenFileSink).
type FileSink struct {
	w    io.Writer
	f    *os.File // w when it is a file (to sync and close); nil otherwise
	name string
	buf  []byte
	enc  record.Appender
	// keepOpen is set for standard output: Close leaves it open.
	keepOpen bool
	// whole is set for a named regular file: a failed batch is cut off.
	whole bool
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
		s.whole = true
		if s.Repair, err = mendLastLine(f, path, st.Size()); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("cannot open --sink %s: %w", path, err)
		}
	}
	return s, nil
}

// mendLastLine makes the file f (path, size bytes, opened for appending)
// end with a whole line. Its last line without a newline is either a
// record line cut off by a write that never finished — kbatch was killed,
// the machine went down — whose batch was not acked and is delivered
// again whole, so it is removed; or a whole JSON value, or text that is
// not kbatch's, which is kept and ended with a newline so that the next
// record gets a line of its own. It says what it did ("" for nothing).
func mendLastLine(f *os.File, path string, size int64) (string, error) {
	if size == 0 {
		return "", nil
	}
	r, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer r.Close()
	// The last line, read backwards in chunks up to the last newline.
	var tail []byte
	at := size
	for at > 0 {
		n := min(at, 64<<10)
		chunk := make([]byte, n)
		if _, err := r.ReadAt(chunk, at-n); err != nil {
			return "", err
		}
		if at == size && chunk[n-1] == '\n' {
			return "", nil // whole lines
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			tail = append(chunk[i+1:], tail...)
			at -= n - int64(i) - 1
			break
		}
		tail = append(chunk, tail...)
		at -= n
	}
	if len(tail) > 0 && tail[0] == '{' && !json.Valid(tail) {
		if err := f.Truncate(at); err != nil {
			return "", err
		}
		return fmt.Sprintf("removed its last line, %d bytes cut off by a write that did not finish (its batch was not acked and is written again whole)", len(tail)), nil
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		return "", err
	}
	return "its last line had no newline: added one, so the records start on a line of their own", nil
}

// NewStdoutSink is --sink -: the records go to w (standard output),
// written before each ack and synced too when w is a file; Close does not
// close w.
func NewStdoutSink(w io.Writer) *FileSink {
	f, _ := w.(*os.File)
	return &FileSink{w: w, f: f, name: "-", buf: make([]byte, 0, 1<<20), enc: &record.JSONEncoder{}, keepOpen: true}
}

// SetEncoder makes the sink write records in enc's shape (KcatEncoder for
// --format kcat) instead of DESIGN §4's. Call it before the first Process.
func (s *FileSink) SetEncoder(enc record.Appender) { s.enc = enc }

// Process writes the records and syncs the file. When that fails, a named
// file is cut back to its size before the batch, so that the batch, which
// is not acked and comes again whole, leaves no part line behind.
func (s *FileSink) Process(_ context.Context, b *Batch, records []*record.Record) error {
	if !s.whole {
		return s.process(b, records)
	}
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("sink %s: %w", s.name, err)
	}
	err = s.process(b, records)
	if err != nil {
		s.buf = s.buf[:0]
		if terr := s.f.Truncate(st.Size()); terr != nil {
			return fmt.Errorf("%w (and cutting the batch off the file failed: %v; the next start removes a cut-off last line)", err, terr)
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
	_, err := s.w.Write(s.buf)
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
	return s.f.Close()
}
