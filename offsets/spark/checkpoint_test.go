package spark

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckpointSyntheticPurgedOffsets(t *testing.T) {
	dir := checkpointDir(t, map[string]string{
		"offsets/5": offsetFile(`{"t":{"0":50,"1":5}}`),
		"offsets/6": offsetFile(`{"t":{"1":6,"0":60}}`),
		"offsets/7": offsetFile(`{"t":{"0":70,"1":7,"2":1}}`),
		"commits/5": "v1\n{}",
		"commits/6": "v1\n{}",
	})
	c := mustOpen(t, dir)
	wantListing(t, c, "00000000-0000-0000-0000-000000000001", []int64{5, 6, 7}, []int64{5, 6}, 6)

	_, err := c.Batch(5, -1)
	want := "spark checkpoint " + filepath.Join(dir, "offsets", "4") + ": missing, so where batch 5 started is unknown (Spark purged it"
	wantErrorPrefix(t, err, want)

	b := mustBatch(t, c, 7, -1)
	sameOffsets(t, "batch 7 start", b.Start, offs("t", 0, 60, 1, 6))
	sameOffsets(t, "batch 7 end (partition 2 is new)", b.End, offs("t", 0, 70, 1, 7, 2, 1))
	if b.Committed {
		t.Error("batch 7 has no commit but reads as committed")
	}

	if _, err := c.Batch(8, -1); err == nil || !strings.HasSuffix(err.Error(), "batch 8 is not in the offset log (offsets/ has batches 5–7)") {
		t.Errorf("Batch(8) error %v", err)
	}

	pos := mustCommitted(t, c, -1)
	sameOffsets(t, "committed", pos.Offsets, offs("t", 0, 60, 1, 6))
	sameOffsets(t, "in flight", pos.InFlight, offs("t", 0, 70, 1, 7, 2, 1))

	// A commit whose offset file is gone is an error, never a guess.
	if err := os.Remove(filepath.Join(dir, "offsets", "6")); err != nil {
		t.Fatal(err)
	}
	_, err = c.CommittedOffsets(-1)
	want = "spark checkpoint " + filepath.Join(dir, "offsets", "6") + ": missing although commits/6 exists"
	wantErrorPrefix(t, err, want)
}

func TestCheckpointSyntheticNoCommitsDir(t *testing.T) {
	dir := checkpointDir(t, map[string]string{
		"offsets/0":   offsetFile(`{"t":{"0":3,"1":4}}`),
		"sources/0/0": initialFile(`{"t":{"1":1,"0":0}}`),
	})
	c := mustOpen(t, dir)
	wantListing(t, c, "00000000-0000-0000-0000-000000000001", []int64{0}, nil, -1)
	for _, source := range []int{-1, 0} {
		pos := mustCommitted(t, c, source)
		sameOffsets(t, "initial", pos.Offsets, offs("t", 0, 0, 1, 1))
		sameOffsets(t, "in flight batch 0", pos.InFlight, offs("t", 0, 3, 1, 4))
		if pos.Origin != "sources/0/0 (initial offsets, nothing committed yet)" {
			t.Errorf("origin %q", pos.Origin)
		}
	}
	b, err := c.Batch(0, -1)
	if err != nil || b.Committed {
		t.Fatalf("Batch(0) = %+v, %v", b, err)
	}
	sameOffsets(t, "batch 0 start", b.Start, offs("t", 0, 0, 1, 1))
}

func TestCheckpointSyntheticNoOffsetLogYet(t *testing.T) {
	dir := checkpointDir(t, map[string]string{
		"sources/0/0": "v1\n0",
		"sources/1/0": initialFile(`{"t":{"0":5}}`),
	})
	c := mustOpen(t, dir)
	pos := mustCommitted(t, c, -1)
	if pos.Source != 1 || pos.InFlight != nil || pos.Origin != "sources/1/0 (initial offsets, nothing committed yet)" {
		t.Errorf("position %+v", pos)
	}
	sameOffsets(t, "initial", pos.Offsets, offs("t", 0, 5))

	_, err := c.CommittedOffsets(2)
	want := "spark checkpoint " + dir + ": nothing committed yet and sources/2/0 does not exist"
	wantErrorPrefix(t, err, want)
}

func TestCheckpointSyntheticVoidAndNewSource(t *testing.T) {
	dir := checkpointDir(t, map[string]string{
		"offsets/0":   offsetFile("-", `{"b":{"0":10}}`),
		"offsets/1":   offsetFile(`{"a":{"0":3}}`, `{"b":{"0":20}}`),
		"commits/0":   "v1\n{}",
		"sources/0/0": initialFile(`{"a":{"0":1}}`),
		"sources/1/0": initialFile(`{"b":{"0":0}}`),
	})
	c := mustOpen(t, dir)

	// Batch 0 has one Kafka line, so -1 finds it.
	pos := mustCommitted(t, c, -1)
	if pos.Source != 1 {
		t.Errorf("source %d, want 1", pos.Source)
	}
	sameOffsets(t, "source 1 committed", pos.Offsets, offs("b", 0, 10))
	sameOffsets(t, "source 1 in flight", pos.InFlight, offs("b", 0, 20))

	// Source 0 had no offset ("-") in the committed batch.
	pos = mustCommitted(t, c, 0)
	sameOffsets(t, "source 0 committed", pos.Offsets, offs("a", 0, 1))
	sameOffsets(t, "source 0 in flight", pos.InFlight, offs("a", 0, 3))
	if !strings.HasPrefix(pos.Origin, "sources/0/0 (initial offsets; committed batch 0 has no offset for source 0") {
		t.Errorf("origin %q", pos.Origin)
	}

	// Batch 1 has two Kafka lines: the caller must choose.
	if _, err := c.Batch(1, -1); !errors.Is(err, ErrSeveralKafkaSources) {
		t.Errorf("Batch(1, -1) error %v, want ErrSeveralKafkaSources", err)
	} else if !strings.Contains(err.Error(), `0: Kafka "a", 1: Kafka "b"`) {
		t.Errorf("error %q does not list the sources", err)
	}
	b := mustBatch(t, c, 1, 0)
	sameOffsets(t, "source 0 new in batch 1 starts at its initial offsets", b.Start, offs("a", 0, 1))
	b = mustBatch(t, c, 1, 1)
	sameOffsets(t, "source 1 batch 1 start", b.Start, offs("b", 0, 10))
	if _, err := c.Batch(0, 0); err == nil || !strings.HasSuffix(err.Error(), "source 0 has no offset in batch 0") {
		t.Errorf("Batch(0, 0) error %v", err)
	}
}

func TestCheckpointSyntheticV2Logs(t *testing.T) {
	dir := t.TempDir()
	md := `{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{},"sourceMetadataInfo":{}}`
	writeTree(t, dir, map[string]string{
		"metadata":    metadataFile,
		"offsets/0":   "v2\n" + md + "\n1:{\"logOffset\":1}\n0:{\"t\":{\"0\":5}}",
		"offsets/1":   "v2\n" + md + "\n0:{\"t\":{\"0\":9}}\n1:{\"logOffset\":2}",
		"commits/0":   "v2\n{\"nextBatchWatermarkMs\":0,\"stateUniqueIds\":{}}",
		"commits/1":   "v2\n{\"nextBatchWatermarkMs\":0}",
		"sources/0/0": initialFile(`{"t":{"0":0}}`),
	})
	c := mustOpen(t, dir)
	pos := mustCommitted(t, c, -1)
	if pos.Source != 0 || pos.Origin != "offsets/1 (committed batch 1)" || pos.InFlight != nil {
		t.Errorf("position %+v", pos)
	}
	sameOffsets(t, "committed", pos.Offsets, offs("t", 0, 9))
	b := mustBatch(t, c, 1, 0)
	sameOffsets(t, "batch 1 start, matched by source id", b.Start, offs("t", 0, 5))
}

func TestCheckpointSyntheticBadArguments(t *testing.T) {
	dir := checkpointDir(t, map[string]string{"offsets/0": offsetFile(`{"t":{"0":1}}`)})
	c := mustOpen(t, dir)
	if _, err := c.CommittedOffsets(-2); err == nil {
		t.Error("CommittedOffsets(-2) gave no error")
	}
	if _, err := c.Batch(-1, -1); err == nil {
		t.Error("Batch(-1) gave no error")
	}
	if _, err := c.Batch(0, 3); err == nil || !strings.Contains(err.Error(), "no source 3; the query has 1 source") {
		t.Errorf("Batch(0, 3) error %v", err)
	}
	if !slices.Equal(c.Batches, []int64{0}) {
		t.Errorf("batches %v", c.Batches)
	}
}

func TestOpenSyntheticIgnoresCrcAndTmp(t *testing.T) {
	dir := checkpointDir(t, map[string]string{
		"offsets/0":      offsetFile(`{"t":{"0":10}}`),
		"offsets/1":      offsetFile(`{"t":{"0":20}}`),
		"offsets/2":      offsetFile(`{"t":{"0":30}}`),
		"offsets/.0.crc": "junk",
		"offsets/.2.crc": "junk",
		"offsets/.3.1b4e28ba-2fa1-11d2-883f-0016d3cca427.tmp": "v1\npartial",
		"offsets/007":        "not canonical",
		"offsets/-1":         "negative",
		"offsets/x":          "junk",
		"offsets/99/":        "",
		"commits/0":          "v1\n{}",
		"commits/1":          "v1\n{\"nextBatchWatermarkMs\":0}",
		"commits/.1.crc":     "junk",
		"commits/.2.abc.tmp": "v1\n{}",
		"sources/0/0":        initialFile(`{"t":{"0":0}}`),
		"sources/0/.0.crc":   "junk",
		"state/0/0/1.delta":  "state",
	})
	before := treeState(t, dir)
	c := mustOpen(t, dir)
	wantListing(t, c, "00000000-0000-0000-0000-000000000001", []int64{0, 1, 2}, []int64{0, 1}, 1)

	pos := mustCommitted(t, c, -1)
	sameOffsets(t, "committed", pos.Offsets, offs("t", 0, 20))
	sameOffsets(t, "in flight", pos.InFlight, offs("t", 0, 30))
	if pos.Origin != "offsets/1 (committed batch 1)" || pos.Source != 0 {
		t.Errorf("origin %q source %d", pos.Origin, pos.Source)
	}
	for id, want := range map[int64][2]Offsets{
		0: {offs("t", 0, 0), offs("t", 0, 10)},
		1: {offs("t", 0, 10), offs("t", 0, 20)},
		2: {offs("t", 0, 20), offs("t", 0, 30)},
	} {
		b, err := c.Batch(id, -1)
		if err != nil {
			t.Fatalf("Batch(%d): %v", id, err)
		}
		sameOffsets(t, "start", b.Start, want[0])
		sameOffsets(t, "end", b.End, want[1])
		if b.Committed != (id <= 1) {
			t.Errorf("batch %d committed = %v", id, b.Committed)
		}
	}
	assertUntouched(t, dir, before)
}

func TestOpenSyntheticErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"file":                 "x",
		"empty/":               "",
		"badmeta/metadata":     "{not json",
		"onlyoffsets/offsets/": "",
		"offsetsfile/offsets":  "x",
	})
	for _, tc := range []struct{ rel, want string }{
		{"missing", ": no such file or directory"},
		{"file", ": not a directory"},
		{"empty", ": not a Spark checkpoint (no metadata file and no offsets/ directory)"},
		{"badmeta", "badmeta/metadata: malformed: not a {\"id\":...} JSON object"},
		{"offsetsfile", "offsetsfile/offsets: not a directory"},
	} {
		_, err := Open(filepath.Join(dir, tc.rel))
		if err == nil || !strings.HasPrefix(err.Error(), "spark checkpoint "+dir) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s) error %v, want it to contain %q", tc.rel, err, tc.want)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir error %v does not wrap fs.ErrNotExist", err)
	}
	c, err := Open(filepath.Join(dir, "onlyoffsets"))
	if err != nil || c.ID != "" || len(c.Batches) != 0 || c.Committed != -1 {
		t.Errorf("Open(onlyoffsets) = %+v, %v", c, err)
	}
}

func TestCheckpointSyntheticUnsupportedVersions(t *testing.T) {
	dir := checkpointDir(t, map[string]string{
		"offsets/7": "v99999\n{}\n{\"t\":{\"0\":1}}",
		"commits/7": "v1\n{}",
	})
	c := mustOpen(t, dir)
	_, err := c.CommittedOffsets(-1)
	want := "spark checkpoint " + filepath.Join(dir, "offsets", "7") + ": unsupported log version v99999 (kbatch reads up to v2)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}

	writeTree(t, dir, map[string]string{"offsets/7": "x1\n{}"})
	_, err = c.CommittedOffsets(-1)
	want = "spark checkpoint " + filepath.Join(dir, "offsets", "7") + `: malformed: failed to read log version from the first line (2 bytes, not v<number>)`
	if err == nil || err.Error() != want || !errors.Is(err, ErrMalformed) {
		t.Errorf("error %v\nwant %s", err, want)
	}

	writeTree(t, dir, map[string]string{"commits/8": "v3\n{}"})
	_, err = Open(dir)
	want = "spark checkpoint " + filepath.Join(dir, "commits", "8") + ": unsupported log version v3 (kbatch reads up to v2)"
	var uv *UnsupportedVersionError
	if err == nil || err.Error() != want || !errors.As(err, &uv) {
		t.Errorf("Open error %v\nwant %s", err, want)
	}
}
