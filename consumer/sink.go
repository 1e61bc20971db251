package consumer

import (
	"context"
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
type FileSink struct {
	w    io.Writer
	f    *os.File // w when it is a file (to sync and close); nil otherwise
	name string
	buf  []byte
	enc  record.Appender
	// keepOpen is set for standard output: Close leaves it open.
	keepOpen bool
}

// OpenFileSink opens path for appending, creating it (mode 0600).
func OpenFileSink(path string) (*FileSink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("cannot open --sink %s: folder %s does not exist", path, filepath.Dir(path))
		}
		return nil, fmt.Errorf("cannot open --sink %s: %w", path, err)
	}
	return &FileSink{w: f, f: f, name: path, buf: make([]byte, 0, 1<<20), enc: &record.JSONEncoder{}}, nil
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

// Process writes the records and syncs the file.
func (s *FileSink) Process(_ context.Context, b *Batch, records []*record.Record) error {
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
