package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// toGroupStream makes stream "s" on a 3-partition topic of 100 records
// each, with batches 1 (p0 0–40, p1 0–30) and 2 (p0 40–70) acked: next
// offsets {p0: 70, p1: 30}.
func toGroupStream(t *testing.T) (kc *testkafka.Cluster, topic, store, brokers string) {
	t.Helper()
	kc, topic, store, brokers = offsetsClusterStream(t, 100, 100, 100)
	s := offsetsOpenTestStore(t, store)
	s.batch("s", 1, true, offsetsBR(topic, 0, 0, 40, ""), offsetsBR(topic, 1, 0, 30, ""))
	s.batch("s", 2, true, offsetsBR(topic, 0, 40, 70, ""))
	s.close()
	return kc, topic, store, brokers
}

func commitAt(t *testing.T, kc *testkafka.Cluster, group string, at map[offsets.Partition]int64) {
	t.Helper()
	var o kadm.Offsets
	for p, off := range at {
		o.Add(kadm.Offset{Topic: p.Topic, Partition: p.Partition, At: off})
	}
	if resp, err := kc.Admin().CommitOffsets(context.Background(), group, o); err != nil || resp.Error() != nil {
		t.Fatalf("commit %s: %v %v", group, err, resp.Error())
	}
}

func TestOffsetsExportToGroupPlanThenExecute(t *testing.T) {
	kc, topic, store, b := toGroupStream(t)
	p := func(n int32) offsets.Partition { return offsetsTP(topic, n) }
	group := "billing-" + topic
	commitAt(t, kc, group, map[offsets.Partition]int64{p(0): 90, p(2): 5})

	out := offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--to-group", group, "-b", b, "--store", store))
	for _, w := range []string{
		"consumer group " + group + " (Empty, no members) ← stream s (its next offsets)",
		"PARTITION", "COMMITTED", "NEW", "DIFF",
		topic + "[0]  90         70   -20",
		topic + "[1]  -          30   -",
		"plan only, nothing written: add --execute to write 2 partitions",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("plan does not hold %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, topic+"[2]") {
		t.Errorf("the plan lists partition 2, which the stream has no offset for:\n%s", out)
	}
	want := map[offsets.Partition]int64{p(0): 90, p(2): 5}
	offsetsSameNext(t, "group after the plan", kc.GroupOffsets(group), want)

	out = offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--to-group", group, "--execute", "-b", b, "--store", store))
	if !strings.Contains(out, "wrote 2 partitions to group "+group+" (read back: the same)") {
		t.Errorf("execute says:\n%s", out)
	}
	want = map[offsets.Partition]int64{p(0): 70, p(1): 30, p(2): 5}
	offsetsSameNext(t, "group after --execute", kc.GroupOffsets(group), want)

	out = offsetsOK(t)(runInProcess(t, "", "offsets", "export", "--to-group", group, "--execute", "-b", b, "--store", store))
	if !strings.Contains(out, "is already at these offsets: nothing to write") {
		t.Errorf("a second --execute says:\n%s", out)
	}
}

func TestOffsetsExportToGroupBatchEnds(t *testing.T) {
	kc, topic, store, b := toGroupStream(t)
	p := func(n int32) offsets.Partition { return offsetsTP(topic, n) }
	for _, tc := range []struct {
		at   []string
		want map[offsets.Partition]int64
		says string
	}{
		// Batch 2 read p0 40–70; p1 stood at 30 (batch 1's until).
		{nil, map[offsets.Partition]int64{p(0): 40, p(1): 30}, "batch 2 from (the group reads it again)"},
		{[]string{"--at", "from"}, map[offsets.Partition]int64{p(0): 40, p(1): 30}, "batch 2 from"},
		{[]string{"--at", "until"}, map[offsets.Partition]int64{p(0): 70, p(1): 30}, "batch 2 until (the group goes on after it)"},
	} {
		group := "batch-" + strings.Join(tc.at, "") + "-" + topic
		args := append([]string{"offsets", "export", "--to-group", group, "--batch", "2", "--execute", "-b", b, "--store", store}, tc.at...)
		out := offsetsOK(t)(runInProcess(t, "", args...))
		if !strings.Contains(out, tc.says) {
			t.Errorf("%v: plan does not say %q:\n%s", tc.at, tc.says, out)
		}
		offsetsSameNext(t, strings.Join(tc.at, " "), kc.GroupOffsets(group), tc.want)
	}
	_, stderr, code := runInProcess(t, "", "offsets", "export", "--to-group", "g", "--batch", "9", "-b", b, "--store", store)
	offsetsWantFail(t, stderr, code, exitUsage, "stream s has no batch 9 in its log (it holds batches 1–2)")
}

// A group with a live member is refused, plan or --execute, in one line
// that says how many members there are and where they run; its offsets
// do not move.
func TestOffsetsExportToGroupRefusesALiveGroup(t *testing.T) {
	kc, topic, store, b := toGroupStream(t)
	group := "live-" + topic
	p0 := offsetsTP(topic, 0)
	commitAt(t, kc, group, map[offsets.Partition]int64{p0: 3})
	kc.LiveMember(group, topic)
	for _, extra := range [][]string{nil, {"--execute"}} {
		args := append([]string{"offsets", "export", "--to-group", group, "-b", b, "--store", store}, extra...)
		stdout, stderr, code := runInProcess(t, "", args...)
		offsetsWantFail(t, stderr, code, exitFailure, `consumer group "`+group+`" has 1 live member on `, "(state Stable)", "stop its consumers first")
		if stdout != "" {
			t.Errorf("%v: a refused group still printed a plan:\n%s", extra, stdout)
		}
	}
	if got := kc.GroupOffsets(group)[p0]; got != 3 {
		t.Errorf("the live group moved to %d, want 3", got)
	}
}

func TestOffsetsExportToGroupBadInput(t *testing.T) {
	_, _, store, b := toGroupStream(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--execute"}, exitUsage, "--execute applies to --to-group GROUP"},
		{[]string{"--to-group", " ", "-b", b}, exitUsage, "--to-group needs a consumer group name"},
		{[]string{"--batch", "1"}, exitUsage, "--batch applies to --to-group GROUP"},
		{[]string{"--to-group", "g", "--format", "json", "-b", b}, exitUsage, "--format and --ending print them"},
		{[]string{"--to-group", "g", "--batch", "1", "--at", "end", "-b", b}, exitUsage, `invalid --at "end": want from (the batch's start) or until (its end)`},
		{[]string{"--to-group", "g", "--at", "until", "-b", b}, exitUsage, "--at applies to --batch N"},
		{[]string{"--to-group", "g", "--batch", "0", "-b", b}, exitUsage, "is not a batch number"},
		{[]string{"--to-group", "g"}, exitUsage, "--to-group needs the cluster: pass -b host:port"},
		{[]string{"--to-group", "g", "-t", "nope", "-b", b}, exitUsage, "topic nope is not read by stream s"},
	} {
		args := append([]string{"offsets", "export", "--store", store}, tc.args...)
		_, stderr, code := runInProcess(t, "", args...)
		offsetsWantFail(t, stderr, code, tc.code, tc.want)
	}
}
