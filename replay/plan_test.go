package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

var tp = offsets.Partition{Topic: "t", Partition: 0}

// An explicit UNTIL beyond the end is unreachable; latest and @TIME mean
// "up to the end" and never are, even when the task is capped.
func TestPlanTaskUnreachable(t *testing.T) {
	b := offsets.Bounds{LogStart: 120, HighWatermark: 400}
	tests := []struct {
		spec                string
		untilTime           int64
		capped, unreachable bool
	}{
		{"t:0:0-500", -1, true, true},
		{"t:0:380-401", -1, true, true},
		{"t:0:500-600", -1, true, true},
		{"t:0:0-400", -1, false, false},
		{"t:0:0-50", -1, false, false},
		{"t:0:500-latest", -1, true, false},
		{"t:0:0-latest", -1, false, false},
		{"t:0:0-@-1m", -1, false, false},
		{"t:0:0-@-1m", 300, false, false},
	}
	for _, tc := range tests {
		spec, err := ParseRange(tc.spec, testNow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := planTask(spec, tp, b, -1, tc.untilTime)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got.Capped != tc.capped || got.Unreachable != tc.unreachable {
			t.Errorf("%s (until time %d): capped %v unreachable %v, want %v %v", tc.spec, tc.untilTime, got.Capped, got.Unreachable, tc.capped, tc.unreachable)
		}
	}
}

func TestShortError(t *testing.T) {
	p := func(n int32) offsets.Partition { return offsets.Partition{Topic: "t", Partition: n} }
	task := func(n int32, end, until int64, unreachable bool) Task {
		return Task{Requested: offsets.Range{Partition: p(n), From: 0, Until: until}, Read: offsets.Range{Partition: p(n), From: 0, Until: min(end, until)},
			Bounds: offsets.Bounds{HighWatermark: end}, Capped: until > end, Unreachable: unreachable}
	}
	if e := Short([]Task{task(0, 10, 5, false), task(1, 10, 20, false)}, false); e != nil {
		t.Fatalf("Short of reachable tasks: %v", e)
	}
	tasks := []Task{task(0, 10, 5, false), task(1, 10, 20, true), task(2, 3, 4, true), task(3, 1, 2, true), task(4, 1, 2, true), task(5, 1, 2, true)}
	e := Short(tasks, true)
	if e == nil || e.ExitCode() != 4 || len(e.Tasks) != 5 {
		t.Fatalf("Short: %+v", e)
	}
	want := "replay short of UNTIL: t[1] ends at the last stable offset 10, before UNTIL 20, t[2] ends at the last stable offset 3, before UNTIL 4, " +
		"t[3] ends at the last stable offset 1, before UNTIL 2 and 2 more ranges; the end was seen at start: with --isolation committed it is " +
		"the last stable offset, which an open transaction holds back; everything up to the end was written"
	if e.Error() != want {
		t.Errorf("error\n %q\nwant\n %q", e.Error(), want)
	}
	if got := Short(tasks[1:2], false).Error(); !strings.Contains(got, "t[1] ends at the high watermark 10, before UNTIL 20; the end was seen at start: the offsets after it did not exist yet") {
		t.Errorf("error %q", got)
	}
}

func TestPlanTask(t *testing.T) {
	b := offsets.Bounds{LogStart: 120, HighWatermark: 400}
	rng := func(from, until int64) offsets.Range { return offsets.Range{Partition: tp, From: from, Until: until} }
	tests := []struct {
		spec                string
		fromTime, untilTime int64
		requested, read     offsets.Range
		missing             offsets.Range
		capped              bool
	}{
		{"t:0:150-200", -1, -1, rng(150, 200), rng(150, 200), rng(150, 150), false},
		{"t:0:earliest-latest", -1, -1, rng(120, 400), rng(120, 400), rng(120, 120), false},
		{"t:0:0-500", -1, -1, rng(0, 500), rng(120, 400), rng(0, 120), true},
		{"t:0:0-50", -1, -1, rng(0, 50), rng(120, 120), rng(0, 50), false},
		{"t:0:0-120", -1, -1, rng(0, 120), rng(120, 120), rng(0, 120), false},
		{"t:0:380-420", -1, -1, rng(380, 420), rng(380, 400), rng(380, 380), true},
		{"t:0:500-600", -1, -1, rng(500, 600), rng(400, 400), rng(500, 500), true},
		{"t:0:400-latest", -1, -1, rng(400, 400), rng(400, 400), rng(400, 400), false},
		// latest never runs backwards: FROM past the end reads nothing.
		{"t:0:500-latest", -1, -1, rng(500, 500), rng(400, 400), rng(500, 500), true},
		{"t:0:@-5m-@-1m", 200, 300, rng(200, 300), rng(200, 300), rng(200, 200), false},
		// No record at or after the time: the end.
		{"t:0:@-5m-@-1m", -1, -1, rng(400, 400), rng(400, 400), rng(400, 400), false},
		{"t:0:@-5m-latest", 250, -1, rng(250, 400), rng(250, 400), rng(250, 250), false},
		{"t:0:earliest-@-1m", -1, 300, rng(120, 300), rng(120, 300), rng(120, 120), false},
		// An answer below the log start (retention between the calls).
		{"t:0:@-5m-latest", 100, -1, rng(120, 400), rng(120, 400), rng(120, 120), false},
		{"t:0:100-@-1m", -1, -1, rng(100, 400), rng(120, 400), rng(100, 120), false},
	}
	for _, tc := range tests {
		spec, err := ParseRange(tc.spec, testNow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := planTask(spec, tp, b, tc.fromTime, tc.untilTime)
		if err != nil {
			t.Errorf("%s (%d, %d): %v", tc.spec, tc.fromTime, tc.untilTime, err)
			continue
		}
		if got.Requested != tc.requested || got.Read != tc.read || got.Missing() != tc.missing || got.Capped != tc.capped ||
			got.Bounds != b || got.Spec != tc.spec {
			t.Errorf("%s (%d, %d):\n got requested %v read %v missing %v capped %v\nwant requested %v read %v missing %v capped %v",
				tc.spec, tc.fromTime, tc.untilTime, got.Requested, got.Read, got.Missing(), got.Capped,
				tc.requested, tc.read, tc.missing, tc.capped)
		}
	}
}

func TestPlanTaskBackwards(t *testing.T) {
	b := offsets.Bounds{LogStart: 0, HighWatermark: 400}
	for _, tc := range []struct {
		spec                string
		fromTime, untilTime int64
		want                string
	}{
		{"t:0:300-@-1m", -1, 200, "FROM 300 is offset 300, after UNTIL @2026-11-29T11:59:00Z at offset 200"},
		{"t:0:@-1m-100", 200, -1, "after UNTIL 100 at offset 100"},
		{"t:0:@-1m-100", -1, -1, "is offset 400, after UNTIL 100"},
	} {
		spec, err := ParseRange(tc.spec, testNow)
		if err != nil {
			t.Fatal(err)
		}
		_, err = planTask(spec, tp, b, tc.fromTime, tc.untilTime)
		var ue *offsets.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"`+tc.spec+`"`) {
			t.Errorf("%s: error %v, want a usage error naming the range and containing %q", tc.spec, err, tc.want)
		}
	}
}

// FROM's time is at most UNTIL's, so offsets for them that go backwards
// are the broker's answers, not the RANGE: they were a usage error (exit
// 2) saying FROM is after UNTIL. They are a runtime error naming both
// answers.
func TestPlanTaskTimesAnsweredBackwards(t *testing.T) {
	b := offsets.Bounds{LogStart: 0, HighWatermark: 400}
	spec, err := ParseRange("t:0:@-2m-@-1m", testNow)
	if err != nil {
		t.Fatal(err)
	}
	_, err = planTask(spec, tp, b, 300, 200)
	var ue *offsets.UsageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "the broker answered offset 300 for FROM @") ||
		!strings.Contains(err.Error(), "offset 200 for UNTIL @") {
		t.Errorf("error %v, want one that is not a usage error naming the broker's offsets 300 and 200", err)
	}
	if got, err := planTask(spec, tp, b, 200, 300); err != nil || got.Read.From != 200 || got.Read.Until != 300 {
		t.Errorf("offsets 200 and 300: %+v, %v; want [200, 300)", got.Read, err)
	}
}
