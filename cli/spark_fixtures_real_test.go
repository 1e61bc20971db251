package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestRealSparkFixtures writes the real-Spark fixtures of testdata/spark-real
// that need more than one topic or a topic that changes: three streaming
// queries in one Spark session on the real broker, one reading two topics
// (subscribe "a,b"), one a subscribePattern that matches a topic created
// while it runs, one whose topic grows from 2 to 4 partitions while it runs.
// It runs when KBATCH_TEST_SPARK_FIXTURES names the folder to write them to
// (make spark-fixtures), with the real-Spark suite's environment.
func TestRealSparkFixtures(t *testing.T) {
	py, dest := os.Getenv("KBATCH_TEST_SPARK_PYTHON"), os.Getenv("KBATCH_TEST_SPARK_FIXTURES")
	if py == "" || dest == "" || !testkafka.Real() {
		t.Skip("writes testdata/spark-real: make spark-fixtures (KBATCH_TEST_SPARK_FIXTURES, KBATCH_TEST_SPARK_PYTHON and KBATCH_TEST_BROKERS)")
	}
	start := time.Now()
	isolatedStore(t)
	script, _ := filepath.Abs(filepath.Join("..", "scripts", "spark", "kbatch_spark.py"))
	work := t.TempDir()
	s := &realSpark{t: t, py: py, script: script, work: work,
		env: []string{"KBATCH_SPARK_CACHE=" + os.Getenv("KBATCH_TEST_SPARK_CACHE")}}
	c := testkafka.New(t)
	brokers := strings.Join(c.Brokers, ",")

	var rb [3]byte
	_, _ = rand.Read(rb[:])
	pfx := "sparkpat" + hex.EncodeToString(rb[:])
	orders, payments := c.Topic("orders", 2), c.Topic("payments", 3)
	patA, patB := c.Topic(pfx+"-a", 2), c.Topic(pfx+"-b", 1)
	grows := c.Topic("grows", 2)
	parts := map[string]int32{orders: 2, payments: 3, patA: 2, patB: 1, grows: 2}
	seq := 0
	produce := func(topic string, perPartition int) {
		var recs []*kgo.Record
		for p := range parts[topic] {
			for range perPartition {
				recs = append(recs, sparkTestRecord(topic, p, seq))
				seq++
			}
		}
		c.Produce(recs...)
	}
	for topic := range parts {
		produce(topic, 20)
	}

	type query struct {
		name, dir string
		options   map[string]string
	}
	queries := []query{
		{"spark-4.2.0-two-topics", "", map[string]string{"subscribe": orders + "," + payments}},
		{"spark-4.2.0-subscribe-pattern", "", map[string]string{"subscribePattern": pfx + "-.*"}},
		{"spark-4.2.0-partitions-grew", "", map[string]string{"subscribe": grows}},
	}
	var jobs []map[string]any
	for i := range queries {
		queries[i].dir = filepath.Join(work, queries[i].name)
		jobs = append(jobs, map[string]any{"name": queries[i].name, "options": queries[i].options, "checkpoint": queries[i].dir})
	}
	jb, _ := json.Marshal(jobs)
	jobsFile := filepath.Join(work, "queries.json")
	if err := os.WriteFile(jobsFile, jb, 0o644); err != nil {
		t.Fatal(err)
	}
	stopFile := filepath.Join(work, "stop")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := s.command(ctx, "queries.log", "queries", "--bootstrap", brokers, "--jobs", jobsFile, "--out", filepath.Join(work, "batches"), "--stopfile", stopFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var runErr error
	go func() { runErr = cmd.Wait(); close(done) }()
	defer func() {
		_ = os.WriteFile(stopFile, nil, 0o644)
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
		}
	}()
	logPath := filepath.Join(work, "queries.log")
	// committed waits until the query's last commit covers want.
	committed := func(q query, want map[string]int64) {
		t.Helper()
		waitFor(t, fmt.Sprintf("%s to commit %v (see %s)", q.name, want, logPath), 10*time.Minute, func() bool {
			select {
			case <-done:
				t.Fatalf("the Spark queries ended: %v (see %s)", runErr, logPath)
			default:
			}
			last, ok := lastBatchID(filepath.Join(q.dir, "commits"))
			if !ok {
				return false
			}
			got := ckptOffsets(t, q.dir, last)
			for k, v := range want {
				if got[k] < v {
					return false
				}
			}
			return true
		})
	}
	ends := func(topics ...string) map[string]int64 {
		out := map[string]int64{}
		for _, topic := range topics {
			for p := range parts[topic] {
				out[fmt.Sprintf("%s:%d", topic, p)] = 0
			}
		}
		return out
	}
	add := func(m map[string]int64, topic string, n int64) {
		for p := range parts[topic] {
			m[fmt.Sprintf("%s:%d", topic, p)] += n
		}
	}
	two, pat, grew := ends(orders, payments), ends(patA, patB), ends(grows)
	for _, m := range []map[string]int64{two, pat, grew} {
		for k := range m {
			m[k] = 20
		}
	}
	committed(queries[0], two)
	committed(queries[1], pat)
	committed(queries[2], grew)
	t.Logf("the three queries committed their first records after %s", time.Since(start).Round(time.Second))

	// A second round on the same topics.
	for _, topic := range []string{orders, payments, patA, patB, grows} {
		produce(topic, 10)
	}
	add(two, orders, 10)
	add(two, payments, 10)
	add(pat, patA, 10)
	add(pat, patB, 10)
	add(grew, grows, 10)
	committed(queries[0], two)
	committed(queries[1], pat)
	committed(queries[2], grew)

	// The topic grows to 4 partitions; a topic the pattern matches appears.
	c.AddPartitions(grows, 4)
	parts[grows] = 4
	patC := c.Topic(pfx+"-c", 2)
	parts[patC] = 2
	// The set-up client's metadata still has 2 partitions: a new client for
	// the grown topic.
	pc, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var grown []*kgo.Record
	for p := range int32(4) {
		for range 10 {
			grown = append(grown, sparkTestRecord(grows, p, seq))
			seq++
		}
	}
	pctx, pcancel := context.WithTimeout(context.Background(), time.Minute)
	err = pc.ProduceSync(pctx, grown...).FirstErr()
	pcancel()
	if err != nil {
		t.Fatalf("produce to the grown topic: %v", err)
	}
	produce(patC, 15)
	for p := range int32(4) {
		grew[fmt.Sprintf("%s:%d", grows, p)] += 10
	}
	add(pat, patC, 15)
	committed(queries[2], grew)
	committed(queries[1], pat)
	t.Logf("new partitions and the new topic committed after %s", time.Since(start).Round(time.Second))

	if err := os.WriteFile(stopFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		if runErr != nil {
			t.Fatalf("the Spark queries failed: %v (see %s)", runErr, logPath)
		}
	case <-time.After(6 * time.Minute):
		t.Fatal("the Spark queries did not stop")
	}
	for _, q := range queries {
		to := filepath.Join(dest, q.name)
		if err := os.RemoveAll(to); err != nil {
			t.Fatal(err)
		}
		copyTree(t, q.dir, to)
		t.Logf("%s: %d batches, written to %s", q.name, lastBatchFile(t, filepath.Join(q.dir, "offsets"))+1, to)
	}
	t.Logf("topics: two-topics %s,%s; pattern %s-.* (%s, %s, then %s); grew %s; %s in all", orders, payments, pfx, patA, patB, patC, grows, time.Since(start).Round(time.Second))
}

// copyTree copies the regular files of from into to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lastBatchID is the highest batch file in a log folder, if any (Spark's
// temporary and checksum files are not batches).
func lastBatchID(dir string) (int64, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	last := int64(-1)
	for _, e := range ents {
		if id, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && id > last {
			last = id
		}
	}
	return last, last >= 0
}
