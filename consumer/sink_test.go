package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/record"
)

// TestOpenFileSinkMendsTheLastLine: a sink file whose last line has no
// newline is mended before the first record is appended. A record line
// cut off by a write that never finished is removed (its batch was not
// acked and comes again whole); anything else is kept and ended with a
// newline, so the records start on a line of their own.
func TestOpenFileSinkMendsTheLastLine(t *testing.T) {
	whole := `{"topic":"t","partition":0,"offset":1,"value":"a"}` + "\n"
	long := `{"topic":"t","partition":0,"offset":2,"value":"` + strings.Repeat("x", 200<<10) // longer than a read chunk
	tests := []struct {
		label, before, after string
		repaired             bool
	}{
		{"empty", "", "", false},
		{"whole lines", whole + whole, whole + whole, false},
		{"a record line cut off", whole + `{"topic":"t","partition":0,"off`, whole, true},
		{"a record line cut off after a brace", whole + `{"topic":"t","headers":[{"key":"k"}`, whole, true},
		{"a long record line cut off", whole + long, whole, true},
		{"a cut-off record line alone", `{"topic":"t","partit`, "", true},
		{"a whole record line without its newline", whole + strings.TrimSuffix(whole, "\n"), whole + whole, true},
		{"a user's whole line that begins like a record line", whole + `{"topic":"mine","note":"x"}`, whole + `{"topic":"mine","note":"x"}` + "\n", true},
		{"cut off in its first bytes", whole + `{"to`, whole, true},
		{"a whole JSON value without a newline", whole + `{"a":1}`, whole + `{"a":1}` + "\n", true},
		{"text that is not kbatch's", "notes\nhello", "notes\nhello\n", true},
		{"one word", "hello", "hello\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sink.jsonl")
			if tc.before != "" {
				if err := os.WriteFile(path, []byte(tc.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s, err := OpenFileSink(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Repair != ""; got != tc.repaired {
				t.Errorf("Repair = %q, want one: %v", s.Repair, tc.repaired)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.after {
				t.Errorf("file after opening: %.80q…, want %.80q…", got, tc.after)
			}
		})
	}
}

// failingWriter writes n bytes of what it is given to w, then fails, as a
// full disk or a file size limit does in the middle of a write.
type failingWriter struct {
	w *os.File
	n int
}

var errDiskFull = errors.New("no space left on device")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return f.w.Write(p)
	}
	k, _ := f.w.Write(p[:f.n])
	f.n = 0
	return k, errDiskFull
}

// TestFileSinkCutsAFailedBatchOff: when a batch's write fails part-way,
// the sink cuts the file back to its size before the batch: the batch is
// not acked and is written again whole by the next start, and no line of
// the file is left cut off (a next start appending to a cut-off line
// would lose its first record in it).
func TestFileSinkCutsAFailedBatchOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sink.jsonl")
	s, err := OpenFileSink(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := func(from, n int) []*record.Record {
		var out []*record.Record
		for i := range n {
			out = append(out, &record.Record{Topic: "t", Offset: int64(from + i), Value: bytes.Repeat([]byte{'v'}, 100)})
		}
		return out
	}
	if err := s.Process(context.Background(), &Batch{}, recs(0, 3)); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s.w = &failingWriter{w: s.f, n: 250} // two lines and a half
	err = s.Process(context.Background(), &Batch{}, recs(3, 3))
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("Process: %v, want the write's error", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, good) {
		t.Fatalf("after the failed batch the file holds %d bytes, want the %d it held before it", len(after), len(good))
	}
	// The next start writes the batch again, whole, on lines of its own.
	s.w = s.f
	if err := s.Process(context.Background(), &Batch{}, recs(3, 3)); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		var r struct{ Offset int64 }
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Offset != int64(i) {
			t.Errorf("line %d: offset %d, %v: %.60q", i, r.Offset, err, l)
		}
	}
	if len(lines) != 6 {
		t.Errorf("%d lines, want 6", len(lines))
	}
}

// TestFileSinkLeavesAnotherWritersLines: a failed batch is cut off only
// when the file grew by what the batch wrote; lines another process
// appended meanwhile stay.
func TestFileSinkLeavesAnotherWritersLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sink.jsonl")
	s, err := OpenFileSink(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := `{"topic":"other","partition":0,"offset":9}` + "\n"
	s.w = writerFunc(func(p []byte) (int, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return 0, err
		}
		_, _ = f.WriteString(other) // another kbatch appends to the same file
		_ = f.Close()
		return 0, errDiskFull
	})
	if err := s.Process(context.Background(), &Batch{}, []*record.Record{{Topic: "t"}}); !errors.Is(err, errDiskFull) {
		t.Fatalf("Process: %v, want the write's error", err)
	}
	if got, _ := os.ReadFile(path); string(got) != other {
		t.Errorf("file %q, want the other writer's line %q", got, other)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestMendLastLineWithoutACut: when the file cannot be cut (no handle
// without O_APPEND, as for an append-only file), a cut-off record line is
// ended with a newline instead: the records that come again start on a
// line of their own.
func TestMendLastLineWithoutACut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sink.jsonl")
	torn := `{"topic":"t","partition":0,"offset":1,"val`
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msg, err := mendLastLine(nil, f, path, int64(len(torn)))
	if err != nil || !strings.Contains(msg, "could not be removed") {
		t.Fatalf("mendLastLine: %q, %v", msg, err)
	}
	if got, _ := os.ReadFile(path); string(got) != torn+"\n" {
		t.Errorf("file %q, want the line ended with a newline", got)
	}
}

// TestFileSinkStartsABatchOnALineOfItsOwn: another process appending to
// the same sink file was killed in the middle of a line after this sink
// opened it; the next batch's records start on a line of their own
// instead of running on from that line (or the other stream's acked
// record would sit inside a broken line).
func TestFileSinkStartsABatchOnALineOfItsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sink.jsonl")
	s, err := OpenFileSink(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := []*record.Record{{Topic: "t", Offset: 7}}
	if err := s.Process(context.Background(), &Batch{}, rec); err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = other.WriteString(`{"topic":"other","partition":0,"offset":119,"value":"zzzz`) // killed here
	_ = other.Close()
	if err := s.Process(context.Background(), &Batch{}, []*record.Record{{Topic: "t", Offset: 8}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[2], `{"topic":"t"`) || !json.Valid([]byte(lines[2])) {
		t.Fatalf("lines %q: want the batch's record on a line of its own after the cut-off one", lines)
	}
}
