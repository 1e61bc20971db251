package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// offsetsClusterStream creates a topic with partitions holding counts records each,
// and a store with stream "s" reading it (no offsets yet).
func offsetsClusterStream(t *testing.T, counts ...int) (kc *testkafka.Cluster, topic, store, brokers string) {
	t.Helper()
	store = isolatedStore(t)
	kc = testkafka.New(t)
	topic = kc.Topic("events", int32(len(counts)))
	for p, n := range counts {
		if n > 0 {
			kc.ProduceN(topic, int32(p), n, 20)
		}
	}
	s := offsetsOpenTestStore(t, store)
	s.stream("s", topic)
	s.close()
	return kc, topic, store, strings.Join(kc.Brokers, ",")
}

func TestOffsetsSetWithCluster(t *testing.T) {
	kc, topic, store, b := offsetsClusterStream(t, 100, 50, 0)
	p := func(n int32) offsets.Partition { return offsetsTP(topic, n) }

	offsetsOK(t)(runInProcess(t, "", "offsets", "set", topic+"=earliest", "-b", b, "--store", store))
	next, evs := offsetsStored(t, store, "s")
	offsetsSameNext(t, "earliest", next, map[offsets.Partition]int64{p(0): 0, p(1): 0, p(2): 0})
	if evs[0].Code != offsets.CodeSet || evs[0].Topic != topic {
		t.Errorf("event %+v", evs[0])
	}

	// A TOPIC:PARTITION spec beats TOPIC=; -N, @TIME (none after 2100: the
	// high watermark; all after 2000: the log start) and latest.
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "set", topic+"=latest", topic+":1=-10",
		topic+":0=@2000-01-01T00:00:00Z", topic+":2=@2100-01-01T00:00:00Z", "-b", b, "--store", store))
	next, _ = offsetsStored(t, store, "s")
	offsetsSameNext(t, "mixed", next, map[offsets.Partition]int64{p(0): 0, p(1): 40, p(2): 0})
	if !strings.Contains(out, "set 3 partitions") {
		t.Errorf("output %s", out)
	}

	// Outside [log start, high watermark]: refused unless --force.
	_, errOut, code := runInProcess(t, "", "offsets", "set", topic+":0=500", "-b", b, "--store", store)
	offsetsWantFail(t, errOut, code, 2, topic+"[0]: offset 500 is above the high watermark 100", "--force")
	offsetsOK(t)(runInProcess(t, "", "offsets", "set", topic+":0=500", "--force", "-b", b, "--store", store))
	next, _ = offsetsStored(t, store, "s")
	if next[p(0)] != 500 {
		t.Errorf("--force: %v", next)
	}
	kc.DeleteRecords(topic, 0, 20)
	_, errOut, code = runInProcess(t, "", "offsets", "set", topic+":0=5", "-b", b, "--store", store)
	offsetsWantFail(t, errOut, code, 2, "offset 5 is below the log start 20")

	// Partitions and topics must exist.
	_, errOut, code = runInProcess(t, "", "offsets", "set", topic+":7=1", "-b", b, "--store", store)
	offsetsWantFail(t, errOut, code, 2, "unknown partition "+topic+":7", "3 partitions")
}

func TestOffsetsExportSparkListsEveryPartition(t *testing.T) {
	_, topic, store, b := offsetsClusterStream(t, 100, 50, 10, 0)
	offsetsOK(t)(runInProcess(t, "", "offsets", "set", topic+":0=80", topic+":1=50", "--store", store))

	out := offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--format", "spark", "-b", b, "--store", store))
	if want := `{"` + topic + `":{"0":80,"1":50,"2":-2,"3":-2}}` + "\n"; out != want {
		t.Errorf("startingOffsets %q, want %q", out, want)
	}
	out = offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--format", "spark", "--ending", "-b", b, "--store", store))
	if want := `{"` + topic + `":{"0":80,"1":50,"2":-1,"3":-1}}` + "\n"; out != want {
		t.Errorf("endingOffsets %q, want %q", out, want)
	}
	out, errOut, code := runInProcess(t, "", "offsets", "export", "--format", "spark", "--store", store)
	offsetsWantOK(t, out, errOut, code)
	if want := `{"` + topic + `":{"0":80,"1":50}}` + "\n"; out != want || !strings.Contains(errOut, "only the 2 stored partitions") {
		t.Errorf("offline: %q %q", out, errOut)
	}
	out = offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--format", "kcat", "-b", b, "--store", store))
	if want := "kcat -C -b " + b + " -t " + topic + " -p 0 -o 80\nkcat -C -b " + b + " -t " + topic + " -p 1 -o 50\n"; out != want {
		t.Errorf("kcat %q, want %q", out, want)
	}
}

// A batch's Spark pair with the cluster: partitions the stream never read
// get an empty range at their high watermark.
func TestOffsetsShowBatchSparkWithCluster(t *testing.T) {
	_, topic, store, b := offsetsClusterStream(t, 100, 50, 10)
	s := offsetsOpenTestStore(t, store)
	s.batch("s", 1, true, offsetsBR(topic, 0, 0, 60, ""))
	s.batch("s", 2, true, offsetsBR(topic, 0, 60, 100, ""), offsetsBR(topic, 1, 0, 50, ""))
	s.close()
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--batch", "1", "--format", "spark", "-b", b, "--store", store))
	want := `startingOffsets={"` + topic + `":{"0":0,"1":0,"2":10}}` + "\n" + `endingOffsets={"` + topic + `":{"0":60,"1":0,"2":10}}` + "\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestOffsetsExportImportRoundTrip(t *testing.T) {
	_, topic, store, b := offsetsClusterStream(t, 100, 50, 10)
	offsetsOK(t)(runInProcess(t, "", "offsets", "set", topic+":0=80", topic+":2=7", "--store", store))
	orig, _ := offsetsStored(t, store, "s")
	dir := t.TempDir()

	// JSON: through a file, into a new stream named by --name.
	doc := offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--name", "s", "--format", "json", "--store", store))
	file := filepath.Join(dir, "s.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "import", "--name", "copy", "--from-json", file, "--store", store))
	if !strings.Contains(out, `stream copy: imported 2 partitions (recorded as a "import" event); created the stream`) {
		t.Errorf("import output %s", out)
	}
	got, evs := offsetsStored(t, store, "copy")
	offsetsSameNext(t, "json round trip", got, orig)
	if len(evs) != 1 || evs[0].Code != offsets.CodeImport || !strings.Contains(evs[0].Message, "imported from "+file) {
		t.Errorf("events %+v", evs)
	}
	again := offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--name", "copy", "--store", store))
	if strings.Replace(again, `"stream":"copy"`, `"stream":"s"`, 1) != doc {
		t.Errorf("re-export %q, want %q", again, doc)
	}

	// JSON on stdin, without --name: the document's stream. Importing the
	// same offsets again changes nothing.
	offsetsOK(t)(runInProcess(t, doc, "offsets", "import", "--from-json", "-", "--store", store))
	got, _ = offsetsStored(t, store, "s")
	offsetsSameNext(t, "stdin", got, orig)

	// Spark: startingOffsets JSON with -2 for the partition without a
	// stored offset; the import leaves that one out.
	sp := offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--name", "s", "--format", "spark", "-b", b, "--store", store))
	if !strings.Contains(sp, `"1":-2`) {
		t.Fatalf("spark export %s", sp)
	}
	out, errOut, code := runInProcess(t, sp, "offsets", "import", "--name", "fromspark", "--from-json", "-", "--store", store)
	offsetsWantOK(t, out, errOut, code)
	got, _ = offsetsStored(t, store, "fromspark")
	offsetsSameNext(t, "spark round trip", got, orig)
	if !strings.Contains(errOut, topic+"[1] are -2 (earliest) or -1 (latest), not positions") {
		t.Errorf("no note about -2: %q", errOut)
	}
}

func TestOffsetsImportFromGroupLeavesGroupAlone(t *testing.T) {
	kc, topic, store, b := offsetsClusterStream(t, 100, 50, 10)
	other := kc.Topic("other", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kc.Admin()
	var commit kadm.Offsets
	commit.AddOffset(topic, 0, 30, -1)
	commit.AddOffset(topic, 1, 20, -1)
	commit.AddOffset(other, 0, 0, -1)
	group := "billing-" + topic // unique on a shared real cluster
	if resp, err := adm.CommitOffsets(ctx, group, commit); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	before, err := adm.FetchOffsets(ctx, group)
	if err != nil || before.Error() != nil {
		t.Fatalf("fetch: %v", err)
	}

	// Into the existing stream: only its topic; "other" is skipped.
	out, errOut, code := runInProcess(t, "", "offsets", "import", "--name", "s", "--from-group", group, "-b", b, "--store", store)
	offsetsWantOK(t, out, errOut, code)
	got, evs := offsetsStored(t, store, "s")
	offsetsSameNext(t, "group", got, map[offsets.Partition]int64{offsetsTP(topic, 0): 30, offsetsTP(topic, 1): 20})
	if !strings.Contains(errOut, "skipped topics "+other) {
		t.Errorf("no note about %s: %q", other, errOut)
	}
	if evs[0].Code != offsets.CodeImport || !strings.Contains(evs[0].Message, "imported from consumer group "+group) {
		t.Errorf("event %+v", evs[0])
	}

	// The group is exactly as before: same offsets, no members.
	after, err := adm.FetchOffsets(ctx, group)
	if err != nil || after.Error() != nil {
		t.Fatalf("fetch after: %v", err)
	}
	if len(after.Offsets()) != len(before.Offsets()) {
		t.Errorf("group offsets changed: %v → %v", before.Offsets(), after.Offsets())
	}
	before.Each(func(o kadm.OffsetResponse) {
		if a, ok := after.Lookup(o.Topic, o.Partition); !ok || a.At != o.At {
			t.Errorf("group offset %s[%d] %d → %v", o.Topic, o.Partition, o.At, a.At)
		}
	})
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if g := described[group]; len(g.Members) != 0 || (g.State != "Empty" && g.State != "") {
		t.Errorf("group after import: state %q, %d members", g.State, len(g.Members))
	}

	// watch then starts from the imported offsets (source "stored").
	watchOut := offsetsWatchStart(t, "watch", "--no-tui", "--batches", "1", "-t", topic, "--name", "s", "-b", b, "--store", store)
	for _, want := range []string{
		`{"topic":"` + topic + `","partition":0,"offset":30,"source":"stored"`,
		`{"topic":"` + topic + `","partition":1,"offset":20,"source":"stored"`,
	} {
		if !strings.Contains(watchOut, want) {
			t.Errorf("watch start line lacks %s:\n%s", want, watchOut)
		}
	}

	// An unknown group has no committed offsets.
	_, errOut, code = runInProcess(t, "", "offsets", "import", "--from-group", "nobody-"+topic, "-b", b, "--store", store)
	offsetsWantFail(t, errOut, code, 2, "consumer group nobody-"+topic+" has no committed offsets")
}

// offsetsWatchStart runs watch in-process and returns its first output line.
func offsetsWatchStart(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := runInProcess(t, "", args...)
	if code != exitOK {
		t.Fatalf("watch: exit %d\n%s", code, stderr)
	}
	line, _, _ := strings.Cut(stdout, "\n")
	var start struct{ Type string }
	if err := json.Unmarshal([]byte(line), &start); err != nil || start.Type != "start" {
		t.Fatalf("first watch line %q: %v", line, err)
	}
	return line
}
