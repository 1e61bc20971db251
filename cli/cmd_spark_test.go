package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// sparkTestFixtures is testdata/spark-checkpoint in the repository root.
func sparkTestFixtures(t *testing.T) string { return fixtures.SparkCheckpoint(t) }

// sparkCheckpoint writes checkpoint files exactly as Spark does (FORMAT.md
// §7.1): no final newline, a temporary file renamed into place.
type sparkCheckpoint struct {
	t   *testing.T
	dir string
}

func newSparkCheckpoint(t *testing.T) *sparkCheckpoint {
	c := &sparkCheckpoint{t: t, dir: t.TempDir()}
	c.write("metadata", `{"id":"9d0ef0a4-5c1b-4f7e-8a57-3b1f2c6d7e80"}`)
	return c
}

func (c *sparkCheckpoint) write(rel, content string) {
	c.t.Helper()
	fixtures.WriteLikeSpark(c.t, c.dir, rel, content)
}

// offsets writes offsets/<id> for one topic whose partition p ends at
// offs[p]; partition keys in reverse order, as Spark's hash map may write.
func (c *sparkCheckpoint) offsets(id int, topic string, offs ...int64) {
	parts := make([]string, len(offs))
	for p, o := range offs {
		parts[len(offs)-1-p] = fmt.Sprintf(`"%d":%d`, p, o)
	}
	c.write(fmt.Sprintf("offsets/%d", id), fmt.Sprintf("v1\n"+
		`{"batchWatermarkMs":0,"batchTimestampMs":%d,"conf":{"spark.sql.shuffle.partitions":"200"}}`+"\n"+`{%q:{%s}}`,
		time.Now().UnixMilli(), topic, strings.Join(parts, ",")))
}

func (c *sparkCheckpoint) commit(id int) {
	c.write(fmt.Sprintf("commits/%d", id), "v1\n"+`{"nextBatchWatermarkMs":0}`)
}

// sparkLine is a kbatch spark --no-tui line.
type sparkLine struct {
	jsonLine
	Checkpoint string `json:"checkpoint"`
	SparkBatch *int64 `json:"spark_batch"`
}

func parseSparkLines(t *testing.T, out string) []sparkLine {
	t.Helper()
	var lines []sparkLine
	for _, s := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var l sparkLine
		if err := json.Unmarshal([]byte(s), &l); err != nil || l.Type == "" {
			t.Fatalf("not a JSON line: %q (%v)", s, err)
		}
		lines = append(lines, l)
	}
	return lines
}

// A checkpoint written while kbatch spark --no-tui watches it: each new
// batch shows up, running (planned) and then committed (acked) when
// commits/N appears, with the ranges of the files.
func TestSparkCLIWatchesACheckpoint(t *testing.T) {
	kc, topic := filledTopic(t, "clicks", 2, 20, 40, 10)
	c := newSparkCheckpoint(t)
	c.write("sources/0/0", "\x00v1\n"+fmt.Sprintf(`{%q:{"1":0,"0":0}}`, topic))
	c.offsets(0, topic, 10, 4)
	c.commit(0)

	cmd := exec.Command(kbatchBinary(t), "spark", c.dir, "-b", strings.Join(kc.Brokers, ","), "--no-tui",
		"--interval", "20ms", "--batches", "2")
	cmd.Env = append(os.Environ(), "KBATCH_CONFIG=", "XDG_CONFIG_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan sparkLine)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l sparkLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l.Type = "bad: " + sc.Text()
			}
			lines <- l
		}
	}()
	var seen []sparkLine
	next := func(what string, want func(sparkLine) bool) sparkLine {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before %s; stderr: %s", what, stderr.String())
				}
				seen = append(seen, l)
				if strings.HasPrefix(l.Type, "bad") {
					t.Fatalf("stdout %s", l.Type)
				}
				if want(l) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %s; stderr: %s", what, stderr.String())
			}
		}
	}
	batch := func(id int64, state string) sparkLine {
		t.Helper()
		return next(fmt.Sprintf("batch %d %s", id, state), func(l sparkLine) bool {
			return l.Type == "batch" && l.SparkBatch != nil && *l.SparkBatch == id && l.State == state
		})
	}
	type rng struct {
		p           int32
		from, until int64
	}
	ranges := func(l sparkLine) []rng {
		var out []rng
		for _, r := range l.Ranges {
			if r.Topic != topic {
				t.Errorf("range of topic %q", r.Topic)
			}
			out = append(out, rng{r.Partition, r.From, r.Until})
		}
		return out
	}

	start := next("start", func(l sparkLine) bool { return l.Type == "start" })
	if start.Checkpoint != c.dir || len(start.Partitions) != 2 {
		t.Fatalf("start %+v", start)
	}
	for _, p := range start.Partitions {
		want := map[int32][2]int64{0: {10, 40}, 1: {4, 10}}[p.Partition]
		if p.Offset != want[0] || p.HighWatermark != want[1] || p.Source != "import" {
			t.Errorf("start partition %+v, want offset %d, high watermark %d", p, want[0], want[1])
		}
	}
	if b := batch(0, "acked"); b.Batch != 0 || !reflect.DeepEqual(ranges(b), []rng{{0, 0, 10}, {1, 0, 4}}) || b.Records != 14 {
		t.Fatalf("batch 0 %+v", b)
	}

	c.offsets(1, topic, 25, 4)
	if b := batch(1, "planned"); !reflect.DeepEqual(ranges(b), []rng{{0, 10, 25}}) {
		t.Fatalf("running batch 1 ranges %v", ranges(b))
	}
	c.commit(1)
	if b := batch(1, "acked"); !reflect.DeepEqual(ranges(b), []rng{{0, 10, 25}}) {
		t.Fatalf("committed batch 1 ranges %v", ranges(b))
	}
	c.offsets(2, topic, 40, 10)
	if b := batch(2, "planned"); !reflect.DeepEqual(ranges(b), []rng{{0, 25, 40}, {1, 4, 10}}) {
		t.Fatalf("running batch 2 ranges %v", ranges(b))
	}
	c.commit(2)
	batch(2, "acked")
	end := next("end", func(l sparkLine) bool { return l.Type == "end" })
	if end.Reason != "batches" || end.Batches != 3 || end.Records != 14+15+21 {
		t.Errorf("end %+v", end)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, stderr.String())
	}
	for _, l := range seen {
		if l.Type == "event" {
			t.Errorf("unexpected event %+v", l)
		}
	}
}

func TestSparkCLIFixtures(t *testing.T) {
	isolatedStore(t)
	fx := sparkTestFixtures(t)
	const topic243 = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
	out, errOut, code := runInProcess(t, "", "spark", filepath.Join(fx, "kafka-0-10-sql", "structured-streaming",
		"checkpoint-version-2.4.3-kafka-include-headers-default"), "--no-tui", "--once")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "without lag") {
		t.Errorf("no note about the missing cluster: %q", errOut)
	}
	lines := parseSparkLines(t, out)
	if len(lines) != 3 || lines[0].Type != "start" || lines[1].Type != "batch" || lines[2].Type != "end" || lines[2].Reason != "once" {
		t.Fatalf("lines %+v", lines)
	}
	b := lines[1]
	if b.SparkBatch == nil || *b.SparkBatch != 0 || b.State != "acked" || len(b.Ranges) != 5 || b.Records != 15 {
		t.Fatalf("batch %+v", b)
	}
	for i, r := range b.Ranges {
		if r.Topic != topic243 || r.Partition != int32(i) || r.From != 0 || r.Until != 3 {
			t.Errorf("range %+v", r)
		}
	}
}

func TestSparkCLIErrors(t *testing.T) {
	isolatedStore(t)
	fx := sparkTestFixtures(t)
	futureCommit := func(t *testing.T) string {
		c := newSparkCheckpoint(t)
		c.write("sources/0/0", "\x00v1\n"+`{"e":{"0":0}}`)
		c.offsets(0, "e", 5)
		c.write("commits/0", "v99999\n{}")
		return c.dir
	}
	futureInitial := func(t *testing.T) string {
		dir := t.TempDir()
		b := readFile(t, filepath.Join(fx, "kafka-0-10-sql", "kafka-source-initial-offset-future-version.bin"))
		if err := os.MkdirAll(filepath.Join(dir, "sources", "0"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "offsets"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sources", "0", "0"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	fixture := func(name string) func(*testing.T) string {
		return func(*testing.T) string { return filepath.Join(fx, "sql-core", "structured-streaming", name) }
	}
	cases := []struct {
		name string
		dir  func(*testing.T) string
		args []string
		code int
		want []string
	}{
		{"commit log from a newer Spark", futureCommit, []string{"--no-tui"}, 1, []string{filepath.Join("commits", "0"), "v99999"}},
		{"initial offsets from a newer Spark", futureInitial, []string{"--no-tui", "--source", "0"}, 1, []string{filepath.Join("sources", "0", "0"), "v99999"}},
		{"not a checkpoint", func(t *testing.T) string { return t.TempDir() }, []string{"--no-tui"}, 1, []string{"not a Spark checkpoint"}},
		{"no such folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone") }, []string{"--no-tui"}, 1, []string{"gone"}},
		{"no Kafka source", fixture("checkpoint-version-2.1.0"), []string{"--no-tui"}, 2, []string{"no Kafka source"}},
		{"--once needs --no-tui", fixture("checkpoint-version-2.1.0"), []string{"--once"}, 2, []string{"--no-tui"}},
		{"bad --interval", fixture("checkpoint-version-2.1.0"), []string{"--no-tui", "--interval", "0s"}, 2, []string{"--interval"}},
		{"bad --last", fixture("checkpoint-version-2.1.0"), []string{"--no-tui", "--last", "-1"}, 2, []string{"--last"}},
		{"no folder", nil, []string{"--no-tui"}, 2, []string{"CHECKPOINT_DIR"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"spark"}
			if tc.dir != nil {
				args = append(args, tc.dir(t))
			}
			out, errOut, code := runInProcess(t, "", append(args, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "kbatch: ") || strings.Count(errOut, "kbatch: ") != 1 {
				t.Fatalf("want one error line, got %q", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("error %q does not contain %q", last, w)
				}
			}
		})
	}
}

// TestSparkCheckpointHostileFiles: a checkpoint whose next offset log is a
// symlink to a secret file outside it, or a FIFO, makes `spark --once` and
// `offsets import --from-spark` fail promptly with one line that names the
// file and quotes nothing of what it holds (execKbatch fails the test when
// a run takes two minutes: a FIFO read would block forever).
func TestSparkCheckpointHostileFiles(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "shadow")
	const secret = "root:$6$S3cretSaltHash:19000:0:99999:7:::"
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plants := map[string]func(t *testing.T, path string){
		"symlink out": func(t *testing.T, path string) {
			if err := os.Symlink(secretFile, path); err != nil {
				t.Fatal(err)
			}
		},
		"fifo": func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range plants {
		for _, cmd := range [][]string{
			{"spark", "DIR", "--no-tui", "--once"},
			{"offsets", "import", "--from-spark", "DIR", "--name", "s", "--dry-run"},
		} {
			t.Run(name+" "+cmd[0], func(t *testing.T) {
				c := newSparkCheckpoint(t)
				c.offsets(0, "e", 5)
				c.offsets(1, "e", 9)
				c.commit(0)
				c.commit(1)
				plant(t, filepath.Join(c.dir, "offsets", "2"))
				args := append([]string(nil), cmd...)
				for i := range args {
					if args[i] == "DIR" {
						args[i] = c.dir
					}
				}
				r := execKbatch(t, nil, args...)
				checkOneLine(t, r, exitFailure, []string{filepath.Join("offsets", "2")}, "S3cret", "root:")
				if !strings.Contains(r.stderr, "not a regular file") && !strings.Contains(r.stderr, "outside the checkpoint") {
					t.Errorf("stderr does not say what is wrong with the file: %s", r.stderr)
				}
			})
		}
	}
}

// TestSparkCheckpointImpossibleOffsets: a committed offset of -7 or one
// near int64's maximum is refused with one line naming the partition, not
// shown by --dry-run nor turned into a negative record count by spark.
func TestSparkCheckpointImpossibleOffsets(t *testing.T) {
	for _, off := range []int64{-7, 9223372036854775807} {
		c := newSparkCheckpoint(t)
		c.offsets(0, "events", 5, 5)
		c.offsets(1, "events", 9, off)
		c.commit(0)
		c.commit(1)
		for _, args := range [][]string{
			{"offsets", "import", "--from-spark", c.dir, "--name", "s", "--dry-run"},
			{"spark", c.dir, "--no-tui", "--once"},
		} {
			r := execKbatch(t, nil, args...)
			checkOneLine(t, r, exitFailure, []string{"events[1]", filepath.Join("offsets", "1")})
			if strings.Contains(r.stdout, "-7") || strings.Contains(r.stdout, `"records":-`) {
				t.Errorf("%s: stdout shows the offset: %s", args[0], r.stdout)
			}
		}
	}
}

// TestSparkWatchFIFOAndSIGTERM: the live `spark DIR --no-tui` meets a FIFO
// where the next offset log should be; it reports the file and keeps
// polling, and SIGTERM ends it (a blocking read ignored SIGTERM for 842 s).
// At start the same FIFO is an error (TestSparkCheckpointHostileFiles).
func TestSparkWatchFIFOAndSIGTERM(t *testing.T) {
	c := newSparkCheckpoint(t)
	c.offsets(0, "e", 5)
	c.commit(0)
	home := t.TempDir()
	cmd := exec.Command(kbatchBinary(t), "spark", c.dir, "--no-tui", "--interval", "100ms")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	var out testkafka.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()
	deadline := time.After(time.Minute)
	waitForOutput(t, &out, `"type":"start"`, deadline, done, "start line")
	// The query moves on: its next offset log is a FIFO.
	if err := syscall.Mkfifo(filepath.Join(c.dir, "offsets", "1"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.commit(1)
	waitForOutput(t, &out, filepath.Join("offsets", "1")+": a named pipe (FIFO), not a regular file", deadline, done, "event about the FIFO")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("spark did not end within a minute of SIGTERM:\n%s", out.String())
	}
}
