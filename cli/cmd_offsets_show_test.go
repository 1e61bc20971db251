package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

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
	store := isolatedStore(t)
	offsetsFillEvents(t, store)
	s := offsetsOpenTestStore(t, store)
	s.stream("other", "other")
	s.close()
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
