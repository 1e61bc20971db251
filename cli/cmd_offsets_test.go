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

// offsetsWantOK fails the test unless the run exited 0.
func offsetsWantOK(t *testing.T, stdout, stderr string, code int) string {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	return stdout
}

// offsetsWantFail checks the exit code and that stderr ends in exactly one
// "kbatch: ..." line that contains every want.
func offsetsWantFail(t *testing.T, stderr string, code, wantCode int, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("exit %d, want %d; stderr: %s", code, wantCode, stderr)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "kbatch: ") || strings.Count(stderr, "kbatch: ") != 1 {
		t.Fatalf("want one error line, got %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("error %q does not contain %q", last, w)
		}
	}
}

type offsetsTestStore struct {
	t    *testing.T
	path string
	st   *offsets.Store
}

// offsetsOpenTestStore opens (creating) the store at path for the test to fill;
// close it before running a command.
func offsetsOpenTestStore(t *testing.T, path string) *offsetsTestStore {
	t.Helper()
	st, err := offsets.Open(path, offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &offsetsTestStore{t: t, path: path, st: st}
}

func (s *offsetsTestStore) close() {
	s.t.Helper()
	if err := s.st.Close(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *offsetsTestStore) stream(name string, topics ...string) {
	s.t.Helper()
	if err := s.st.EnsureStream(name, []string{"127.0.0.1:9092"}, topics); err != nil {
		s.t.Fatal(err)
	}
}

// batch plans batch id with ranges "topic:p:from-until[:jump]" and acks it
// unless ack is false.
func (s *offsetsTestStore) batch(stream string, id uint64, ack bool, ranges ...offsets.BatchRange) {
	s.t.Helper()
	b := offsets.Batch{ID: id, Time: time.Date(2026, 11, 29, 10, 0, int(id), 0, time.UTC), Ranges: ranges}
	for _, r := range ranges {
		b.Records += r.Records
		b.Bytes += r.Bytes
	}
	if err := s.st.Plan(stream, b); err != nil {
		s.t.Fatal(err)
	}
	if ack {
		if err := s.st.Ack(stream, id, b.Time.Add(time.Millisecond)); err != nil {
			s.t.Fatal(err)
		}
	}
}

func offsetsBR(topic string, p int32, from, until int64, jump string) offsets.BatchRange {
	return offsets.BatchRange{Range: offsets.Range{Partition: offsets.Partition{Topic: topic, Partition: p}, From: from, Until: until},
		Records: until - from, Bytes: 10 * (until - from), Jump: jump}
}

func offsetsTP(topic string, p int32) offsets.Partition {
	return offsets.Partition{Topic: topic, Partition: p}
}

// offsetsStored reads a stream's next offsets and events from the store file.
func offsetsStored(t *testing.T, path, stream string) (map[offsets.Partition]int64, []offsets.Event) {
	t.Helper()
	st, err := offsets.Open(path, offsets.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, ok, err := st.Stream(stream)
	if err != nil || !ok {
		t.Fatalf("stream %q: ok %v err %v", stream, ok, err)
	}
	evs, err := st.Events(stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info.Next, evs
}

func offsetsSameNext(t *testing.T, what string, got, want map[offsets.Partition]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for p, off := range want {
		if got[p] != off {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

// offsetsTwoStreams is an isolated store with offsetsFillEvents's stream
// "events" and an empty stream "other" (topic other); it returns the
// store's path.
func offsetsTwoStreams(t *testing.T) string {
	t.Helper()
	store := isolatedStore(t)
	offsetsFillEvents(t, store)
	s := offsetsOpenTestStore(t, store)
	s.stream("other", "other")
	s.close()
	return store
}

// offsetsFillEvents makes a store with stream "events" (topic events, 3
// partitions): batches 1–3 acked (3 has a seek jump), batch 4 planned.
func offsetsFillEvents(t *testing.T, path string) {
	s := offsetsOpenTestStore(t, path)
	defer s.close()
	s.stream("events", "events")
	s.batch("events", 1, true, offsetsBR("events", 0, 0, 100, ""), offsetsBR("events", 1, 0, 50, ""))
	s.batch("events", 2, true, offsetsBR("events", 0, 100, 150, ""))
	s.batch("events", 3, true, offsetsBR("events", 0, 400, 420, "seek"), offsetsBR("events", 2, 7, 9, ""))
	s.batch("events", 4, false, offsetsBR("events", 1, 50, 60, ""))
	e := offsets.NewEvent(time.Date(2026, 11, 29, 10, 0, 3, 0, time.UTC), offsets.CodeSeek, offsetsTP("events", 0), "events[0]: seek 150 → 400")
	e.From, e.To = 150, 400
	if err := s.st.AddEvent("events", e); err != nil {
		t.Fatal(err)
	}
}

func TestOffsetsBadInputs(t *testing.T) {
	store := offsetsTwoStreams(t)
	badJSON := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badJSON, []byte(`{"events":{"0":"x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"offsets", "set", "events:x=5", "--name", "events"}, []string{`invalid offset spec "events:x=5"`, `partition "x"`}},
		{[]string{"offsets", "set", "events:0", "--name", "events"}, []string{`missing "="`}},
		{[]string{"offsets", "set", "--name", "events"}, []string{"needs at least one SPEC"}},
		{[]string{"offsets", "set", "nope:0=5", "--name", "events"}, []string{"topic nope is not read by stream events"}},
		{[]string{"offsets", "set", "events:0=5", "--name", "ghost"}, []string{`unknown stream ghost`, "events, other"}},
		{[]string{"offsets", "set", "events:0=5"}, []string{"holds 2 streams: pass --name"}},
		{[]string{"offsets", "set", "events:0=earliest", "--name", "events"}, []string{`"events:0=earliest" needs the cluster`}},
		{[]string{"offsets", "set", "events=5", "--name", "events"}, []string{`"events=5" needs the cluster`}},
		{[]string{"offsets", "show", "--name", "ghost"}, []string{"unknown stream ghost"}},
		{[]string{"offsets", "show", "--format", "yaml"}, []string{`invalid --format "yaml"`}},
		{[]string{"offsets", "show", "--bogus"}, []string{"unknown flag: --bogus"}},
		{[]string{"offsets", "frobnicate"}, []string{`unknown command "frobnicate"`}},
		{[]string{"offsets", "export", "--name", "events", "--format", "csv"}, []string{`invalid --format "csv"`}},
		{[]string{"offsets", "export", "--name", "events", "--ending"}, []string{"--ending applies to --format spark"}},
		{[]string{"offsets", "export", "--name", "events", "--format", "spark", "-t", "nope"}, []string{"topic nope is not read by stream events"}},
		{[]string{"offsets", "import", "--name", "events"}, []string{"exactly one of"}},
		{[]string{"offsets", "import", "--from-json", badJSON, "--from-group", "g"}, []string{"exactly one of"}},
		{[]string{"offsets", "import", "--from-json", badJSON, "--source", "1"}, []string{"--source applies to --from-spark"}},
		{[]string{"offsets", "import", "--from-group", "g"}, []string{"--from-group needs the cluster"}},
		{[]string{"offsets", "import", "--from-json", badJSON}, []string{"--from-json " + badJSON, "not a number"}},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			_, errOut, code := runInProcess(t, "", append(tc.args, "--store", store)...)
			offsetsWantFail(t, errOut, code, 2, tc.want...)
		})
	}
}

func TestOffsetsSetOffline(t *testing.T) {
	store := isolatedStore(t)
	offsetsFillEvents(t, store)
	out, errOut, code := runInProcess(t, "", "offsets", "set", "events:2=5", "events:3=70", "--store", store)
	offsetsWantOK(t, out, errOut, code)
	if !strings.Contains(out, "stream events: set 2 partitions") || !strings.Contains(out, "events[2]  9       5") ||
		!strings.Contains(out, "events[3]  -       70") {
		t.Errorf("set output:\n%s", out)
	}
	if !strings.Contains(errOut, "not checked against the cluster") {
		t.Errorf("no note: %q", errOut)
	}
	next, evs := offsetsStored(t, store, "events")
	offsetsSameNext(t, "after set", next, map[offsets.Partition]int64{offsetsTP("events", 0): 420, offsetsTP("events", 1): 50, offsetsTP("events", 2): 5, offsetsTP("events", 3): 70})
	if evs[0].Code != offsets.CodeSet || evs[0].Topic != "events" || evs[0].Partition != -1 ||
		evs[0].Message != "offsets set events:2=5 events:3=70: events[2] 9→5, events[3] -→70" {
		t.Errorf("event %+v", evs[0])
	}

	// One partition: the event names it and the move.
	offsetsOK(t)(runInProcess(t, "", "offsets", "set", "events:2=6", "--store", store))
	_, evs = offsetsStored(t, store, "events")
	if evs[0].Partition != 2 || evs[0].From != 5 || evs[0].To != 6 {
		t.Errorf("event %+v", evs[0])
	}

	// --dry-run writes nothing.
	out = offsetsOK(t)(runInProcess(t, "", "offsets", "set", "events:2=1", "--dry-run", "--store", store))
	if !strings.Contains(out, "would have set 1 partition") {
		t.Errorf("dry run: %s", out)
	}
	next, _ = offsetsStored(t, store, "events")
	if next[offsetsTP("events", 2)] != 6 {
		t.Errorf("dry run wrote: %v", next)
	}
}

// A partition of a planned, unacked batch cannot be set: the next watch
// re-delivers the batch and its ack would move the partition again.
func TestOffsetsSetRefusesPendingPartition(t *testing.T) {
	store := isolatedStore(t)
	offsetsFillEvents(t, store) // batch 4 pending on events[1]
	_, errOut, code := runInProcess(t, "", "offsets", "set", "events:1=10", "--store", store)
	offsetsWantFail(t, errOut, code, 1, "stream events has batch 4 planned but not acked", "on events[1]", "re-delivers it",
		"kbatch watch --name events", "-o SPEC")
	next, _ := offsetsStored(t, store, "events")
	if next[offsetsTP("events", 1)] != 50 {
		t.Errorf("refused set wrote: %v", next)
	}
	// Other partitions are safe to set.
	offsetsOK(t)(runInProcess(t, "", "offsets", "set", "events:0=10", "--store", store))
}

// A dry run reads, and never creates, the store.
func TestOffsetsImportDryRun(t *testing.T) {
	store := isolatedStore(t)
	doc := `{"stream":"events","topics":["events"],"next":{"events":{"0":80,"1":120}}}`
	out := offsetsOK(t)(runInProcess(t, doc, "offsets", "import", "--from-json", "-", "--dry-run", "--store", store))
	if !strings.Contains(out, "stream events: would have imported 2 partitions") || !strings.Contains(out, "events[1]  -       120") {
		t.Errorf("dry run output:\n%s", out)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("dry run created the store: %v", err)
	}
	out = offsetsOK(t)(runInProcess(t, doc, "offsets", "import", "--from-json", "-", "--store", store))
	if !strings.Contains(out, "created the stream") {
		t.Errorf("import output:\n%s", out)
	}
	got, _ := offsetsStored(t, store, "events")
	offsetsSameNext(t, "import", got, map[offsets.Partition]int64{offsetsTP("events", 0): 80, offsetsTP("events", 1): 120})
}

func TestOffsetsShowText(t *testing.T) {
	store := isolatedStore(t)
	offsetsFillEvents(t, store)
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store))
	for _, want := range []string{
		"stream events\n",
		"last acked batch  3",
		"pending           batch 4 is planned, not acked",
		"PARTITION  NEXT",
		"events[0]  420",
		"events[1]  50",
		"events[2]  9",
		"4      2026-11-29T10:00:04.000Z  planned  10       100    events[1] 50→60",
		"3      2026-11-29T10:00:03.000Z  acked    22       220    events[0] 400→420 (jump: seek), events[2] 7→9",
		"seek   events[0]  events[0]: seek 150 → 400",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show output lacks %q:\n%s", want, out)
		}
	}
	// --batches and --events cap the lists.
	out = offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store, "--batches", "1", "--events", "0"))
	if strings.Contains(out, "acked    22") || strings.Contains(out, "EVENT") || !strings.Contains(out, "planned") {
		t.Errorf("--batches 1 --events 0:\n%s", out)
	}
}

// offsetsOK adapts offsetsWantOK to runInProcess's three results.
func offsetsOK(t *testing.T) func(string, string, int) string {
	return func(o, e string, c int) string { t.Helper(); return offsetsWantOK(t, o, e, c) }
}

func TestOffsetsShowJSON(t *testing.T) {
	store := offsetsTwoStreams(t)
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store, "--json"))
	var doc struct {
		Store   string `json:"store"`
		Streams []struct {
			Name    string                      `json:"name"`
			Topics  []string                    `json:"topics"`
			Next    map[string]map[string]int64 `json:"next"`
			Pending *uint64                     `json:"pending"`
			Batches []struct {
				Batch       uint64               `json:"batch"`
				State       string               `json:"state"`
				Redelivered bool                 `json:"redelivered"`
				Ranges      []offsets.BatchRange `json:"ranges"`
			} `json:"batches"`
			Events []map[string]any `json:"events"`
		} `json:"streams"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if doc.Store != store || len(doc.Streams) != 2 || doc.Streams[0].Name != "events" || doc.Streams[1].Name != "other" {
		t.Fatalf("streams: %+v", doc)
	}
	ev := doc.Streams[0]
	if ev.Next["events"]["0"] != 420 || ev.Next["events"]["1"] != 50 || ev.Next["events"]["2"] != 9 {
		t.Errorf("next = %v", ev.Next)
	}
	if ev.Pending == nil || *ev.Pending != 4 || len(ev.Batches) != 4 || ev.Batches[0].State != "planned" || ev.Batches[1].Ranges[0].Jump != "seek" {
		t.Errorf("pending %v batches %+v", ev.Pending, ev.Batches)
	}
	if len(ev.Events) != 1 || ev.Events[0]["code"] != "seek" || ev.Events[0]["from"] != 150.0 || ev.Events[0]["expected"] != nil {
		t.Errorf("events %v", ev.Events)
	}
	if o := doc.Streams[1]; o.Pending != nil || len(o.Batches) != 0 || len(o.Next) != 0 {
		t.Errorf("other stream %+v", o)
	}

	// One stream by --name; one batch as JSON.
	out = offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store, "--name", "other", "--json"))
	if !strings.Contains(out, `"streams":[{"name":"other"`) || strings.Contains(out, `"name":"events"`) {
		t.Errorf("--name other: %s", out)
	}
	out = offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store, "--name", "events", "--batch", "3", "--json"))
	if !strings.HasPrefix(out, `{"stream":"events","batch":3,"time":"2026-11-29T10:00:03.000Z","state":"acked"`) {
		t.Errorf("--batch 3 --json: %s", out)
	}
}

func TestOffsetsShowStoreStates(t *testing.T) {
	store := isolatedStore(t)
	_, errOut, code := runInProcess(t, "", "offsets", "show", "--store", store)
	offsetsWantFail(t, errOut, code, 1, "store "+store+" does not exist")
	_, errOut, code = runInProcess(t, "", "offsets", "set", "events:0=1", "--store", store)
	offsetsWantFail(t, errOut, code, 1, "store "+store+" does not exist")
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("set created the store: %v", err)
	}

	s := offsetsOpenTestStore(t, store)
	s.close()
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store))
	if !strings.Contains(out, "holds no streams yet") {
		t.Errorf("empty store: %q", out)
	}
	out = offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store, "--json"))
	if !strings.Contains(out, `"streams":[]`) {
		t.Errorf("empty store JSON: %q", out)
	}

	// A running watch holds the file exclusively: show reads a copy and
	// says so; set cannot change it.
	held := offsetsOpenTestStore(t, store)
	defer held.close()
	out, errOut, code = runInProcess(t, "", "offsets", "show", "--store", store)
	if code != 0 || !strings.Contains(out, "holds no streams yet") || !strings.Contains(errOut, "note: the store is in use by a running kbatch: this is a copy taken at ") {
		t.Errorf("show of a held store: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, code = runInProcess(t, "", "offsets", "set", "events:0=1", "--store", store)
	offsetsWantFail(t, errOut, code, 1, "is in use by a running kbatch", "a watch holds the file exclusively")
}

func TestOffsetsShowBatchDetail(t *testing.T) {
	store := isolatedStore(t)
	offsetsFillEvents(t, store)
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store, "--batch", "3"))
	for _, want := range []string{
		"stream events batch 3: acked, 2026-11-29T10:00:03.000Z, 22 records, 220 bytes",
		"events[0]  400   420    20    20       200    seek",
		"events[2]  7     9      2     2        20     -",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	_, errOut, code := runInProcess(t, "", "offsets", "show", "--store", store, "--batch", "9")
	offsetsWantFail(t, errOut, code, 2, "stream events has no batch 9", "batches 1–4")
}

// The Spark pair of a batch: its own ranges, and empty ranges at the
// partition's position for the partitions it did not read.
func TestOffsetsShowBatchSparkOffline(t *testing.T) {
	store := isolatedStore(t)
	offsetsFillEvents(t, store)
	out, errOut, code := runInProcess(t, "", "offsets", "show", "--store", store, "--batch", "2", "--format", "spark")
	offsetsWantOK(t, out, errOut, code)
	// Batch 2 read events[0] 100→150; events[1] stood at 50 (batch 1's
	// until), events[2] at 7 (batch 3's from).
	want := "startingOffsets={\"events\":{\"0\":100,\"1\":50,\"2\":7}}\nendingOffsets={\"events\":{\"0\":150,\"1\":50,\"2\":7}}\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if !strings.Contains(errOut, "note: no -b") {
		t.Errorf("no note about missing partitions: %q", errOut)
	}
	_, errOut, code = runInProcess(t, "", "offsets", "show", "--store", store, "--format", "spark")
	offsetsWantFail(t, errOut, code, 2, "--format spark shows one batch")
}

// Names in the store come from users and files: nothing in them reaches the
// terminal raw.
func TestOffsetsShowEscapesNames(t *testing.T) {
	store := isolatedStore(t)
	s := offsetsOpenTestStore(t, store)
	s.stream("evil\x1b[2J\u202e", "events")
	s.close()
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store))
	if strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, `stream "evil\x1b[2J\u202e"`) {
		t.Errorf("show output %q", out)
	}
}

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
