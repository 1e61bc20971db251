package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/offsets"
)

// offsetsSparkFixtures is testdata/spark-checkpoint in the repository.
func offsetsSparkFixtures(t *testing.T) string { return fixtures.SparkCheckpoint(t) }

// offsetsSparkCheckpoint lays real fixture files out as a checkpoint folder:
// files maps a path in the new folder to a fixture path, or to literal
// content when it starts with "synthetic:" (files no fixture has, such as
// a commit for a loose offset log). A path ending in "/" is an empty folder.
func offsetsSparkCheckpoint(t *testing.T, files map[string]string) string {
	t.Helper()
	fx := offsetsSparkFixtures(t)
	dir := t.TempDir()
	for dst, src := range files {
		if strings.HasSuffix(dst, "/") {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(dst)), 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var b []byte
		if s, ok := strings.CutPrefix(src, "synthetic:"); ok {
			b = []byte(s)
		} else {
			var err error
			if b, err = os.ReadFile(filepath.Join(fx, filepath.FromSlash(src))); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, filepath.FromSlash(dst))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOffsetsImportFromSparkFixtures(t *testing.T) {
	const topic243 = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
	fx := offsetsSparkFixtures(t)
	ss := "sql-core/structured-streaming/"
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		// want is the imported offsets; sum and count check big ones.
		want       map[offsets.Partition]int64
		count      int
		sum        int64
		origin     string
		code       int
		errorParts []string
		args       []string
	}{
		{name: "kafka 2.4.3 checkpoint, committed batch 0",
			dir: func(t *testing.T) string {
				return filepath.Join(fx, "kafka-0-10-sql/structured-streaming/checkpoint-version-2.4.3-kafka-include-headers-default")
			},
			want:   map[offsets.Partition]int64{offsetsTP(topic243, 0): 3, offsetsTP(topic243, 1): 3, offsetsTP(topic243, 2): 3, offsetsTP(topic243, 3): 3, offsetsTP(topic243, 4): 3},
			origin: "offsets/0 (committed batch 0)"},
		{name: "offset log 2.1.0 (file source then Kafka) with a synthetic commit",
			dir: func(t *testing.T) string {
				return offsetsSparkCheckpoint(t, map[string]string{"offsets/0": ss + "offset-log-version-2.1.0/0", "commits/0": "synthetic:v1\n{}"})
			},
			want: map[offsets.Partition]int64{offsetsTP("topic-0", 0): 1}},
		{name: "offset log 2.1.0 before SPARK-18671 with a synthetic commit",
			dir: func(t *testing.T) string {
				return offsetsSparkCheckpoint(t, map[string]string{"offsets/0": "sql-core/history/SPARK-18671-1ef6b29/offset-log-version-2.1.0/0", "commits/0": "synthetic:v1\n{}"})
			},
			want: map[offsets.Partition]int64{offsetsTP("topic-0", 0): 1}},
		{name: "offset log with 12 topics, 193 partitions, with a synthetic commit",
			dir: func(t *testing.T) string {
				return offsetsSparkCheckpoint(t, map[string]string{"offsets/15": "sql-core/history/PR-16128-49e940b/offset-log-version-2.1.0/15", "commits/15": "synthetic:v1\n{}"})
			},
			count: 193, sum: 125},
		{name: "initial offsets, Spark 2.1.0 format, nothing committed",
			dir: func(t *testing.T) string {
				return offsetsSparkCheckpoint(t, map[string]string{"offsets/": "", "sources/0/0": "kafka-0-10-sql/kafka-source-initial-offset-version-2.1.0.bin"})
			},
			want: map[offsets.Partition]int64{offsetsTP("kafka-initial-offset-2-1-0", 0): 0, offsetsTP("kafka-initial-offset-2-1-0", 1): 1, offsetsTP("kafka-initial-offset-2-1-0", 2): 2}},
		{name: "initial offsets before SPARK-19517",
			dir: func(t *testing.T) string {
				return offsetsSparkCheckpoint(t, map[string]string{"offsets/": "", "sources/0/0": "kafka-0-10-sql/history/SPARK-19517-1a3f5f8/kafka-source-initial-offset-version-2.1.0.bin"})
			},
			want: map[offsets.Partition]int64{offsetsTP("kafka-initial-offset-2-1-0", 0): 0, offsetsTP("kafka-initial-offset-2-1-0", 1): 0, offsetsTP("kafka-initial-offset-2-1-0", 2): 0}},
		{name: "initial offsets of a future version are refused",
			dir: func(t *testing.T) string {
				return offsetsSparkCheckpoint(t, map[string]string{"offsets/": "", "sources/0/0": "kafka-0-10-sql/kafka-source-initial-offset-future-version.bin"})
			},
			// Without an offset log only --source says the folder is a Kafka source's.
			args: []string{"--source", "0"}, code: 1, errorParts: []string{filepath.Join("sources", "0", "0"), "v99999"}},
		{name: "no Kafka source (2.1.0)", dir: func(t *testing.T) string { return filepath.Join(fx, ss+"checkpoint-version-2.1.0") },
			code: 2, errorParts: []string{"no Kafka source"}},
		{name: "no Kafka source (2.3.1)", dir: func(t *testing.T) string {
			return filepath.Join(fx, ss+"checkpoint-version-2.3.1-for-multi-watermark-policy")
		},
			code: 2, errorParts: []string{"no Kafka source"}},
		{name: "no Kafka source (3.5.1)", dir: func(t *testing.T) string {
			return filepath.Join(fx, ss+"checkpoint-version-3.5.1-streaming-deduplication")
		},
			code: 2, errorParts: []string{"no Kafka source"}},
		{name: "not a checkpoint", dir: func(t *testing.T) string { return t.TempDir() },
			code: 1, errorParts: []string{"not a Spark checkpoint"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := isolatedStore(t)
			dir := tc.dir(t)
			args := append([]string{"offsets", "import", "--name", "q", "--from-spark", dir, "--store", store}, tc.args...)
			out, errOut, code := runInProcess(t, "", args...)
			if tc.code != 0 {
				offsetsWantFail(t, errOut, code, tc.code, tc.errorParts...)
				return
			}
			offsetsWantOK(t, out, errOut, code)
			got, evs := offsetsStored(t, store, "q")
			if tc.want != nil {
				offsetsSameNext(t, "imported", got, tc.want)
			}
			if tc.count > 0 {
				var sum int64
				for _, off := range got {
					sum += off
				}
				if len(got) != tc.count || sum != tc.sum {
					t.Errorf("imported %d partitions summing to %d, want %d and %d", len(got), sum, tc.count, tc.sum)
				}
			}
			if !strings.Contains(evs[0].Message, "imported from Spark checkpoint "+dir) || !strings.Contains(evs[0].Message, tc.origin) {
				t.Errorf("event message %q", evs[0].Message)
			}
		})
	}
}

// --source picks the Kafka source by index; a wrong index is an error.
func TestOffsetsImportFromSparkSource(t *testing.T) {
	dir := offsetsSparkCheckpoint(t, map[string]string{
		"offsets/0": "sql-core/structured-streaming/offset-log-version-2.1.0/0", "commits/0": "synthetic:v1\n{}"})
	store := isolatedStore(t)
	offsetsOK(t)(runInProcess(t, "", "offsets", "import", "--from-spark", dir, "--source", "1", "--store", store))
	// No --name: the name watch derives from the topics.
	got, _ := offsetsStored(t, store, "topic-0")
	offsetsSameNext(t, "--source 1", got, map[offsets.Partition]int64{offsetsTP("topic-0", 0): 1})
	_, errOut, code := runInProcess(t, "", "offsets", "import", "--from-spark", dir, "--source", "0", "--store", store)
	offsetsWantFail(t, errOut, code, 2, "source 0's offset is", "not Kafka offset JSON")
}

// The bare Kafka offset JSON fixture is what --from-json reads in Spark's
// form.
func TestOffsetsImportSparkOffsetJSONFixture(t *testing.T) {
	store := isolatedStore(t)
	file := filepath.Join(offsetsSparkFixtures(t), "kafka-0-10-sql", "kafka-source-offset-version-2.1.0.txt")
	offsetsOK(t)(runInProcess(t, "", "offsets", "import", "--name", "j", "--from-json", file, "--store", store))
	got, _ := offsetsStored(t, store, "j")
	offsetsSameNext(t, "offset JSON fixture", got, map[offsets.Partition]int64{offsetsTP("topic1", 0): 456, offsetsTP("topic1", 1): 789, offsetsTP("topic2", 0): 0})
}
