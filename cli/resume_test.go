package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A stored stream is resumed with its last acked batch and the batch log;
// on quit one line per topic names the stored next offsets.
func TestResumeInfoAndStoredLines(t *testing.T) {
	st, path := newTestStore(t)
	cfg := consumer.Config{Name: "events+orders", Topics: []string{"events", "orders"}, Store: st}
	if r := resumeInfo(st, cfg.Name); r != nil {
		t.Fatalf("a stream never stored resumes: %+v", r)
	}
	var out bytes.Buffer
	printStored(&out, cfg, path)
	if got := out.String(); strings.Count(got, "\n") != 2 || !strings.Contains(got, "kbatch: stored events: none yet (no batch acked)") {
		t.Fatalf("lines before any ack:\n%s", got)
	}
	if err := st.EnsureStream(cfg.Name, []string{"127.0.0.1:9092"}, cfg.Topics); err != nil {
		t.Fatal(err)
	}
	acked := time.Date(2026, 11, 28, 14, 2, 11, 0, time.UTC)
	for id := uint64(1); id <= 2; id++ {
		b := offsets.Batch{ID: id, Time: acked, State: offsets.StatePlanned, Ranges: []offsets.BatchRange{
			{Range: offsets.Range{Partition: offsets.Partition{Topic: "events", Partition: 0}, From: int64(id-1) * 10, Until: int64(id) * 10}, Records: 10},
			{Range: offsets.Range{Partition: offsets.Partition{Topic: "events", Partition: 1}, From: int64(id-1) * 5, Until: int64(id) * 5}, Records: 5},
		}}
		if err := st.Plan(cfg.Name, b); err != nil {
			t.Fatal(err)
		}
		if err := st.Ack(cfg.Name, id, acked.Add(time.Duration(id)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	r := resumeInfo(st, cfg.Name)
	if r == nil || r.LastBatch != 2 || !r.AckedAt.Equal(acked.Add(2*time.Second)) || len(r.Batches) != 2 || r.Batches[0].ID != 2 {
		t.Fatalf("resume %+v", r)
	}
	out.Reset()
	printStored(&out, cfg, path)
	want := "kbatch: stored events: 0=20 1=10 (stream events+orders after batch 2 in " + path + ")\n" +
		"kbatch: stored orders: none yet (no batch acked) (stream events+orders after batch 2 in " + path + ")\n"
	if out.String() != want {
		t.Fatalf("lines\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printStored(&out, consumer.Config{Name: "x", Topics: []string{"x"}}, "")
	if out.String() != "kbatch: --no-store: no positions were stored\n" {
		t.Fatalf("--no-store line %q", out.String())
	}
}
