package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestReplayShortOfUntil: a replay whose explicit UNTIL lies beyond the
// end seen at start (the last stable offset, held back by an open
// transaction, or the high watermark) writes what there is and exits 4,
// with one line saying so besides the summary; UNTIL latest, or an UNTIL
// within the end, exits 0; offsets below the log start keep exit 3.
func TestReplayShortOfUntil(t *testing.T) {
	tc := testkafka.New(t)
	b := strings.Join(tc.Brokers, ",")
	txn := tc.Topic("short-txn", 1)
	tc.ProduceN(txn, 0, 5, 10) // 0..4
	if open := tc.TxnProducer().Open(testkafka.Values(txn, 0, "o5", "o6", "o7")...); fmt.Sprint(open) != "[5 6 7]" {
		t.Fatalf("open transaction at %v, want [5 6 7]", open)
	}
	plain := tc.Topic("short-hwm", 1)
	tc.ProduceN(plain, 0, 20, 10)
	gone := tc.Topic("short-gone", 1)
	tc.ProduceN(gone, 0, 20, 10)
	tc.DeleteRecords(gone, 0, 10)

	tests := []struct {
		name       string
		args       []string
		code       int
		offsets    []int64
		stderrHas  []string
		stderrLine string // the last line of stderr, when code is not 0
	}{
		{"beyond the last stable offset", []string{txn + ":0:0-8", "--isolation", "committed"}, 4, replaySeq(0, 5),
			[]string{txn + "[0] requested 0 → 8: read 0 → 5, 5 records; capped at the last stable offset 5\n"},
			"kbatch: replay short of UNTIL: " + txn + "[0] ends at the last stable offset 5, before UNTIL 8; the end was seen at start: " +
				"with --isolation committed it is the last stable offset, which an open transaction holds back; everything up to the end was written"},
		{"within the high watermark, uncommitted", []string{txn + ":0:0-8"}, 0, replaySeq(0, 8), nil, ""},
		{"latest under an open transaction", []string{txn + ":0:2-latest", "--isolation", "committed"}, 0, replaySeq(2, 5), nil, ""},
		{"beyond the high watermark", []string{plain + ":0:15-30", plain + ":0:0-3"}, 4, append(replaySeq(15, 20), replaySeq(0, 3)...),
			[]string{plain + "[0] requested 15 → 30: read 15 → 20, 5 records; capped at the high watermark 20\n"},
			"kbatch: replay short of UNTIL: " + plain + "[0] ends at the high watermark 20, before UNTIL 30; the end was seen at start: " +
				"the offsets after it did not exist yet; everything up to the end was written"},
		{"up to the high watermark", []string{plain + ":0:15-20"}, 0, replaySeq(15, 20), nil, ""},
		{"below the log start too", []string{gone + ":0:5-30"}, 3, replaySeq(10, 20), []string{"capped at the high watermark 20"},
			"kbatch: replay incomplete: 5 requested offsets no longer exist (below the log start): " + gone + "[0] 5 → 10; everything still available was written"},
	}
	t.Run("spark job", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "job")
		_, stderr, code := runKbatch(t, "replay", "-b", b, plain+":0:15-30", "--emit", "spark", "--out", out, "--spark-output", "/tmp/replayed")
		if code != 4 || !strings.Contains(stderr, "kbatch: replay short of UNTIL: "+plain+"[0] ends at the high watermark 20, before UNTIL 30") {
			t.Fatalf("exit %d, want 4 saying where the job stops: %s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "kbatch_replay.py")); err != nil {
			t.Errorf("no job written: %v", err)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runKbatch(t, append([]string{"replay", "-b", b}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			if got := replayOffsetsOf(t, stdout); fmt.Sprint(got) != fmt.Sprint(tt.offsets) {
				t.Errorf("offsets %v, want %v", got, tt.offsets)
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr %q, want %q", stderr, s)
				}
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if tt.code == 0 {
				if strings.HasPrefix(last, "kbatch: ") || !strings.HasPrefix(last, "replay: ") {
					t.Errorf("stderr %q, want the summary last and no error", stderr)
				}
				return
			}
			if last != tt.stderrLine {
				t.Errorf("last line of stderr\n %q\nwant\n %q", last, tt.stderrLine)
			}
			if n := strings.Count(stderr, "kbatch: "); n != 1 {
				t.Errorf("%d error lines in %q, want 1", n, stderr)
			}
			if !strings.HasPrefix(lines[len(lines)-2], "replay: ") {
				t.Errorf("stderr %q, want the summary line before the error", stderr)
			}
		})
	}
}
