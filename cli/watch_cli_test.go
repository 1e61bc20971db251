package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// jsonLine is any docs/design.md §4 headless line.
type jsonLine struct {
	Type       string `json:"type"`
	Stream     string `json:"stream"`
	Partitions []struct {
		Topic         string `json:"topic"`
		Partition     int32  `json:"partition"`
		Offset        int64  `json:"offset"`
		Source        string `json:"source"`
		LogStart      int64  `json:"log_start"`
		HighWatermark int64  `json:"high_watermark"`
	} `json:"partitions"`
	Batch  uint64 `json:"batch"`
	Ranges []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		From      int64  `json:"from"`
		Until     int64  `json:"until"`
		Records   int64  `json:"records"`
	} `json:"ranges"`
	Records     int64  `json:"records"`
	State       string `json:"state"`
	Redelivered bool   `json:"redelivered"`
	Code        string `json:"code"`
	Reason      string `json:"reason"`
	Batches     int    `json:"batches"`
}

func parseLines(t *testing.T, out []byte) []jsonLine {
	t.Helper()
	var lines []jsonLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l jsonLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", sc.Text(), err)
		}
		if l.Type == "" {
			t.Fatalf("line without type: %s", sc.Text())
		}
		lines = append(lines, l)
	}
	return lines
}

func runKbatch(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(kbatchBinary(t), args...)
	cmd.Env = isolatedEnv(t)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestWatchHeadlessJSONAndStoredResume(t *testing.T) {
	kc, topic := filledTopic(t, "events", 2, 50, 1000, 1000)
	dir := t.TempDir()
	store, sink := filepath.Join(dir, "offsets.db"), filepath.Join(dir, "sink.jsonl")
	b := strings.Join(kc.Brokers, ",")

	out, errOut, code := runKbatch(t, "watch", "--no-tui", "-b", b, "-t", topic, "--store", store, "--sink", sink,
		"-o", topic+":0=50", "-o", topic+":1=120", "--until-end", "--interval", "100ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := parseLines(t, []byte(out))
	if lines[0].Type != "start" || lines[len(lines)-1].Type != "end" || lines[len(lines)-1].Reason != "until-end" {
		t.Fatalf("first/last lines %+v / %+v", lines[0], lines[len(lines)-1])
	}
	want := map[int32][2]int64{0: {50, 1000}, 1: {120, 1000}}
	for _, p := range lines[0].Partitions {
		if p.Source != "explicit" || p.Offset != want[p.Partition][0] || p.HighWatermark != 1000 {
			t.Errorf("start partition %+v", p)
		}
	}
	got := map[int32][2]int64{0: {-1, -1}, 1: {-1, -1}}
	for _, l := range lines {
		if l.Type != "batch" {
			continue
		}
		if l.State != "acked" {
			t.Errorf("batch %d state %q", l.Batch, l.State)
		}
		for _, r := range l.Ranges {
			g := got[r.Partition]
			if g[0] < 0 {
				g[0] = r.From
			} else if r.From != g[1] {
				t.Errorf("p%d: batch %d from %d, previous until %d", r.Partition, l.Batch, r.From, g[1])
			}
			g[1] = r.Until
			got[r.Partition] = g
		}
	}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ranges covered %v, want %v", got, want)
	}
	if n := countLines(t, sink); n != 950+880 {
		t.Fatalf("sink has %d records, want %d", n, 950+880)
	}

	// Second run: resumes from the store, so with no new records it reads nothing.
	kc.ProduceN(topic, 1, 7, 50)
	out, errOut, code = runKbatch(t, "watch", "--no-tui", "-b", b, "-t", topic, "--store", store, "--sink", sink, "--until-end")
	if code != 0 {
		t.Fatalf("second run exit %d: %s", code, errOut)
	}
	lines = parseLines(t, []byte(out))
	for _, p := range lines[0].Partitions {
		if p.Source != "stored" || p.Offset != 1000 {
			t.Errorf("second run start %+v, want 1000 stored", p)
		}
	}
	if end := lines[len(lines)-1]; end.Records != 7 {
		t.Errorf("second run read %d records, want 7", end.Records)
	}
	if n := countLines(t, sink); n != 950+880+7 {
		t.Fatalf("sink has %d records after two runs, want %d", n, 950+880+7)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b := readFile(t, path)
	return bytes.Count(b, []byte("\n"))
}

func TestWatchUsageErrors(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("events", 2)
	b := strings.Join(kc.Brokers, ",")
	store := filepath.Join(t.TempDir(), "o.db")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-t", topic, "-o", topic + ":x=1"}, 2, `"` + topic + `:x=1"`},
		{[]string{"-t", topic, "-o", topic + ":7=1"}, 2, "7"},
		{[]string{"-t", "no-such-topic-kbatch"}, 2, "no-such-topic-kbatch"},
		{[]string{"-t", topic, "--interval", "0s"}, 2, "--interval"},
		{[]string{"-t", topic, "--reset", "middle"}, 2, "--reset"},
		{[]string{"-t", topic, "--isolation", "read_committed"}, 2, "--isolation"},
		{[]string{"-t", topic, "--strict-offsets", "-o", topic + ":0=0"}, 2, topic},
		{[]string{}, 2, "-t"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"watch", "--no-tui", "-b", b, "--store", store, "--until-end"}, c.args...)
			_, errOut, code := runKbatch(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, c.want) {
				t.Fatalf("stderr %q: want one line naming %q", errOut, c.want)
			}
		})
	}
}

// isolatedEnv is the test process's environment without the developer's
// kbatch settings: no KBATCH_* variables but the test ones, and an empty
// config folder, so a real config.toml cannot change what a test sees.
func isolatedEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "KBATCH_") && !strings.HasPrefix(kv, "KBATCH_TEST_") {
			continue
		}
		if strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	dir := t.TempDir()
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
}
