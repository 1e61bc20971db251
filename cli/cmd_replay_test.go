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
