package record

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCreateFileRefusesExistingWithoutReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateFile(path, false); !errors.Is(err, ErrExists) {
		t.Fatalf("got %v, want ErrExists", err)
	}
	if _, err := CreateFile(dir, true); !errors.Is(err, ErrIsFolder) {
		t.Fatalf("folder: got %v, want ErrIsFolder", err)
	}
}

func TestWriteFileNewIsPrivateAndComplete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	recs := []Record{{Topic: "t", Offset: 1, Timestamp: time.UnixMilli(0), Value: []byte("a")}, {Topic: "t", Offset: 2, Timestamp: time.UnixMilli(0), Value: []byte{0xff}}}
	n, err := WriteFile(path, false, func(put func(*Record) error) error {
		for i := range recs {
			if err := put(&recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("n %d, err %v", n, err)
	}
	got, _ := os.ReadFile(path)
	want := string(AppendJSON(AppendJSON(nil, &recs[0]), &recs[1]))
	if string(got) != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// A failed fill leaves the earlier file as it was and no temporary file.
func TestWriteFileFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	_, err := WriteFile(path, true, func(put func(*Record) error) error {
		if err := put(&Record{Topic: "t"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Fatalf("old file changed: %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// Replacing keeps the file's mode.
	if _, err := WriteFile(path, true, func(func(*Record) error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
}
