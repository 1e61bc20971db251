package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// runReplayCLI runs "kbatch replay -b BROKERS args..." in process, its
// warnings on the same stderr, and returns stdout, stderr (ending with the
// error line main would print) and the exit code.
func runReplayCLI(t *testing.T, tc *testkafka.Cluster, args ...string) (string, string, int) {
	t.Helper()
	var stderr bytes.Buffer
	root := newRootCommandFor(&globalOptions{stderr: &stderr, getenv: os.Getenv})
	return runRoot(root, &stderr, "", append([]string{"replay", "-b", strings.Join(tc.Brokers, ",")}, args...)...)
}

func replayOffsetsOf(t *testing.T, jsonl string) []int64 {
	t.Helper()
	var offs []int64
	sc := bufio.NewScanner(strings.NewReader(jsonl))
	for sc.Scan() {
		var r struct {
			Offset int64 `json:"offset"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		offs = append(offs, r.Offset)
	}
	return offs
}

func replaySeq(from, until int64) []int64 {
	var s []int64
	for o := from; o < until; o++ {
		s = append(s, o)
	}
	return s
}

// TestReplayCommandUsage: every bad RANGE, flag, topic or partition is
// exit 2 with one line that names it; nothing is written.
func TestReplayCommandUsage(t *testing.T) {
	tc, topic := filledTopic(t, "cli-usage", 2, 10, 10)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "replay needs at least one RANGE"},
		{[]string{""}, `invalid range "": missing topic`},
		{[]string{"events"}, `invalid range "events": missing ":PARTITIONS:FROM-UNTIL"`},
		{[]string{"events:0"}, `invalid range "events:0": missing ":FROM-UNTIL"`},
		{[]string{"events:x:1-2"}, `invalid range "events:x:1-2": partition "x" is not a number`},
		{[]string{"events:1,1:1-2"}, `invalid range "events:1,1:1-2": partition 1 is listed twice`},
		{[]string{"events:0:100"}, `invalid range "events:0:100": "100" has no "-UNTIL"`},
		{[]string{"events:0:200-100"}, `invalid range "events:0:200-100": FROM 200 is after UNTIL 100`},
		{[]string{"events:0:latest-5"}, `invalid range "events:0:latest-5": FROM cannot be "latest"`},
		{[]string{"events:0:0-earliest"}, `invalid range "events:0:0-earliest": UNTIL cannot be "earliest"`},
		{[]string{"events:0:@yesterday-5"}, `invalid range "events:0:@yesterday-5": FROM time "yesterday"`},
		{[]string{"events:0:@5m-latest"}, `invalid range "events:0:@5m-latest": FROM time "5m" is in the future`},
		{[]string{"events:0:0-@2026-11-29"}, `invalid range "events:0:0-@2026-11-29": UNTIL time "2026-11-29"`},
		{[]string{"ev/ents:0:1-2"}, `invalid range "ev/ents:0:1-2": topic "ev/ents" is not a legal topic name`},
		{[]string{topic + ":0:1-2", "events:0:9-1"}, `invalid range "events:0:9-1"`},
		{[]string{"no-such-topic-kbatch:0:0-1"}, `range "no-such-topic-kbatch:0:0-1": topic "no-such-topic-kbatch" does not exist on this cluster`},
		{[]string{topic + ":5:0-1"}, fmt.Sprintf(`range "%s:5:0-1": topic %q has no partition 5 (it has partitions 0..1)`, topic, topic)},
		{[]string{topic + ":0:5-@2000-01-01T00:00:00Z"}, fmt.Sprintf(`range "%s:0:5-@2000-01-01T00:00:00Z": on %s[0] FROM 5 is offset 5, after UNTIL`, topic, topic)},
		{[]string{topic + ":0:0-1", "--isolation", "dirty"}, `invalid --isolation "dirty": want committed or uncommitted`},
		{[]string{topic + ":0:0-1", "--out", out, "--to-topic", topic}, "--out and --to-topic exclude each other"},
		{[]string{topic + ":0:0-1", "--to-partition", "1"}, "--to-partition needs --to-topic"},
		{[]string{topic + ":0:0-1", "--to-topic", "no-such-topic-kbatch"}, `--to-topic "no-such-topic-kbatch" does not exist on this cluster`},
		{[]string{topic + ":0,1:0-1", "--to-topic", topic, "--to-partition", "9"}, fmt.Sprintf("--to-topic %q has no partition 9", topic)},
		{[]string{topic + ":0:0-1", "--bogus"}, "unknown flag: --bogus"},
	} {
		name := strings.Join(tt.args, " ")
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runReplayCLI(t, tc, tt.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.want)
			}
			if n := strings.Count(stderr, "\n"); n != 1 || !strings.HasPrefix(stderr, "kbatch: ") {
				t.Errorf("stderr is %d lines, want the one error line: %q", n, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("--out file was written")
			}
		})
	}
}

func TestReplayCommandOutputs(t *testing.T) {
	tc, topic := filledTopic(t, "cli-out", 2, 10, 20, 5)
	dir := t.TempDir()
	store := filepath.Join(dir, "offsets.db")

	t.Run("stdout", func(t *testing.T) {
		stdout, stderr, code := runReplayCLI(t, tc, topic+":0:5-15", "--store", store)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got := replayOffsetsOf(t, stdout); fmt.Sprint(got) != fmt.Sprint(replaySeq(5, 15)) {
			t.Errorf("offsets %v", got)
		}
		wantErr := fmt.Sprintf("%s[0] requested 5 → 15: read 5 → 15, 10 records\nreplay: 1 partition, 10 records", topic)
		if !strings.HasPrefix(stderr, wantErr) || strings.Count(stderr, "\n") != 2 {
			t.Errorf("stderr %q, want a summary starting %q", stderr, wantErr)
		}
	})
	t.Run("file", func(t *testing.T) {
		out := filepath.Join(dir, "out.jsonl")
		stdout, stderr, code := runReplayCLI(t, tc, topic+":*:earliest-latest", topic+":0:18-40", "--out", out, "--store", store)
		if code != 4 || stdout != "" { // 18-40 stops at the high watermark 20
			t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
		}
		data := readFile(t, out)
		perPartition := map[string][]int64{}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var r struct {
				Partition int32 `json:"partition"`
				Offset    int64 `json:"offset"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			k := fmt.Sprint(r.Partition)
			perPartition[k] = append(perPartition[k], r.Offset)
		}
		want := map[string][]int64{"0": append(replaySeq(0, 20), 18, 19), "1": replaySeq(0, 5)}
		if fmt.Sprint(perPartition) != fmt.Sprint(want) {
			t.Errorf("offsets per partition %v, want %v", perPartition, want)
		}
		if !strings.Contains(stderr, "capped at the high watermark 20") || !strings.Contains(stderr, "replay: 3 ranges of 2 partitions, 27 records") {
			t.Errorf("stderr %q", stderr)
		}
	})
	t.Run("to-topic", func(t *testing.T) {
		dst := tc.Topic("cli-dst", 1)
		_, stderr, code := runReplayCLI(t, tc, topic+":0,1:3-6", "--to-topic", dst, "--to-partition", "0", "--isolation", "committed", "--store", store)
		if code != 4 { // partition 1 ends at 5, before UNTIL 6
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if end := tc.End(dst, 0); end != 5 {
			t.Errorf("target holds %d records, want 5 (3 of partition 0, 2 of partition 1)", end)
		}
		if !strings.Contains(stderr, "capped at the last stable offset 5") {
			t.Errorf("stderr %q", stderr)
		}
	})
	// Replay never opens the offset store.
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("replay touched the store %s: %v", store, err)
	}
}

func TestReplayCommandPartial(t *testing.T) {
	tc, topic := filledTopic(t, "cli-partial", 1, 10, 30)
	tc.DeleteRecords(topic, 0, 12)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	_, stderr, code := runReplayCLI(t, tc, topic+":0:5-20", "--out", out)
	if code != 3 {
		t.Fatalf("exit %d, want 3: %s", code, stderr)
	}
	data := readFile(t, out)
	if got := replayOffsetsOf(t, string(data)); fmt.Sprint(got) != fmt.Sprint(replaySeq(12, 20)) {
		t.Errorf("file holds offsets %v, want the available part 12..19", got)
	}
	for _, want := range []string{
		fmt.Sprintf("%s[0] requested 5 → 20: read 12 → 20, 8 records; missing 5 → 12 (below the log start)", topic),
		"; 7 offsets missing (below the log start)\n",
		fmt.Sprintf("kbatch: replay incomplete: 7 requested offsets no longer exist (below the log start): %s[0] 5 → 12", topic),
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not contain %q", stderr, want)
		}
	}
}

// TestReplayPlan: replay's decisions from flags and RANGEs alone, and the
// order its usage errors come in.
func TestReplayPlan(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	flags := func(change func(o *replayOptions)) replayOptions {
		o := replayOptions{isolation: "uncommitted", format: "json", toPartition: -1} // the flag defaults
		if change != nil {
			change(&o)
		}
		return o
	}
	ok := []string{"e:0:1-5"}
	for _, tc := range []struct {
		label     string
		o         replayOptions
		ranges    []string
		want      string
		committed bool
	}{
		{label: "defaults", o: flags(nil), ranges: []string{"e:0:1-5", "e:*:earliest-latest"}},
		{label: "committed", o: flags(func(o *replayOptions) { o.isolation = "committed" }), ranges: ok, committed: true},
		{label: "bad isolation", o: flags(func(o *replayOptions) { o.isolation = "read_committed" }), ranges: ok, want: "invalid --isolation"},
		{label: "out and to-topic", o: flags(func(o *replayOptions) { o.out, o.toTopic = "f", "t" }), ranges: ok, want: "exclude each other"},
		{label: "bad format", o: flags(func(o *replayOptions) { o.format = "xml" }), ranges: ok, want: `invalid --format "xml"`},
		{label: "format with to-topic", o: flags(func(o *replayOptions) { o.toTopic, o.format = "t", "kcat" }), ranges: ok, want: "--to-topic produces records"},
		{label: "to-partition alone", o: flags(func(o *replayOptions) { o.toPartition = 2 }), ranges: ok, want: "--to-partition needs --to-topic"},
		{label: "negative to-partition", o: flags(func(o *replayOptions) { o.toTopic, o.toPartition = "t", -3 }), ranges: ok, want: "invalid --to-partition -3"},
		{label: "bad range", o: flags(nil), ranges: []string{"e:0:1-5", "nonsense"}, want: "nonsense"},
		{label: "flags before ranges", o: flags(func(o *replayOptions) { o.isolation = "x" }), ranges: []string{"nonsense"}, want: "invalid --isolation"},
	} {
		t.Run(tc.label, func(t *testing.T) {
			p, err := tc.o.plan(tc.ranges, now)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != exitUsage {
					t.Fatalf("err = %v (exit %d), want a usage error containing %q", err, exitCode(err), tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.committed != tc.committed || p.enc == nil || len(p.specs) != len(tc.ranges) {
				t.Errorf("plan = %+v", p)
			}
		})
	}
}

// TestReplaySaysWhatAKilledReplayLeft: a replay killed with SIGKILL leaves
// its temporary file beside --out (it can be hundreds of MB); the next
// replay to the same file names it, with its size, and keeps it: it may
// belong to a replay that is still running.
func TestReplaySaysWhatAKilledReplayLeft(t *testing.T) {
	tc, topic := filledTopic(t, "cli-leftover", 1, 10, 5)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	left := filepath.Join(dir, ".out.jsonl.507016775.partial")
	if err := os.WriteFile(left, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, ".other.jsonl.1.partial") // another file's: not named
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runReplayCLI(t, tc, topic+":0:earliest-latest", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := fmt.Sprintf("kbatch: warning: %s: a replay to this file that did not finish (killed, or running now) left %s (2.0 KiB)", out, left)
	if !strings.Contains(stderr, want) || strings.Contains(stderr, other) {
		t.Errorf("stderr %q, want it to name %s and not %s", stderr, left, other)
	}
	if _, err := os.Stat(left); err != nil {
		t.Errorf("the leftover is gone: %v", err)
	}
	_, stderr, _ = runReplayCLI(t, tc, topic+":0:earliest-latest", "--out", filepath.Join(dir, "new.jsonl"))
	if strings.Contains(stderr, "warning") {
		t.Errorf("a file without leftovers warned: %s", stderr)
	}
}

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

// replay --emit spark writes both jobs with exactly the resolved ranges,
// and reads no record.
func TestReplayEmitSpark(t *testing.T) {
	isolatedStore(t)
	c, topic := filledTopic(t, "emit", 2, 20, 10, 4)
	dir := filepath.Join(t.TempDir(), "job")
	b := strings.Join(c.Brokers, ",")
	out, errOut, code := runInProcess(t, "", "replay", topic+":0:2-8", topic+":1:earliest-latest", "--emit", "spark",
		"--out", dir, "--spark-output", "/lake/replay", "-b", b)
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "reading 10 offsets of 2 partition ranges") {
		t.Errorf("summary: %s", errOut)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("job folder: %v, %v; want mode 0700 (docs/design.md §2.7)", st.Mode(), err)
	}
	for _, name := range []string{emitPySpark, emitScala} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600 (docs/design.md §2.7)", name, st.Mode(), err)
		}
		b := readFile(t, filepath.Join(dir, name))
		text := string(b)
		for _, want := range []string{
			`"{\"` + topic + `\":[0,1]}"`,
			`"{\"` + topic + `\":{\"0\":2,\"1\":0}}"`,
			`"{\"` + topic + `\":{\"0\":8,\"1\":4}}"`,
			`"/lake/replay"`, `"parquet"`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %s:\n%s", name, want, text)
			}
		}
	}
}

func TestReplayEmitSparkUsage(t *testing.T) {
	isolatedStore(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--emit", "flink", "--out", dir, "--spark-output", "/x"}, "invalid --emit"},
		{[]string{"--emit", "spark", "--out", dir}, "needs --spark-output"},
		{[]string{"--emit", "spark", "--spark-output", "/x"}, "--out DIR"},
		{[]string{"--emit", "spark", "--out", dir, "--spark-output", "/x", "--spark-format", "csv"}, "invalid --spark-format"},
		{[]string{"--emit", "spark", "--out", dir, "--spark-output", "/x", "--to-topic", "t"}, "exclude each other"},
	} {
		_, errOut, code := runInProcess(t, "", append([]string{"replay", "e:0:1-2", "-b", "127.0.0.1:1"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
