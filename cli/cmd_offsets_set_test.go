package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

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
