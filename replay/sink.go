package replay

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/consumer"
)

// Sink receives the records of a replay. Run calls Write from one
// goroutine at a time, then exactly one of Close or Abort.
type Sink interface {
	// Write takes records of one partition in offset order, continuing
	// where that partition's previous Write ended. The slice is reused
	// after Write returns; the byte slices in the records are not, so a
	// sink may keep them.
	Write(recs []sarama.ConsumerMessage) error
	// Close makes everything written complete and durable (a file flushed,
	// synced and in place; a topic's records acknowledged) and reports
	// whether it is.
	Close() error
	// Abort gives up: it discards what can be discarded (a temporary
	// file) and releases resources.
	Abort()
}

// jsonBufferSize is the write buffer of JSON sinks; encoded records are
// handed to the OS in writes of about this size.
const jsonBufferSize = 256 << 10

// JSONSink writes records as DESIGN §4 JSON lines.
type JSONSink struct {
	w   *bufio.Writer
	buf []byte
	enc consumer.RecordAppender
	// file set: a regular file written as tmp, renamed to path at Close.
	file *os.File
	tmp  string
	path string
	mode os.FileMode
	// closer is closed at Close/Abort when the sink opened it directly.
	closer io.Closer
}

// NewJSONSink writes to w (standard output, typically). Close flushes but
// does not close w.
func NewJSONSink(w io.Writer) *JSONSink {
	return &JSONSink{w: bufio.NewWriterSize(w, jsonBufferSize), enc: &consumer.RecordEncoder{}}
}

// SetEncoder makes the sink write records in enc's shape (KcatEncoder for
// --format kcat) instead of DESIGN §4's. Call it before the first Write.
func (s *JSONSink) SetEncoder(enc consumer.RecordAppender) { s.enc = enc }

// CreateJSONFile writes to the file at path so that it is complete or
// untouched: records go to a temporary file in the same folder, which
// Close syncs and renames over path; Abort removes it. A path that exists
// and is not a regular file (/dev/null, a named pipe) is written directly.
// A new file is 0600 whatever the umask (records are production data, and
// kbatch's other files are 0600 too); a file replaced keeps its mode.
func CreateJSONFile(path string) (*JSONSink, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, fmt.Errorf("--out %s is a folder; name a file", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("open --out %s: %w", path, err)
		}
		s := NewJSONSink(f)
		s.closer = f
		return s, nil
	}
	mode := os.FileMode(0o600) // records are someone's data (DESIGN §2.7)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.partial")
	if err != nil {
		return nil, fmt.Errorf("create --out %s: %w", path, err)
	}
	s := NewJSONSink(f)
	s.file, s.tmp, s.path, s.mode = f, f.Name(), path, mode
	return s, nil
}

// Write encodes recs and writes them.
func (s *JSONSink) Write(recs []sarama.ConsumerMessage) error {
	buf := s.buf[:0]
	for i := range recs {
		buf = s.enc.Append(buf, &recs[i])
		if len(buf) >= jsonBufferSize {
			if _, err := s.w.Write(buf); err != nil {
				return s.writeErr(err)
			}
			buf = buf[:0]
		}
	}
	_, err := s.w.Write(buf)
	s.buf = buf[:0]
	if err != nil {
		return s.writeErr(err)
	}
	return nil
}

func (s *JSONSink) writeErr(err error) error {
	if s.path != "" {
		return fmt.Errorf("write --out %s: %w", s.path, err)
	}
	return fmt.Errorf("write output: %w", err)
}

// Close flushes; for a file it syncs, closes and renames it into place.
func (s *JSONSink) Close() error {
	if err := s.w.Flush(); err != nil {
		s.Abort()
		return s.writeErr(err)
	}
	if s.closer != nil {
		return s.closer.Close()
	}
	if s.file == nil {
		return nil
	}
	f := s.file
	s.file = nil
	err := f.Sync()
	if err == nil {
		err = f.Chmod(s.mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(s.tmp, s.path)
	}
	if err != nil {
		_ = os.Remove(s.tmp)
		return s.writeErr(err)
	}
	// Make the rename durable too; not every system can sync a folder.
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Abort removes the temporary file, leaving any earlier file at the path
// as it was. Output to a plain writer is flushed: its lines are whole, and
// the caller's error says the output is incomplete.
func (s *JSONSink) Abort() {
	if s.closer == nil && s.file == nil {
		_ = s.w.Flush()
	}
	if s.closer != nil {
		_ = s.w.Flush()
		_ = s.closer.Close()
		s.closer = nil
	}
	if s.file != nil {
		_ = s.file.Close()
		_ = os.Remove(s.tmp)
		s.file = nil
	}
}
