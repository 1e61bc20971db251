package spark

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func openFixture(t *testing.T, rel string) *Checkpoint {
	t.Helper()
	c := mustOpen(t, filepath.Join(fixtureDir(t), filepath.FromSlash(rel)))
	return c
}

func wantListing(t *testing.T, c *Checkpoint, id string, batches, commits []int64, committed int64) {
	t.Helper()
	if c.ID != id || !slices.Equal(c.Batches, batches) || !slices.Equal(c.Commits, commits) || c.Committed != committed {
		t.Errorf("Open = id %q batches %v commits %v committed %d; want %q %v %v %d",
			c.ID, c.Batches, c.Commits, c.Committed, id, batches, commits, committed)
	}
}

func TestCheckpointFixtureKafka243(t *testing.T) {
	dir := filepath.Join(fixtureDir(t), filepath.FromSlash(kafka243))
	before := treeState(t, dir)
	c := openFixture(t, kafka243)
	wantListing(t, c, "fc415a71-f0a2-4c3c-aeaf-f9e258c3f726", []int64{0}, []int64{0}, 0)

	committed := offs(topic243, 0, 3, 1, 3, 2, 3, 3, 3, 4, 3)
	for _, source := range []int{-1, 0} {
		pos, err := c.CommittedOffsets(source)
		if err != nil {
			t.Fatalf("CommittedOffsets(%d): %v", source, err)
		}
		sameOffsets(t, "committed", pos.Offsets, committed)
		if pos.Source != 0 || pos.Origin != "offsets/0 (committed batch 0)" || pos.InFlight != nil {
			t.Errorf("CommittedOffsets(%d) = source %d origin %q in-flight %v", source, pos.Source, pos.Origin, pos.InFlight)
		}
	}

	b := mustBatch(t, c, 0, -1)
	sameOffsets(t, "batch 0 start (sources/0/0)", b.Start, offs(topic243, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0))
	sameOffsets(t, "batch 0 end", b.End, committed)
	if b.ID != 0 || !b.Committed {
		t.Errorf("batch = %+v, want id 0 committed", b)
	}

	if _, err := c.Batch(1, -1); err == nil || !strings.Contains(err.Error(), "batch 1 is not in the offset log") {
		t.Errorf("Batch(1) error = %v", err)
	}
	if _, err := c.CommittedOffsets(1); err == nil || !strings.Contains(err.Error(), "no source 1") {
		t.Errorf("CommittedOffsets(1) error = %v", err)
	}
	assertUntouched(t, dir, before)
}

func TestCheckpointFixtureNoKafka(t *testing.T) {
	for _, tc := range []struct {
		rel       string
		id        string
		batches   []int64
		commits   []int64
		committed int64
	}{
		// Spark 2.1 had no commit log: nothing is committed.
		{ckpt210, "dddc5e7f-1e71-454c-8362-de184444fb5a", []int64{0, 1}, nil, -1},
		{ckpt231, "549eeb1a-d762-420c-bb44-3fd6d73a5268", []int64{0, 1}, []int64{0, 1}, 1},
		{ckpt351, "a13717f3-7485-421b-b55a-21625123b680", []int64{0, 1}, nil, -1},
	} {
		t.Run(filepath.Base(tc.rel), func(t *testing.T) {
			c := openFixture(t, tc.rel)
			wantListing(t, c, tc.id, tc.batches, tc.commits, tc.committed)
			for _, source := range []int{-1, 0} {
				if _, err := c.CommittedOffsets(source); !errors.Is(err, ErrNoKafkaSource) {
					t.Errorf("CommittedOffsets(%d) error = %v, want ErrNoKafkaSource", source, err)
				}
			}
			_, err := c.Batch(1, -1)
			if !errors.Is(err, ErrNoKafkaSource) {
				t.Fatalf("Batch(1) error = %v, want ErrNoKafkaSource", err)
			}
			if want := filepath.Join(c.Dir, "offsets", "1") + ": no Kafka source"; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		})
	}
}
