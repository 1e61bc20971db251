package replay

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/kbatch-dev/kbatch/record"
)

// Sink receives the records of a replay. Run calls Write from one
// goroutine at a time, then exactly one of Close or Abort.
type Sink interface {
	// Write takes records of one partition in offset order, continuing
	// where that partition's previous Write ended. The slice is reused
	// after Write returns; the byte slices in the records are not, so a
	// sink may keep them.
	Write(recs []record.Record) error
	// Close makes everything written complete and durable (a file flushed,
	// synced and in place; a topic's records acknowledged) and reports
	// whether it is.
	Close() error
	// Abort gives up: it discards what can be discarded (a temporary
	// file) and releases resources.
	Abort()
}

// JSONSink writes records as docs/design.md §4 JSON lines.
type JSONSink struct {
	w *record.LineWriter
	// file is set for --out: written whole or not at all (record.File).
	file *record.File
	path string
}

// NewJSONSink writes to w (standard output, typically). Close flushes but
// does not close w.
func NewJSONSink(w io.Writer) *JSONSink {
	return &JSONSink{w: record.NewLineWriter(w)}
}

// SetEncoder makes the sink write records in enc's shape (KcatEncoder for
// --format kcat) instead of docs/design.md §4's. Call it before the first Write.
func (s *JSONSink) SetEncoder(enc record.Appender) { s.w.SetEncoder(enc) }

// CreateJSONFile writes to the file at path so that it is complete or
// untouched (record.CreateFile, replacing an existing file): records go
// to a temporary file in the same folder, which Close syncs and renames
// over path; Abort removes it. A path that exists and is not a regular
// file (/dev/null, a named pipe) is written directly. A new file is 0600
// whatever the umask; a file replaced keeps its mode.
func CreateJSONFile(path string) (*JSONSink, error) {
	f, err := record.CreateFile(path, true)
	if errors.Is(err, record.ErrIsFolder) {
		return nil, fmt.Errorf("--out %s is a folder; name a file", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.HasSuffix(pe.Path, ".partial") {
		// The temporary file beside path: name the folder, not a file
		// the user never asked for.
		return nil, fmt.Errorf("create --out %s: cannot write in its folder %s: %w", path, filepath.Dir(pe.Path), pe.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("create --out %s: %w", path, err)
	}
	return &JSONSink{w: record.NewLineWriter(f), file: f, path: path}, nil
}

// Leftovers lists temporary files of the --out path that an earlier
// replay left behind (see record.File.Leftovers).
func (s *JSONSink) Leftovers() []string {
	if s.file == nil {
		return nil
	}
	return s.file.Leftovers()
}

// Write encodes recs and writes them.
func (s *JSONSink) Write(recs []record.Record) error {
	if err := s.w.Write(recs); err != nil {
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
	if s.file == nil {
		return nil
	}
	f := s.file
	s.file = nil
	if err := f.Commit(); err != nil {
		return s.writeErr(err)
	}
	return nil
}

// Abort removes the temporary file, leaving any earlier file at the path
// as it was. Output to a plain writer (or a path that is not a regular
// file) is flushed: its lines are whole, and the caller's error says the
// output is incomplete.
func (s *JSONSink) Abort() {
	_ = s.w.Flush()
	if s.file != nil {
		s.file.Abort()
		s.file = nil
	}
}
