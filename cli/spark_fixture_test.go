package cli

import (
	"strconv"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
)

// Checkpoints a real Spark 4.2.0 query wrote (testdata/spark-real): kbatch
// spark shows every batch with exactly the ranges of Spark's offset log,
// acked where commits/N exists, without a cluster.
func TestSparkRealFixtures(t *testing.T) {
	sparkEnv(t)
	for name, want := range map[string]struct{ batches, acked int }{
		"spark-4.2.0-3-partitions": {5, 5},
	} {
		t.Run(name, func(t *testing.T) {
			dir := fixtures.SparkReal(t, name)
			out, errOut, code := sparkRun(t, "spark", dir, "--no-tui", "--once", "--last", "1000")
			if code != 0 {
				t.Fatalf("kbatch spark %s: exit %d: %s", dir, code, errOut)
			}
			lines := parseSparkLines(t, out)
			if n := checkSparkLines(t, dir, lines, want.acked); n != want.batches {
				t.Errorf("%d batches shown, want %d", n, want.batches)
			}
			// Batch 0 reads from the initial offsets (sources/0/0: earliest,
			// 0 on every partition) to offsets/0.
			for _, l := range lines {
				if l.Type == "batch" && l.Batch == 0 {
					end := ckptOffsets(t, dir, 0)
					for _, r := range l.Ranges {
						if r.From != 0 || r.Until != end[r.Topic+":"+strconv.Itoa(int(r.Partition))] {
							t.Errorf("batch 0 range %s[%d] %d-%d, want 0-%d", r.Topic, r.Partition, r.From, r.Until, end[r.Topic+":"+strconv.Itoa(int(r.Partition))])
						}
					}
					if len(l.Ranges) != len(end) {
						t.Errorf("batch 0 has %d ranges, offsets/0 %d partitions", len(l.Ranges), len(end))
					}
				}
			}
		})
	}
}
