package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

var tp = offsets.Partition{Topic: "t", Partition: 0}

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
