package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // the suite writes fixtures with gocloud.dev's drivers;
	_ "gocloud.dev/blob/gcsblob"   // kbatch reads with objstore's own readers
	_ "gocloud.dev/blob/s3blob"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets/spark/objstore"
)

// The object-store suite (make test-objstore; scripts/objstore-up.sh
// starts moto, fake-gcs-server and Azurite and writes the environment each
// SDK's default chain reads to .cache/objstore/env). It runs when
// KBATCH_TEST_OBJSTORE is set. The checkpoint is KBATCH_TEST_SPARK_CKPT
// (the one make test-spark's query wrote), else the real-Spark fixture in
// testdata. Tests write with gocloud.dev/blob's drivers; kbatch only
// reads, with objstore's own readers (no gocloud.dev in the binary).

// realSparkFixture is a checkpoint written on this project's machine by a
// real Spark 4.2.0 query (testdata/spark-real/SOURCES.md).
const realSparkFixture = "spark-4.2.0-3-partitions"

// objstoreTarget is one object store of the suite: the URL a user would
// give kbatch for the checkpoint at prefix, and how to create its bucket.
type objstoreTarget struct {
	name   string
	url    func(bucket, prefix string) string
	create func(ctx context.Context, b *blob.Bucket, bucket string) error
}

// objstoreBucket is the bucket (container) the suite writes to, each run
// under a prefix of its own.
const objstoreBucket = "kbatch-ckpt"

var objstoreTargets = []objstoreTarget{
	{"s3", func(bucket, prefix string) string { return "s3://" + bucket + "/" + prefix }, createS3},
	{"gcs", func(bucket, prefix string) string { return "gs://" + bucket + "/" + prefix }, createGCS},
	// The Azure URL names the account as Spark's ABFS driver does; the
	// endpoint (Azurite) comes from AZURE_STORAGE_DOMAIN and friends.
	{"azure", func(bucket, prefix string) string {
		return "abfss://" + bucket + "@" + os.Getenv("AZURE_STORAGE_ACCOUNT") + ".dfs.core.windows.net/" + prefix
	}, createAzure},
}

func createS3(ctx context.Context, b *blob.Bucket, bucket string) error {
	var c *s3.Client
	if !b.As(&c) {
		return errors.New("not an S3 bucket")
	}
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	var owned interface{ ErrorCode() string }
	if errors.As(err, &owned) && (owned.ErrorCode() == "BucketAlreadyOwnedByYou" || owned.ErrorCode() == "BucketAlreadyExists") {
		return nil
	}
	return err
}

func createGCS(ctx context.Context, b *blob.Bucket, bucket string) error {
	var c *storage.Client
	if !b.As(&c) {
		return errors.New("not a GCS bucket")
	}
	err := c.Bucket(bucket).Create(ctx, "kbatch-test", nil)
	if err != nil && strings.Contains(err.Error(), "409") {
		return nil
	}
	return err
}

func createAzure(ctx context.Context, b *blob.Bucket, _ string) error {
	var c *container.Client
	if !b.As(&c) {
		return errors.New("not an Azure container")
	}
	_, err := c.Create(ctx, nil)
	if bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return nil
	}
	return err
}

// objstoreCheckpoint is the checkpoint the suite copies into each store.
func objstoreCheckpoint(t *testing.T) string {
	if dir := os.Getenv("KBATCH_TEST_SPARK_CKPT"); dir != "" {
		return dir
	}
	return fixtures.SparkReal(t, realSparkFixture)
}

// ckptFiles lists the checkpoint's regular files (slash paths, sorted).
func ckptFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// upload copies the checkpoint files names from dir to the bucket.
func upload(t *testing.T, b *blob.Bucket, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		data := readFile(t, filepath.Join(dir, filepath.FromSlash(n)))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := b.WriteAll(ctx, n, data, nil)
		cancel()
		if err != nil {
			t.Fatalf("upload %s: %v", n, err)
		}
	}
}

// openTarget opens the bucket of url for writing under its prefix, creating
// the bucket first.
func openTarget(t *testing.T, tg objstoreTarget, bucket, url string) *blob.Bucket {
	t.Helper()
	tr, err := objstore.Translate(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := blob.OpenBucket(ctx, tr.Bucket)
	if err != nil {
		t.Fatalf("%s: %v", tr.Bucket, err)
	}
	if err := tg.create(ctx, b, bucket); err != nil {
		t.Fatalf("creating the bucket of %s: %v", url, err)
	}
	pb := blob.PrefixedBucket(b, tr.Prefix+"/")
	t.Cleanup(func() { _ = pb.Close() })
	return pb
}

// sparkLocationFields are the fields of kbatch spark's lines that name the
// checkpoint's place (the folder or the URL, and the stream name taken
// from its last path element) and the one that comes from the files'
// modification times (duration_ms: from writing offsets/N to writing
// commits/N; an upload has its own times). They are left out when lines
// from a folder and from a bucket are compared.
var sparkLocationFields = []string{"checkpoint", "stream", "duration_ms"}

// sparkComparable parses kbatch spark --no-tui output into generic maps
// without the location fields, and the end line's elapsed time.
func sparkComparable(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		for _, f := range sparkLocationFields {
			delete(m, f)
		}
		if m["type"] == "end" {
			delete(m, "elapsed_ms")
			delete(m, "time")
		}
		lines = append(lines, m)
	}
	return lines
}

func sameSparkOutput(t *testing.T, what string, got, want []map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d lines, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Errorf("%s: line %d is\n%s\nwant (from the folder)\n%s", what, i+1, g, w)
			return
		}
	}
}

func TestRealObjstore(t *testing.T) {
	if os.Getenv("KBATCH_TEST_OBJSTORE") == "" {
		t.Skip("the object-store suite: make test-objstore (KBATCH_TEST_OBJSTORE and the variables of .cache/objstore/env)")
	}
	isolatedStore(t)
	dir := objstoreCheckpoint(t)
	files := ckptFiles(t, dir)
	var batches []int64
	for _, f := range files {
		if id, ok := strings.CutPrefix(f, "offsets/"); ok {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil {
				batches = append(batches, n)
			}
		}
	}
	slices.Sort(batches)
	if len(batches) < 4 {
		t.Fatalf("%s: %d batches; the suite needs at least 4", dir, len(batches))
	}
	t.Logf("checkpoint %s: %d files, batches %d-%d", dir, len(files), batches[0], batches[len(batches)-1])

	// From the folder: the whole checkpoint, and the offsets it imports.
	wantOut, errOut, code := runInProcess(t, "", "spark", dir, "--no-tui", "--once", "--last", "1000")
	if code != 0 {
		t.Fatalf("kbatch spark %s: exit %d: %s", dir, code, errOut)
	}
	want := sparkComparable(t, wantOut)
	store := filepath.Join(t.TempDir(), "offsets.db")
	if _, errOut, code := runInProcess(t, "", "offsets", "import", "--store", store, "--name", "from-folder", "--from-spark", dir); code != 0 {
		t.Fatalf("offsets import --from-spark %s: exit %d: %s", dir, code, errOut)
	}
	wantImport, errOut, code := runInProcess(t, "", "offsets", "export", "--store", store, "--name", "from-folder", "--format", "spark")
	if code != 0 {
		t.Fatalf("offsets export: exit %d: %s", code, errOut)
	}

	// The checkpoint's topics on a cluster (in-process kfake, or the broker
	// of KBATCH_TEST_BROKERS), each partition holding 5 records past where
	// the query committed, for watch --from-spark URL.
	lastCommit := lastBatchFile(t, filepath.Join(dir, "commits"))
	committed := ckptOffsets(t, dir, lastCommit)
	c := testkafka.New(t)
	brokers := strings.Join(c.Brokers, ",")
	topicParts := map[string]int32{}
	for k := range committed {
		topic, p, _ := strings.Cut(k, ":")
		n, _ := strconv.Atoi(p)
		topicParts[topic] = max(topicParts[topic], int32(n)+1)
	}
	var watchTopics []string
	for topic, n := range topicParts {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		resp, err := c.Admin().CreateTopic(ctx, n, 1, nil, topic)
		cancel()
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
		if testkafka.Real() {
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, _ = c.Admin().DeleteTopics(ctx, topic)
			})
		}
		watchTopics = append(watchTopics, "-t", topic)
		var recs []*kgo.Record
		for p := range n {
			for i := range committed[fmt.Sprintf("%s:%d", topic, p)] + 5 {
				recs = append(recs, sparkTestRecord(topic, p, int(i)))
			}
		}
		c.Produce(recs...)
	}

	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, tg := range objstoreTargets {
		t.Run(tg.name, func(t *testing.T) {
			// 1. The whole checkpoint, uploaded: the same lines as from the
			// folder, and --from-spark imports the same offsets.
			url := tg.url(objstoreBucket, "run-"+run+"/whole")
			upload(t, openTarget(t, tg, objstoreBucket, url), dir, files...)
			got, errOut, code := runInProcess(t, "", "spark", url, "--no-tui", "--once", "--last", "1000")
			if code != 0 {
				t.Fatalf("kbatch spark %s: exit %d: %s", url, code, errOut)
			}
			sameSparkOutput(t, "kbatch spark "+url+" --once", sparkComparable(t, got), want)
			var start struct {
				Checkpoint string `json:"checkpoint"`
			}
			_ = json.Unmarshal([]byte(strings.SplitN(got, "\n", 2)[0]), &start)
			if tr, _ := objstore.Translate(url); start.Checkpoint != tr.Location {
				t.Errorf("start line checkpoint %q, want %q", start.Checkpoint, tr.Location)
			}
			if _, errOut, code := runInProcess(t, "", "offsets", "import", "--store", store, "--name", "from-"+tg.name, "--from-spark", url); code != 0 {
				t.Fatalf("offsets import --from-spark %s: exit %d: %s", url, code, errOut)
			}
			gotImport, errOut, code := runInProcess(t, "", "offsets", "export", "--store", store, "--name", "from-"+tg.name, "--format", "spark")
			if code != 0 {
				t.Fatalf("offsets export: exit %d: %s", code, errOut)
			}
			if gotImport != wantImport {
				t.Errorf("offsets import --from-spark %s exported\n%s\nwant (from the folder)\n%s", url, gotImport, wantImport)
			}

			// watch --from-spark URL starts every partition where the query
			// last committed and reads the 5 records after it.
			wout, errOut, code := runInProcess(t, "", append([]string{"watch", "--from-spark", url, "--no-tui", "--until-end",
				"--store", filepath.Join(t.TempDir(), "watch.db"), "--name", "after-spark", "--interval", "200ms", "-b", brokers}, watchTopics...)...)
			if code != 0 {
				t.Fatalf("kbatch watch --from-spark %s: exit %d: %s", url, code, errOut)
			}
			wl := parseLines(t, []byte(wout))
			if wl[0].Type != "start" || len(wl[0].Partitions) != len(committed) {
				t.Fatalf("watch --from-spark start line: %+v, want %d partitions", wl[0], len(committed))
			}
			for _, p := range wl[0].Partitions {
				if want := committed[fmt.Sprintf("%s:%d", p.Topic, p.Partition)]; p.Offset != want || p.Source != "import" {
					t.Errorf("watch --from-spark %s starts %s[%d] at %d (%s), want %d (offsets/%d, import)", url, p.Topic, p.Partition, p.Offset, p.Source, want, lastCommit)
				}
			}
			var read int64
			for _, l := range wl {
				if l.Type == "batch" {
					read += l.Records
				}
			}
			if want := int64(5 * len(committed)); read != want {
				t.Errorf("watch --from-spark %s read %d records, want %d (5 per partition)", url, read, want)
			}

			// 2. A checkpoint that grows while kbatch watches: the query's
			// files up to batch k (offsets/k planned, not committed), then
			// commits/k, offsets/k+1, commits/k+1, ... uploaded in Spark's
			// order while kbatch spark --batches runs.
			growURL := tg.url(objstoreBucket, "run-"+run+"/growing")
			b := openTarget(t, tg, objstoreBucket, growURL)
			k := batches[len(batches)-4]
			var first, later []string
			for _, f := range files {
				log, id, ok := strings.Cut(f, "/")
				n, err := strconv.ParseInt(id, 10, 64)
				switch {
				case !ok || err != nil || (log != "offsets" && log != "commits"):
					first = append(first, f) // metadata, sources/0/0
				case n < k || (n == k && log == "offsets"):
					first = append(first, f)
				default:
					later = append(later, f)
				}
			}
			slices.SortFunc(later, func(a, b string) int { // by batch, offsets before commits
				la, ia, _ := strings.Cut(a, "/")
				lb, ib, _ := strings.Cut(b, "/")
				na, _ := strconv.ParseInt(ia, 10, 64)
				nb, _ := strconv.ParseInt(ib, 10, 64)
				if na != nb {
					return int(na - nb)
				}
				return strings.Compare(lb, la) // "offsets" > "commits": offsets first
			})
			// Spark writes offsets/N+1 only after commits/N; for batch k the
			// commit comes first.
			upload(t, b, dir, first...)
			committedLater := 0
			for _, f := range later {
				if strings.HasPrefix(f, "commits/") {
					committedLater++
				}
			}
			var out testkafka.SyncBuffer
			done := make(chan int, 1)
			go func() {
				root := newRootCommand()
				root.SetOut(&out)
				root.SetErr(&out)
				root.SetArgs([]string{"spark", growURL, "--no-tui", "--interval", "200ms", "--last", "1000", "--batches", strconv.Itoa(committedLater)})
				err := root.Execute()
				if err != nil {
					out.Write([]byte("kbatch: " + oneLine(err) + "\n"))
				}
				done <- exitCode(err)
			}()
			deadline := time.After(2 * time.Minute)
			waitForOutput(t, &out, `"type":"start"`, deadline, done, "start line")
			for _, f := range later {
				upload(t, b, dir, f)
				time.Sleep(300 * time.Millisecond) // the query's pace, not a synchronisation: kbatch may see one or several files per poll
			}
			select {
			case c := <-done:
				if c != 0 {
					t.Fatalf("kbatch spark %s --batches %d: exit %d:\n%s", growURL, committedLater, c, out.String())
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("kbatch spark %s did not see %d batches committed within 2 minutes:\n%s", growURL, committedLater, out.String())
			}
			grown := sparkComparable(t, stdoutLines(out.String()))
			checkGrown(t, grown, want, k)
		})
	}
}

// stdoutLines keeps the JSON lines of a combined stdout and stderr.
func stdoutLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "{") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// checkGrown checks the lines of kbatch spark on the growing checkpoint:
// every batch before k once, acked, as from the folder; batch k first
// planned, then acked; every later batch as from the folder (planned lines
// may or may not come first, by when the polls fell). Each batch's last
// line equals the folder's line for it.
func checkGrown(t *testing.T, got, want []map[string]any, k int64) {
	t.Helper()
	final := map[int64]map[string]any{}
	for _, m := range want {
		if m["type"] == "batch" {
			final[int64(m["batch"].(float64))] = m
		}
	}
	last := map[int64]map[string]any{}
	var order []int64
	planned := map[int64]bool{}
	for _, m := range got {
		if m["type"] != "batch" {
			if m["type"] != "start" && m["type"] != "end" {
				b, _ := json.Marshal(m)
				t.Errorf("unexpected line on a growing checkpoint: %s", b)
			}
			continue
		}
		id := int64(m["batch"].(float64))
		if _, seen := last[id]; !seen {
			order = append(order, id)
		}
		if m["state"] == "planned" {
			planned[id] = true
		}
		last[id] = m
	}
	if !planned[k] {
		t.Errorf("batch %d (planned when kbatch started) was not shown planned first", k)
	}
	if !slices.IsSorted(order) {
		t.Errorf("batches shown in the order %v", order)
	}
	for id, w := range final {
		g, ok := last[id]
		if !ok {
			t.Errorf("batch %d: not shown", id)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("batch %d: last shown as\n%s\nwant (from the folder)\n%s", id, gb, wb)
		}
	}
	if len(last) != len(final) {
		t.Errorf("%d batches shown, the folder has %d", len(last), len(final))
	}
	if t.Failed() {
		return
	}
	t.Logf("growing checkpoint: %d batches, those from %d on committed while kbatch watched, each as from the folder", len(last), k)
}
