package cli

import (
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/tui"
)

// The picker's answer becomes the stream's configuration: resume keeps
// the stored positions, earliest/latest on a fresh stream are --reset,
// the rest is TOPIC=ANSWER for every topic, as -o.
func TestApplyStartChoice(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	fresh := func() consumer.Config {
		return consumer.Config{Topics: []string{"events", "orders"}, Reset: offsets.ResetLatest}
	}
	cfg := fresh()
	if kept, err := applyStartChoice(&cfg, tui.ChoiceResume, true, now); err != nil || kept != tui.ChoiceResume || len(cfg.Explicit) != 0 || cfg.Reset != offsets.ResetLatest {
		t.Fatalf("resume: %+v %v", cfg, err)
	}
	// earliest on a fresh stream is where it begins; the next pick
	// resumes (a remembered "latest" would skip the stored positions on
	// the second run).
	cfg = fresh()
	if kept, err := applyStartChoice(&cfg, "earliest", false, now); err != nil || kept != tui.ChoiceResume || len(cfg.Explicit) != 0 || cfg.Reset != offsets.ResetEarliest {
		t.Fatalf("earliest on a fresh stream: %+v %q %v", cfg, kept, err)
	}
	cfg = fresh()
	if kept, err := applyStartChoice(&cfg, "earliest", true, now); err != nil || kept != "earliest" || len(cfg.Explicit) != 2 || cfg.Explicit[0].Kind != offsets.SpecEarliest {
		t.Fatalf("earliest on a stored stream: %+v %v", cfg, err)
	}
	cfg = fresh()
	if kept, err := applyStartChoice(&cfg, "-100", false, now); err != nil || kept != "-100" || len(cfg.Explicit) != 2 ||
		cfg.Explicit[1].Topic != "orders" || !cfg.Explicit[1].AllPartitions || cfg.Explicit[1].Kind != offsets.SpecFromEnd || cfg.Explicit[1].Offset != 100 {
		t.Fatalf("-100: %+v %v", cfg.Explicit, err)
	}
	cfg = fresh()
	if _, err := applyStartChoice(&cfg, "@-1h", false, now); err != nil || !cfg.Explicit[0].Time.Equal(now.Add(-time.Hour)) {
		t.Fatalf("@-1h: %+v %v", cfg.Explicit, err)
	}
}

// The question offers resume for a stored stream, and the answer given
// last time first; it survives a restart of kbatch (the store keeps it).
func TestStartAskerRemembersPerStream(t *testing.T) {
	st, path := newTestStore(t)
	g := &globalOptions{}
	o := &watchOptions{reset: "latest"}
	ask := o.startAsker(g, st, path)
	q := ask([]string{"events"})
	if q.Stream != "events" || q.Stored || q.Default != "latest" || q.Remember != path {
		t.Fatalf("fresh stream: %+v", q)
	}
	if err := st.EnsureStream("events", []string{"b:9092"}, []string{"events"}); err != nil {
		t.Fatal(err)
	}
	p0 := offsets.Partition{Topic: "events", Partition: 0}
	acked := time.Date(2026, 11, 28, 14, 2, 11, 0, time.UTC)
	if err := st.Plan("events", offsets.Batch{ID: 1, Time: acked, State: offsets.StatePlanned,
		Ranges: []offsets.BatchRange{{Range: offsets.Range{Partition: p0, From: 0, Until: 10}, Records: 10}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Ack("events", 1, acked); err != nil {
		t.Fatal(err)
	}
	q = ask([]string{"events"})
	if !q.Stored || q.LastBatch != 1 || !q.AckedAt.Equal(acked) || q.Default != tui.ChoiceResume {
		t.Fatalf("stored stream: %+v", q)
	}
	rememberStartChoice(st, "events", "-100")
	if q = ask([]string{"events"}); q.Default != "-100" {
		t.Fatalf("remembered answer: %+v", q)
	}
	if q = o.startAsker(g, nil, "")([]string{"events"}); q.Remember != "" || q.Stored {
		t.Fatalf("--no-store: %+v", q)
	}
}
