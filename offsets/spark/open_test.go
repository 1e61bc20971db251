package spark

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenSyntheticIgnoresCrcAndTmp(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"metadata":       metadataFile,
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
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"metadata":  metadataFile,
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
