package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/sparkwatch"
	"github.com/kbatch-dev/kbatch/tui"
)

// The real-Spark suite (make test-spark, scripts/spark-test.sh): a PySpark
// Structured Streaming query on the real broker, kbatch beside it. It runs
// when KBATCH_TEST_SPARK_PYTHON names a Python with pyspark and
// KBATCH_TEST_BROKERS a broker; KBATCH_TEST_SPARK_CACHE holds Ivy's cache
// and KBATCH_TEST_SPARK_WORK, if set, keeps the checkpoint and outputs
// (the object-store suite reuses the checkpoint).

// sparkRec is one record as both sides write it for comparison.
type sparkRec struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Key       *string `json:"key_b64"`
	Value     *string `json:"value_b64"`
}

func (r sparkRec) String() string {
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return fmt.Sprintf("%s[%d]@%d key=%s value=%s", r.Topic, r.Partition, r.Offset, s(r.Key), s(r.Value))
}

func readSparkRecs(t *testing.T, path string) []sparkRec {
	t.Helper()
	b := readFile(t, path)
	var out []sparkRec
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r sparkRec
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %q: %v", path, l, err)
		}
		out = append(out, r)
	}
	return out
}

// kbatchRecs turns kbatch's record lines (docs/design.md §4) into sparkRecs.
func kbatchRecs(t *testing.T, out string) []sparkRec {
	t.Helper()
	var recs []sparkRec
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var r recordLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("record line %q: %v", l, err)
		}
		b64 := func(s, raw *string) *string {
			if raw != nil {
				return raw
			}
			if s == nil {
				return nil
			}
			v := base64.StdEncoding.EncodeToString([]byte(*s))
			return &v
		}
		recs = append(recs, sparkRec{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: b64(r.Key, r.KeyB64), Value: b64(r.Value, r.ValueB64)})
	}
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Offset < b.Offset
	})
	return recs
}

// sameRecs compares two record lists record by record.
func sameRecs(t *testing.T, what string, got, want []sparkRec) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: record %d is %s, want %s", what, i, got[i], want[i])
			return
		}
	}
}

// ckptOffsets reads offsets/<id> of a Spark checkpoint on its own (not
// with package offsets/spark): the third line, {"topic":{"p":offset}}.
func ckptOffsets(t *testing.T, ckpt string, id int64) map[string]int64 {
	t.Helper()
	b := readFile(t, filepath.Join(ckpt, "offsets", strconv.FormatInt(id, 10)))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || lines[0] != "v1" {
		t.Fatalf("offsets/%d: want v1 and 3 lines, got %q", id, b)
	}
	var m map[string]map[string]int64
	if err := json.Unmarshal([]byte(lines[2]), &m); err != nil {
		t.Fatalf("offsets/%d line 3: %v", id, err)
	}
	out := map[string]int64{}
	for topic, ps := range m {
		for p, off := range ps {
			out[topic+":"+p] = off
		}
	}
	return out
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// waitFor polls cond every 200ms until it holds or deadline passes.
func waitFor(t *testing.T, what string, deadline time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("waited %s for %s", deadline, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type realSpark struct {
	t      *testing.T
	py     string
	script string
	env    []string
	work   string
}

func (s *realSpark) command(ctx context.Context, log string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.py, append([]string{s.script}, args...)...)
	cmd.Env = append(os.Environ(), s.env...)
	f, err := os.Create(filepath.Join(s.work, log))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { f.Close() })
	cmd.Stdout, cmd.Stderr = f, f
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// producer writes perTick records every 500 ms to every partition of a
// topic until stopped, with keys that are sometimes null and values that
// are sometimes not UTF-8.
type producer struct {
	stop chan struct{}
	done chan error
	n    int
}

func startProducer(cl *kgo.Client, topic string, partitions int32, from, perTick int) *producer {
	p := &producer{stop: make(chan struct{}), done: make(chan error, 1), n: from}
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				p.done <- nil
				return
			case <-tick.C:
			}
			recs := make([]*kgo.Record, 0, perTick)
			for range perTick {
				recs = append(recs, sparkTestRecord(topic, int32(p.n)%partitions, p.n))
				p.n++
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := cl.ProduceSync(ctx, recs...).FirstErr()
			cancel()
			if err != nil {
				p.done <- err
				return
			}
		}
	}()
	return p
}

func (p *producer) halt() error { close(p.stop); return <-p.done }

func sparkTestRecord(topic string, partition int32, i int) *kgo.Record {
	r := &kgo.Record{Topic: topic, Partition: partition, Value: []byte(fmt.Sprintf(`{"seq":%d}`, i))}
	if i%7 != 3 {
		r.Key = []byte(fmt.Sprintf("user-%d", i%11))
	}
	if i%5 == 2 {
		r.Value = []byte{0xff, 0xfe, byte(i), 0x00, 'x'}
	}
	return r
}

// sparkMaxOffsets is the streaming query's maxOffsetsPerTrigger.
const sparkMaxOffsets = 90

func TestRealSpark(t *testing.T) {
	py := os.Getenv("KBATCH_TEST_SPARK_PYTHON")
	if py == "" || !testkafka.Real() {
		t.Skip("the real-Spark suite: make test-spark (KBATCH_TEST_SPARK_PYTHON and KBATCH_TEST_BROKERS)")
	}
	start := time.Now()
	isolatedStore(t)
	script, _ := filepath.Abs(filepath.Join("..", "scripts", "spark", "kbatch_spark.py"))
	work := os.Getenv("KBATCH_TEST_SPARK_WORK")
	if work == "" {
		work = t.TempDir()
	} else {
		_ = os.RemoveAll(work)
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &realSpark{t: t, py: py, script: script, work: work,
		env: []string{"KBATCH_SPARK_CACHE=" + os.Getenv("KBATCH_TEST_SPARK_CACHE")}}
	c := testkafka.New(t)
	brokers := strings.Join(c.Brokers, ",")
	topic := c.Topic("spark", 3)
	ckpt := filepath.Join(work, "checkpoint")
	batches := filepath.Join(work, "spark-batches")
	stopFile := filepath.Join(work, "stop")

	// A backlog of 3 x sparkMaxOffsets records before the query starts: its
	// first batches are cut by maxOffsetsPerTrigger and span every
	// partition. The producer starts once Spark committed batch 0, at 12
	// records a second, well under what the query reads per trigger (90 per
	// 2 s, more when a loaded machine stretches the trigger): a producer
	// faster than the query would leave it an endless backlog to drain at
	// the stop.
	var backlog []*kgo.Record
	for i := range 3 * sparkMaxOffsets {
		backlog = append(backlog, sparkTestRecord(topic, int32(i)%3, i))
	}
	c.Produce(backlog...)
	var prod *producer
	defer func() {
		if prod == nil {
			return
		}
		select {
		case <-prod.stop:
		default:
			_ = prod.halt()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	stream := s.command(ctx, "stream.log", "stream", "--bootstrap", brokers, "--topics", topic,
		"--checkpoint", ckpt, "--out", batches, "--stopfile", stopFile, "--max-offsets", strconv.Itoa(sparkMaxOffsets))
	if err := stream.Start(); err != nil {
		t.Fatal(err)
	}
	streamDone := make(chan struct{}) // closed when the query's process ended, with streamErr
	var streamErr error
	go func() { streamErr = stream.Wait(); close(streamDone) }()
	defer func() {
		_ = os.WriteFile(stopFile, nil, 0o644)
		select {
		case <-streamDone:
		case <-time.After(2 * time.Minute):
			_ = stream.Process.Kill()
		}
	}()
	// A JVM, a Python gateway and the first Kafka metadata round: about
	// 40 s on an idle machine, over 2 minutes under load.
	waitFor(t, "Spark to commit its first batch (see "+filepath.Join(work, "stream.log")+")", 10*time.Minute, func() bool {
		select {
		case <-streamDone:
			t.Fatalf("the Spark query ended before its first batch: %v (see %s)", streamErr, filepath.Join(work, "stream.log"))
		default:
		}
		return exists(filepath.Join(ckpt, "commits", "0"))
	})
	t.Logf("Spark committed batch 0 after %s", time.Since(start).Round(time.Second))
	prod = startProducer(c.Client(), topic, 3, len(backlog), 6)

	// 1. kbatch spark --no-tui, live: three batches committed while it
	// watches, each with exactly the ranges of the offset log.
	out, errOut, code := runInProcess(t, "", "spark", ckpt, "--no-tui", "--interval", "250ms", "--batches", "3", "-b", brokers)
	if code != 0 {
		t.Fatalf("kbatch spark: exit %d: %s", code, errOut)
	}
	select {
	case <-streamDone:
		t.Fatalf("the Spark query ended before kbatch saw three batches committed: %v", streamErr)
	default: // still running: kbatch watched it live
	}
	live := parseSparkLines(t, out)
	checkSparkLines(t, ckpt, live, 3)

	// Stop writing, let the query read everything and stop.
	if err := prod.halt(); err != nil {
		t.Fatal(err)
	}
	produced := prod.n
	if err := os.WriteFile(stopFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-streamDone:
		if streamErr != nil {
			t.Fatalf("the Spark query failed: %v (see %s)", streamErr, filepath.Join(work, "stream.log"))
		}
	case <-time.After(6 * time.Minute):
		t.Fatal("the Spark query did not stop")
	}
	t.Logf("the query read %d records and stopped after %s", produced, time.Since(start).Round(time.Second))

	// The whole checkpoint: every batch, each read exactly what Spark's own
	// foreachBatch got (kbatch replay of the batch's ranges).
	out, errOut, code = runInProcess(t, "", "spark", ckpt, "--no-tui", "--once", "--last", "1000", "-b", brokers)
	if code != 0 {
		t.Fatalf("kbatch spark --once: exit %d: %s", code, errOut)
	}
	all := parseSparkLines(t, out)
	n := checkSparkLines(t, ckpt, all, 1)
	var multi int64 = -1 // a batch that read several partitions
	for _, l := range all {
		if l.Type != "batch" {
			continue
		}
		var specs []string
		for _, r := range l.Ranges {
			specs = append(specs, fmt.Sprintf("%s:%d:%d-%d", r.Topic, r.Partition, r.From, r.Until))
		}
		want := readSparkRecs(t, filepath.Join(batches, fmt.Sprintf("batch-%d.jsonl", l.Batch)))
		if len(specs) == 0 {
			if len(want) != 0 {
				t.Errorf("spark batch %d: kbatch shows no range, Spark read %d records", l.Batch, len(want))
			}
			continue
		}
		if len(specs) > 1 && multi < 0 {
			multi = int64(l.Batch)
		}
		rout, rerr, rcode := runInProcess(t, "", append([]string{"replay", "-b", brokers}, specs...)...)
		if rcode != 0 {
			t.Fatalf("kbatch replay %v: exit %d: %s", specs, rcode, rerr)
		}
		sameRecs(t, fmt.Sprintf("spark batch %d: kbatch replay vs Spark's foreachBatch", l.Batch), kbatchRecs(t, rout), want)
	}
	t.Logf("%d Spark batches, each the same records in kbatch replay and in Spark's foreachBatch", n)
	if multi < 0 {
		t.Fatal("no Spark batch read more than one partition")
	}

	// 2. watch --from-spark continues exactly where the query committed:
	// records produced after the query stopped.
	var after []*kgo.Record
	for i := produced; i < produced+45; i++ {
		after = append(after, sparkTestRecord(topic, int32(i)%3, i))
	}
	c.Produce(after...)
	lastCommit := lastBatchFile(t, filepath.Join(ckpt, "commits"))
	committed := ckptOffsets(t, ckpt, lastCommit)
	store := filepath.Join(work, "offsets.db")
	sink := filepath.Join(work, "from-spark.jsonl")
	out, errOut, code = runInProcess(t, "", "watch", "--from-spark", ckpt, "-t", topic, "--no-tui", "--until-end",
		"--store", store, "--name", "from-spark", "--sink", sink, "--interval", "200ms", "-b", brokers)
	if code != 0 {
		t.Fatalf("kbatch watch --from-spark: exit %d: %s", code, errOut)
	}
	wl := parseLines(t, []byte(out))
	if wl[0].Type != "start" || len(wl[0].Partitions) != 3 {
		t.Fatalf("watch --from-spark start line: %+v", wl[0])
	}
	for _, p := range wl[0].Partitions {
		if want := committed[fmt.Sprintf("%s:%d", p.Topic, p.Partition)]; p.Offset != want || p.Source != "import" {
			t.Errorf("watch --from-spark starts %s[%d] at %d (%s), want %d (offsets/%d, source import)", p.Topic, p.Partition, p.Offset, p.Source, want, lastCommit)
		}
	}
	sinkBytes := readFile(t, sink)
	got := kbatchRecs(t, string(sinkBytes))
	var want []sparkRec
	for _, r := range after {
		want = append(want, sparkRecOf(r))
	}
	sort.Slice(want, func(i, j int) bool {
		if want[i].Partition != want[j].Partition {
			return want[i].Partition < want[j].Partition
		}
		return want[i].Offset < want[j].Offset
	})
	sameRecs(t, "watch --from-spark: the records after the query's last commit", got, want)

	// 3. kbatch batch 1 of that stream: offsets show --format spark in a
	// Spark batch query, against kbatch replay of the batch.
	var first *jsonLine
	for i := range wl {
		if wl[i].Type == "batch" && wl[i].Batch == 1 {
			first = &wl[i]
		}
	}
	if first == nil {
		t.Fatalf("watch --from-spark wrote no batch 1: %s", out)
	}
	showOut, errOut, code := runInProcess(t, "", "offsets", "show", "--store", store, "--name", "from-spark", "--batch", "1", "--format", "spark")
	if code != 0 {
		t.Fatalf("offsets show --format spark: exit %d: %s", code, errOut)
	}
	showOpts := optionPairs(t, showOut)
	var specs []string
	for _, r := range first.Ranges {
		specs = append(specs, fmt.Sprintf("%s:%d:%d-%d", r.Topic, r.Partition, r.From, r.Until))
	}
	rout, rerr, rcode := runInProcess(t, "", append([]string{"replay", "-b", brokers}, specs...)...)
	if rcode != 0 {
		t.Fatalf("kbatch replay %v: %s", specs, rerr)
	}
	batch1 := kbatchRecs(t, rout)

	// 4. The TUI's e export of Spark batch `multi` on kbatch spark's screen.
	w, err := sparkwatch.Start(context.Background(), sparkwatch.Config{Dir: ckpt, Once: true, Last: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var evs []consumer.Event
	for ev := range w.Events() {
		evs = append(evs, ev)
	}
	_ = w.Close()
	text, ok := tui.SparkExportText(evs, uint64(multi))
	if !ok {
		t.Fatalf("the e export has no batch %d", multi)
	}
	eOpts := optionPairs(t, text)

	jobs := []map[string]any{
		{"name": "show", "options": map[string]string{"subscribe": topic, "startingOffsets": showOpts["startingOffsets"], "endingOffsets": showOpts["endingOffsets"]}},
		{"name": "e", "options": map[string]string{"subscribe": topic, "startingOffsets": eOpts["startingOffsets"], "endingOffsets": eOpts["endingOffsets"]}},
	}
	jb, _ := json.Marshal(jobs)
	jobsFile := filepath.Join(work, "jobs.json")
	if err := os.WriteFile(jobsFile, jb, 0o644); err != nil {
		t.Fatal(err)
	}

	// 5. replay --emit spark: the PySpark job, run, against kbatch replay.
	emitDir := filepath.Join(work, "emit")
	emitOut := filepath.Join(work, "emit-output")
	emitRange := fmt.Sprintf("%s:*:earliest-latest", topic)
	_, errOut, code = runInProcess(t, "", "replay", emitRange, "--emit", "spark", "--out", emitDir, "--spark-output", emitOut, "--spark-format", "json", "-b", brokers)
	if code != 0 {
		t.Fatalf("replay --emit spark: exit %d: %s", code, errOut)
	}
	readCmd := s.command(ctx, "read.log", "read", "--bootstrap", brokers, "--jobs", jobsFile, "--out", filepath.Join(work, "read"))
	if err := readCmd.Run(); err != nil {
		t.Fatalf("Spark batch queries: %v (see %s)", err, filepath.Join(work, "read.log"))
	}
	sameRecs(t, "offsets show --batch 1 --format spark in Spark vs kbatch replay of batch 1", readSparkRecs(t, filepath.Join(work, "read", "show.jsonl")), batch1)
	sameRecs(t, fmt.Sprintf("the e export of spark batch %d in Spark vs Spark's foreachBatch", multi),
		readSparkRecs(t, filepath.Join(work, "read", "e.jsonl")), readSparkRecs(t, filepath.Join(batches, fmt.Sprintf("batch-%d.jsonl", multi))))

	job := exec.CommandContext(ctx, py, filepath.Join(emitDir, emitPySpark))
	jars, err := exec.Command(py, script, "submit-args", "--cache", os.Getenv("KBATCH_TEST_SPARK_CACHE")).Output()
	if err != nil {
		t.Fatalf("submit-args: %v", err)
	}
	job.Env = append(os.Environ(), "PYSPARK_SUBMIT_ARGS=--master local[2] --conf spark.ui.enabled=false --conf spark.driver.memory=512m "+
		strings.TrimSpace(string(jars))+" pyspark-shell")
	if jout, err := job.CombinedOutput(); err != nil {
		t.Fatalf("the emitted PySpark job: %v\n%s", err, jout)
	}
	emitted := readSparkJSONDir(t, emitOut)
	rout, rerr, rcode = runInProcess(t, "", "replay", emitRange, "-b", brokers)
	if rcode != 0 {
		t.Fatalf("kbatch replay %s: %s", emitRange, rerr)
	}
	sameRecs(t, "replay --emit spark's PySpark job vs kbatch replay", emitted, kbatchRecs(t, rout))
	t.Logf("emitted job read %d records; the suite took %s", len(emitted), time.Since(start).Round(time.Second))
}

// sparkRecOf is a produced record as a sparkRec.
func sparkRecOf(r *kgo.Record) sparkRec {
	enc := func(b []byte) *string {
		if b == nil {
			return nil
		}
		s := base64.StdEncoding.EncodeToString(b)
		return &s
	}
	return sparkRec{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: enc(r.Key), Value: enc(r.Value)}
}

// readSparkJSONDir reads the part files Spark's JSON writer left in dir
// (binary columns are base64 strings there).
func readSparkJSONDir(t *testing.T, dir string) []sparkRec {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "part-*.json"))
	if err != nil || len(parts) == 0 {
		t.Fatalf("no part files in %s (%v)", dir, err)
	}
	var recs []sparkRec
	for _, p := range parts {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r struct {
				Topic     string  `json:"topic"`
				Partition int32   `json:"partition"`
				Offset    int64   `json:"offset"`
				Key       *string `json:"key"`
				Value     *string `json:"value"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			recs = append(recs, sparkRec{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value})
		}
		f.Close()
	}
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	return recs
}

// optionPairs parses "startingOffsets=...\nendingOffsets=..." lines.
func optionPairs(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if ok && (k == "startingOffsets" || k == "endingOffsets") {
			out[k] = v
		}
	}
	if out["startingOffsets"] == "" || out["endingOffsets"] == "" {
		t.Fatalf("no startingOffsets/endingOffsets in %q", text)
	}
	return out
}

func lastBatchFile(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := int64(-1)
	for _, e := range ents {
		if id, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && id > last {
			last = id
		}
	}
	if last < 0 {
		t.Fatalf("no batch file in %s", dir)
	}
	return last
}

// checkSparkLines checks kbatch spark's batch lines against the
// checkpoint's files: each batch's ranges are [offsets/N-1, offsets/N)
// of every partition that moved, an acked batch has commits/N, and at
// least minAcked batches were acked. It returns how many batches it saw.
func checkSparkLines(t *testing.T, ckpt string, lines []sparkLine, minAcked int) int {
	t.Helper()
	seen, acked := map[uint64]bool{}, 0
	for _, l := range lines {
		if l.Type != "batch" {
			continue
		}
		seen[l.Batch] = true
		id := int64(l.Batch)
		end := ckptOffsets(t, ckpt, id)
		// Batch 0 starts at sources/0/0; its records are checked against
		// Spark's own.
		start := map[string]int64{}
		if id > 0 {
			start = ckptOffsets(t, ckpt, id-1)
		}
		got := map[string][2]int64{}
		for _, r := range l.Ranges {
			got[fmt.Sprintf("%s:%d", r.Topic, r.Partition)] = [2]int64{r.From, r.Until}
		}
		if id > 0 {
			want := map[string][2]int64{}
			for p, u := range end {
				if f := start[p]; u > f {
					want[p] = [2]int64{f, u}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("spark batch %d: kbatch shows ranges %v, the offset log says %v", id, got, want)
			}
		}
		if l.State == "acked" {
			acked++
			if !exists(filepath.Join(ckpt, "commits", strconv.FormatInt(id, 10))) {
				t.Errorf("spark batch %d shown acked without commits/%d", id, id)
			}
		}
	}
	if acked < minAcked {
		t.Fatalf("kbatch spark showed %d batches acked, want at least %d", acked, minAcked)
	}
	return len(seen)
}
