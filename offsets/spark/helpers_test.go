package spark

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/offsets"
)

// fixtureDir is testdata/spark-checkpoint in the repository root; a
// missing folder fails the test.
func fixtureDir(t testing.TB) string { return fixtures.SparkCheckpoint(t) }

// fixture reads one fixture file by its path under the fixtures directory.
func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("fixture %s: %v", rel, err)
	}
	return b
}

// offs builds one topic's Offsets from partition, offset pairs.
func offs(topic string, pairs ...int64) Offsets {
	o := Offsets{}
	for i := 0; i+1 < len(pairs); i += 2 {
		o[offsets.Partition{Topic: topic, Partition: int32(pairs[i])}] = pairs[i+1]
	}
	return o
}

// merge unions several Offsets.
func merge(parts ...Offsets) Offsets {
	out := Offsets{}
	for _, o := range parts {
		maps.Copy(out, o)
	}
	return out
}

// sameOffsets fails unless got and want hold the same partitions and
// offsets. Maps are compared, never text: Spark writes keys in hash order.
func sameOffsets(t testing.TB, what string, got, want Offsets) {
	t.Helper()
	if want != nil && got == nil {
		t.Errorf("%s: got nil offsets, want %v", what, want)
		return
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// checkpointDir is a new folder holding Spark's metadata file and files
// (name: content, slash-separated names).
func checkpointDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"metadata": metadataFile})
	writeTree(t, dir, files)
	return dir
}

// writeTree creates files under dir; a path ending in "/" is a directory.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeState is every path under a directory with its mode, size and
// modification time, to prove a checkpoint was only read.
func treeState(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, strings.Join([]string{p, fi.Mode().String(), fi.ModTime().Format(time.RFC3339Nano), strconv.FormatInt(fi.Size(), 10)}, "|"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// assertUntouched fails if the tree under dir changed since before.
func assertUntouched(t testing.TB, dir string, before []string) {
	t.Helper()
	if after := treeState(t, dir); !slices.Equal(before, after) {
		t.Errorf("checkpoint directory was modified:\n before %v\n after  %v", before, after)
	}
}

// offsetFile is a synthetic offsets/<N> file in v1 with the given source
// lines.
func offsetFile(sources ...string) string {
	return "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1700000000000,\"conf\":{}}\n" + strings.Join(sources, "\n")
}

// initialFile is a synthetic sources/<i>/0 file in the current format.
func initialFile(json string) string { return "\x00v1\n" + json }

const metadataFile = `{"id":"00000000-0000-0000-0000-000000000001"}`

// mustOpen is Open(dir), failing the test on an error.
func mustOpen(t testing.TB, dir string) *Checkpoint {
	t.Helper()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustCommitted is c.CommittedOffsets(source), failing the test on an
// error.
func mustCommitted(t testing.TB, c *Checkpoint, source int) Position {
	t.Helper()
	pos, err := c.CommittedOffsets(source)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// mustBatch is c.Batch(id, source), failing the test on an error.
func mustBatch(t testing.TB, c *Checkpoint, id int64, source int) BatchRanges {
	t.Helper()
	b, err := c.Batch(id, source)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustOffsetLog is c.OffsetLog(id), failing the test on an error.
func mustOffsetLog(t testing.TB, c *Checkpoint, id int64) OffsetLog {
	t.Helper()
	l, err := c.OffsetLog(id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// wantErrorPrefix fails t unless err's text starts with want.
func wantErrorPrefix(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want prefix %q", err, want)
	}
}
