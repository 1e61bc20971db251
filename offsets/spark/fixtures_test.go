package spark

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Paths of the FORMAT.md §10 fixtures, relative to the fixtures directory.
const (
	kafka243   = "kafka-0-10-sql/structured-streaming/checkpoint-version-2.4.3-kafka-include-headers-default"
	topic243   = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
	ckpt210    = "sql-core/structured-streaming/checkpoint-version-2.1.0"
	ckpt231    = "sql-core/structured-streaming/checkpoint-version-2.3.1-for-multi-watermark-policy"
	ckpt351    = "sql-core/structured-streaming/checkpoint-version-3.5.1-streaming-deduplication"
	initial210 = "kafka-0-10-sql/kafka-source-initial-offset-version-2.1.0.bin"
)

// offsetMetadata is the part of OffsetSeqMetadata the fixture checks use.
type offsetMetadata struct {
	BatchWatermarkMs *int64         `json:"batchWatermarkMs"`
	BatchTimestampMs *int64         `json:"batchTimestampMs"`
	Conf             map[string]any `json:"conf"`
}

func metadataOf(t *testing.T, log OffsetLog) offsetMetadata {
	t.Helper()
	var md offsetMetadata
	if err := json.Unmarshal(log.Metadata, &md); err != nil {
		t.Fatalf("metadata %s: %v", log.Metadata, err)
	}
	if md.BatchWatermarkMs == nil || md.BatchTimestampMs == nil {
		t.Fatalf("metadata %s lacks batchWatermarkMs or batchTimestampMs", log.Metadata)
	}
	return md
}

func parseLogFixture(t *testing.T, rel string) OffsetLog {
	t.Helper()
	log, err := ParseOffsetLog(fixture(t, rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return log
}

// wantLongOffsets checks an offset log whose sources are all LongOffsets.
func wantLongOffsets(t *testing.T, log OffsetLog, raws ...string) {
	t.Helper()
	if log.Version != 1 || len(log.Sources) != len(raws) {
		t.Fatalf("got v%d with %d sources, want v1 with %d", log.Version, len(log.Sources), len(raws))
	}
	for i, s := range log.Sources {
		if s.Index != i || s.Raw != raws[i] || s.Kafka != nil || s.Void {
			t.Errorf("source %d = %+v, want LongOffset %q, not Kafka", i, s, raws[i])
		}
	}
}

// fixtureChecks has one check per data file of the fixtures directory, with
// the result FORMAT.md §10 expects. TestFixturesAllChecked makes sure no
// fixture is left out.
var fixtureChecks = map[string]func(t *testing.T, rel string){
	kafka243 + "/metadata": func(t *testing.T, rel string) {
		if id, err := parseStreamMetadata(fixture(t, rel)); err != nil || id != "fc415a71-f0a2-4c3c-aeaf-f9e258c3f726" {
			t.Errorf("id = %q, %v", id, err)
		}
	},
	kafka243 + "/offsets/0": func(t *testing.T, rel string) {
		log := parseLogFixture(t, rel)
		if log.Version != 1 || len(log.Sources) != 1 {
			t.Fatalf("got v%d with %d sources, want v1 with 1", log.Version, len(log.Sources))
		}
		sameOffsets(t, "source 0", log.Sources[0].Kafka, offs(topic243, 0, 3, 1, 3, 2, 3, 3, 3, 4, 3))
		md := metadataOf(t, log)
		if *md.BatchWatermarkMs != 0 || len(md.Conf) != 5 {
			t.Errorf("watermark %d, %d conf keys; want 0 and 5", *md.BatchWatermarkMs, len(md.Conf))
		}
		want := time.Date(2019, 9, 15, 0, 44, 45, 207e6, time.UTC)
		if got, ok := log.BatchTime(); !ok || !got.Equal(want) {
			t.Errorf("BatchTime = %v, %v; want %v", got, ok, want)
		}
	},
	kafka243 + "/commits/0": func(t *testing.T, rel string) {
		if v, err := ParseCommitLog(fixture(t, rel)); v != 1 || err != nil {
			t.Errorf("ParseCommitLog = %d, %v; want 1", v, err)
		}
	},
	kafka243 + "/sources/0/0": func(t *testing.T, rel string) {
		o, err := ParseInitialOffsets(fixture(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		sameOffsets(t, "initial offsets", o, offs(topic243, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0))
	},
	initial210: func(t *testing.T, rel string) {
		o, err := ParseInitialOffsets(fixture(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		sameOffsets(t, "2.1.0 initial offsets", o, offs("kafka-initial-offset-2-1-0", 0, 0, 1, 1, 2, 2))
	},
	"kafka-0-10-sql/history/SPARK-19517-1a3f5f8/kafka-source-initial-offset-version-2.1.0.bin": func(t *testing.T, rel string) {
		o, err := ParseInitialOffsets(fixture(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		sameOffsets(t, "original 2.1.0 initial offsets", o, offs("kafka-initial-offset-2-1-0", 0, 0, 1, 0, 2, 0))
	},
	"kafka-0-10-sql/kafka-source-initial-offset-future-version.bin": func(t *testing.T, rel string) {
		o, err := ParseInitialOffsets(fixture(t, rel))
		var uv *UnsupportedVersionError
		if !errors.As(err, &uv) || uv.Version != 99999 || uv.Max != 1 || o != nil {
			t.Fatalf("got %v, %v; want unsupported version v99999 (max v1)", o, err)
		}
		if want := "unsupported log version v99999 (kbatch reads up to v1)"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	},
	"kafka-0-10-sql/kafka-source-offset-version-2.1.0.txt": func(t *testing.T, rel string) {
		o, err := ParseOffsetJSON(fixture(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		sameOffsets(t, "offset JSON", o, merge(offs("topic1", 0, 456, 1, 789), offs("topic2", 0, 0)))
	},
	"sql-core/structured-streaming/offset-log-version-2.1.0/0": func(t *testing.T, rel string) {
		log := parseLogFixture(t, rel)
		checkTwoSourceLog(t, log, `{"logOffset":345}`)
	},
	"sql-core/history/SPARK-18671-1ef6b29/offset-log-version-2.1.0/0": func(t *testing.T, rel string) {
		log := parseLogFixture(t, rel)
		checkTwoSourceLog(t, log, "0")
	},
	"sql-core/history/PR-16128-49e940b/offset-log-version-2.1.0/15": func(t *testing.T, rel string) {
		log := parseLogFixture(t, rel)
		if log.Version != 1 || len(log.Sources) != 1 || log.Sources[0].Kafka == nil {
			t.Fatalf("got %+v, want v1 with one Kafka source", log)
		}
		k := log.Sources[0].Kafka
		topics := map[string]bool{}
		var sum int64
		for p, off := range k {
			topics[p.Topic] = true
			sum += off
		}
		if len(topics) != 12 || len(k) != 193 || sum != 125 {
			t.Errorf("%d topics, %d partitions, offsets sum %d; want 12, 193, 125", len(topics), len(k), sum)
		}
	},
	ckpt210 + "/metadata": func(t *testing.T, rel string) {
		if id, err := parseStreamMetadata(fixture(t, rel)); err != nil || id != "dddc5e7f-1e71-454c-8362-de184444fb5a" {
			t.Errorf("id = %q, %v", id, err)
		}
	},
	ckpt210 + "/offsets/0": func(t *testing.T, rel string) {
		log := parseLogFixture(t, rel)
		wantLongOffsets(t, log, "0")
		if md := metadataOf(t, log); md.Conf != nil {
			t.Errorf("Spark 2.1.0 wrote no conf, got %v", md.Conf)
		}
	},
	ckpt210 + "/offsets/1": func(t *testing.T, rel string) {
		wantLongOffsets(t, parseLogFixture(t, rel), "2")
	},
	ckpt231 + "/metadata": func(t *testing.T, rel string) {
		if id, err := parseStreamMetadata(fixture(t, rel)); err != nil || id != "549eeb1a-d762-420c-bb44-3fd6d73a5268" {
			t.Errorf("id = %q, %v", id, err)
		}
	},
	ckpt231 + "/offsets/0": func(t *testing.T, rel string) {
		log := parseLogFixture(t, rel)
		wantLongOffsets(t, log, "0", "0")
		if md := metadataOf(t, log); len(md.Conf) == 0 {
			t.Error("Spark 2.3.1 metadata has conf, got none")
		}
	},
	ckpt231 + "/offsets/1": func(t *testing.T, rel string) {
		log := parseLogFixture(t, rel)
		wantLongOffsets(t, log, "1", "0")
		if md := metadataOf(t, log); *md.BatchWatermarkMs != 10000 {
			t.Errorf("batchWatermarkMs = %d, want 10000", *md.BatchWatermarkMs)
		}
	},
	ckpt231 + "/commits/0": checkCommitV1,
	ckpt231 + "/commits/1": checkCommitV1,
	ckpt351 + "/metadata": func(t *testing.T, rel string) {
		if id, err := parseStreamMetadata(fixture(t, rel)); err != nil || id != "a13717f3-7485-421b-b55a-21625123b680" {
			t.Errorf("id = %q, %v", id, err)
		}
	},
	ckpt351 + "/offsets/0": func(t *testing.T, rel string) { checkModernLog(t, rel, "0") },
	ckpt351 + "/offsets/1": func(t *testing.T, rel string) { checkModernLog(t, rel, "1") },
}

func checkCommitV1(t *testing.T, rel string) {
	if v, err := ParseCommitLog(fixture(t, rel)); v != 1 || err != nil {
		t.Errorf("ParseCommitLog = %d, %v; want 1", v, err)
	}
}

func checkModernLog(t *testing.T, rel, raw string) {
	log := parseLogFixture(t, rel)
	wantLongOffsets(t, log, raw)
	if md := metadataOf(t, log); len(md.Conf) != 9 {
		t.Errorf("%d conf keys, want 9: %v", len(md.Conf), md.Conf)
	}
}

// checkTwoSourceLog checks the Spark 2.1.0 two-source offset log: a file or
// LongOffset source, then Kafka.
func checkTwoSourceLog(t *testing.T, log OffsetLog, source0 string) {
	t.Helper()
	if log.Version != 1 || len(log.Sources) != 2 {
		t.Fatalf("got v%d with %d sources, want v1 with 2", log.Version, len(log.Sources))
	}
	md := metadataOf(t, log)
	if *md.BatchWatermarkMs != 0 || *md.BatchTimestampMs != 1480981499528 || md.Conf != nil {
		t.Errorf("metadata %s, want (0, 1480981499528) and no conf", log.Metadata)
	}
	if s := log.Sources[0]; s.Raw != source0 || s.Kafka != nil {
		t.Errorf("source 0 = %+v, want %q and not Kafka", s, source0)
	}
	sameOffsets(t, "source 1", log.Sources[1].Kafka, offs("topic-0", 0, 1))
}

func TestFixtures(t *testing.T) {
	fixtureDir(t)
	names := make([]string, 0, len(fixtureChecks))
	for rel := range fixtureChecks {
		names = append(names, rel)
	}
	slices.Sort(names)
	for _, rel := range names {
		t.Run(rel, func(t *testing.T) { fixtureChecks[rel](t, rel) })
	}
}

// TestFixturesAllChecked fails when a data file in the fixtures directory
// has no entry in fixtureChecks, or an entry names a file that is gone.
func TestFixturesAllChecked(t *testing.T) {
	dir := fixtureDir(t)
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		found = append(found, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range found {
		if fixtureChecks[rel] == nil {
			t.Errorf("fixture %s has no expected result in fixtureChecks", rel)
		}
	}
	for rel := range fixtureChecks {
		if !slices.Contains(found, rel) {
			t.Errorf("fixtureChecks names %s, which is not in %s", rel, dir)
		}
	}
	if len(found) != 22 {
		t.Errorf("found %d fixture data files, SOURCES.md lists 22", len(found))
	}
}
