package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// TestWatchPlan: the decisions watch makes from its flags alone, before it
// opens anything, and the order its usage errors come in.
func TestWatchPlan(t *testing.T) {
	for _, tc := range []struct {
		label  string
		global []string
		args   []string
		isErr  error  // errors.Is
		want   string // in the error; "" for no error
		pick   bool
		topics []string
	}{
		{label: "no topic, no brokers: ask for brokers first", isErr: errNoBrokers},
		{label: "no topic in the TUI: the picker asks", global: []string{"-b", "h:1"}, pick: true},
		{label: "no topic headless", global: []string{"-b", "h:1"}, args: []string{"--no-tui"}, isErr: errNoTopic},
		{label: "manual ack headless", args: []string{"-t", "e", "--ack", "manual", "--no-tui"}, want: "--ack manual needs the TUI"},
		{label: "stop conditions in the TUI", args: []string{"-t", "e", "--batches", "3"}, want: "headless stop conditions"},
		{label: "until-end in the TUI", args: []string{"-t", "e", "--until-end"}, want: "headless stop conditions"},
		{label: "bad format", args: []string{"-t", "e", "--format", "xml"}, want: `invalid --format "xml"`},
		{label: "sink stdout in the TUI", args: []string{"-t", "e", "--sink", "-"}, want: "--sink - writes records to stdout"},
		{label: "flag errors before combinations", args: []string{"-t", "e", "--interval", "0s", "--ack", "manual", "--no-tui"}, want: "invalid --interval"},
		{label: "ack before format", args: []string{"-t", "e", "--ack", "manual", "--no-tui", "--format", "xml"}, want: "--ack manual"},
		{label: "headless to stdout", args: []string{"-t", "b,a", "-t", "a", "--no-tui", "--sink", "-", "--format", "kcat"}, topics: []string{"b", "a"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			g, _ := testOptions(t, nil, tc.global...)
			p, err := parsedWatchOptions(t, tc.args).plan(g)
			switch {
			case tc.isErr != nil:
				if !errors.Is(err, tc.isErr) {
					t.Fatalf("err = %v, want %v", err, tc.isErr)
				}
				return
			case tc.want != "":
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want)
				}
				if exitCode(err) != exitUsage {
					t.Errorf("exit code %d, want %d", exitCode(err), exitUsage)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if p.pick != tc.pick || p.enc == nil || !slices.Equal(p.cfg.Topics, tc.topics) {
				t.Errorf("plan = pick %v, enc %T, topics %v; want pick %v, topics %v", p.pick, p.enc, p.cfg.Topics, tc.pick, tc.topics)
			}
		})
	}
}

// TestCleanupsDeferredBeforeAdds: `defer done.run()` is written before
// anything is added; the functions added later still run, last first. (A
// value receiver would copy the empty list at the defer and close nothing:
// the store, the sink and the debug log's end line would be lost.)
func TestCleanupsDeferredBeforeAdds(t *testing.T) {
	var order []string
	func() {
		var done cleanups
		defer done.run()
		done.add(func() { order = append(order, "log") })
		done.add(func() { order = append(order, "store") })
		done.add(func() { order = append(order, "client") })
	}()
	if want := []string{"client", "store", "log"}; !slices.Equal(order, want) {
		t.Errorf("ran %v, want %v", order, want)
	}
}

// TestHeadlessKeepsNoSamples: samples are copies for the records pane and
// no JSON line carries them, so a headless watch keeps none whatever
// --samples says (a topic of 1 MiB values copied five per partition per
// batch for nobody); the TUI keeps what --samples asks.
func TestHeadlessKeepsNoSamples(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-t", "e"}, 5},
		{[]string{"-t", "e", "--samples", "7"}, 7},
		{[]string{"-t", "e", "--no-tui"}, 0},
		{[]string{"-t", "e", "--no-tui", "--samples", "7"}, 0},
	} {
		g, _ := testOptions(t, nil)
		cfg, err := parsedWatchOptions(t, tc.args).streamConfig(g)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Samples != tc.want {
			t.Errorf("%v: Samples = %d, want %d", tc.args, cfg.Samples, tc.want)
		}
	}
	// A bad --samples is still refused headless.
	g, _ := testOptions(t, nil)
	if _, err := parsedWatchOptions(t, []string{"-t", "e", "--no-tui", "--samples", "-1"}).streamConfig(g); err == nil || !strings.Contains(err.Error(), "invalid --samples -1") {
		t.Fatalf("err = %v, want invalid --samples", err)
	}
}

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
	return kbatchIn(t, isolatedEnv(t), args...)
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

// watch --isolation: committed (the default) never delivers the records of
// an aborted transaction; uncommitted delivers them with "aborted":true on
// their --sink lines, and a later committed transaction of the same
// producer unmarked.
func TestWatchIsolation(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("isolation", 1)
	kc.ProduceN(topic, 0, 2, 10) // 0, 1
	tp := kc.TxnProducer()
	tp.Produce(false, testkafka.Values(topic, 0, "a0", "a1")...) // 2, 3, abort marker 4
	tp.Produce(true, testkafka.Values(topic, 0, "c0")...)        // 5, commit marker 6
	kc.WaitVisible(topic, 0, 5)
	b := strings.Join(kc.Brokers, ",")
	for _, tc := range []struct {
		flags           []string
		offsets, marked []int64
	}{
		{nil, []int64{0, 1, 5}, nil},
		{[]string{"--isolation", "committed"}, []int64{0, 1, 5}, nil},
		{[]string{"--isolation", "uncommitted"}, []int64{0, 1, 2, 3, 5}, []int64{2, 3}},
	} {
		t.Run(strings.Join(append([]string{"default"}, tc.flags...), " "), func(t *testing.T) {
			sink := filepath.Join(t.TempDir(), "sink.jsonl")
			args := append([]string{"watch", "--no-tui", "-b", b, "-t", topic, "--no-store", "--sink", sink, "--reset", "earliest", "--until-end"}, tc.flags...)
			_, errOut, code := runKbatch(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			data := readFile(t, sink)
			var got, marked []int64
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var r struct {
					Offset  int64 `json:"offset"`
					Aborted bool  `json:"aborted"`
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				got = append(got, r.Offset)
				if r.Aborted {
					marked = append(marked, r.Offset)
				}
			}
			if !reflect.DeepEqual(got, tc.offsets) || !reflect.DeepEqual(marked, tc.marked) {
				t.Fatalf("sink offsets %v, aborted %v; want %v, %v", got, marked, tc.offsets, tc.marked)
			}
		})
	}
}

// TestWatchPlansEveryPartitionWhenOneHoldsAHugeBatch: two partitions on one
// broker, each one lz4 record batches of 200,000 small records (about 50 MB
// decoded, a few KB on the wire). The first answer's decoded batch alone
// holds more than the broker's share of the read-ahead; the other partition
// must still be fetched before it is drained, so batch 1 of
// --max-per-partition 5 holds both partitions. docs/design.md §2.8: every
// batch plans every partition that has records.
func TestWatchPlansEveryPartitionWhenOneHoldsAHugeBatch(t *testing.T) {
	kc := testkafka.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := "huge-batches"
	topicTaking(t, kc, topic, 2, "67108864")
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.ProducerBatchMaxBytes(16<<20), kgo.ProducerLinger(50*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.Lz4Compression()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for p := int32(0); p < 2; p++ {
		rs := make([]*kgo.Record, 200_000)
		for j := range rs {
			rs[j] = &kgo.Record{Topic: topic, Partition: p, Value: []byte(strings.Repeat("z", 80))}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out, e, code := runKbatch(t, "watch", "--no-tui", "--no-store", "-b", strings.Join(kc.Brokers, ","), "-t", topic,
		"--reset", "earliest", "--max-per-partition", "5", "--batches", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	batches := 0
	for _, l := range parseLines(t, []byte(out)) {
		if l.Type != "batch" {
			continue
		}
		batches++
		if len(l.Ranges) != 2 {
			t.Errorf("batch %d has ranges %+v, want both partitions", batches, l.Ranges)
		}
	}
	if batches != 3 {
		t.Errorf("%d batches, want 3", batches)
	}
}

func eventCodes(lines []jsonLine) []string {
	var out []string
	for _, l := range lines {
		if l.Type == "event" {
			out = append(out, l.Code)
		}
	}
	return out
}

// watch --commit-group leaves the group at the store's next offsets; a
// group with a live member is not moved and the stream goes on.
func TestWatchCommitGroup(t *testing.T) {
	kc, topic := filledTopic(t, "events", 2, 50, 500, 300)
	store := filepath.Join(t.TempDir(), "offsets.db")
	b := strings.Join(kc.Brokers, ",")
	group := "follow-" + topic

	out, errOut, code := runKbatch(t, "watch", "--no-tui", "-b", b, "-t", topic, "--store", store,
		"-o", topic+":0=50", "-o", topic+"=earliest", "--until-end", "--max-per-partition", "100", "--commit-group", group)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := parseLines(t, []byte(out))
	if codes := strings.Join(eventCodes(lines), " "); !strings.Contains(codes, offsets.CodeGroupCommit) || strings.Contains(codes, offsets.CodeGroupCommitFailed) {
		t.Errorf("events %s, want one group-commit and no failure", codes)
	}
	want := map[offsets.Partition]int64{offsetsTP(topic, 0): 500, offsetsTP(topic, 1): 300}
	offsetsSameNext(t, "group after watch", kc.GroupOffsets(group), want)
	next, _ := offsetsStored(t, store, topic)
	offsetsSameNext(t, "store after watch", next, want)

	live := "live-" + topic
	commitAt(t, kc, live, map[offsets.Partition]int64{offsetsTP(topic, 0): 3})
	kc.LiveMember(live, topic)
	kc.ProduceN(topic, 0, 10, 50)
	out, errOut, code = runKbatch(t, "watch", "--no-tui", "-b", b, "-t", topic, "--store", store, "--until-end", "--commit-group", live)
	if code != 0 {
		t.Fatalf("exit %d with a live group: %s", code, errOut)
	}
	lines = parseLines(t, []byte(out))
	if codes := strings.Join(eventCodes(lines), " "); !strings.Contains(codes, offsets.CodeGroupCommitStopped) {
		t.Errorf("events %s, want group-stopped", codes)
	}
	if end := lines[len(lines)-1]; end.Records != 10 {
		t.Errorf("the stream read %d records, want 10: a live group must not stop it", end.Records)
	}
	offsetsSameNext(t, "live group", kc.GroupOffsets(live), map[offsets.Partition]int64{offsetsTP(topic, 0): 3})
}

// A blank --commit-group is a usage error, as --to-group "" is: never a
// stream that silently commits to no group, nor one named " ".
func TestWatchCommitGroupBlankName(t *testing.T) {
	for _, name := range []string{"", " ", "\t"} {
		for _, mode := range [][]string{{"--no-tui", "--until-end"}, {}} {
			args := append([]string{"watch", "-b", "127.0.0.1:1", "-t", "events", "--store", t.TempDir() + "/s.db", "--commit-group", name}, mode...)
			_, errOut, code := runKbatch(t, args...)
			offsetsWantFail(t, errOut, code, exitUsage, "--commit-group needs a consumer group name")
		}
	}
}
