package offsets_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

func TestResolveTargets(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ev := func(p int32) offsets.Partition { return offsets.Partition{Topic: "events", Partition: p} }
	parts := map[offsets.Partition]offsets.Bounds{
		ev(0):                          {LogStart: 0, HighWatermark: 1000},
		ev(1):                          {LogStart: 500, HighWatermark: 1200},
		ev(2):                          {LogStart: 0, HighWatermark: 80},
		{Topic: "other", Partition: 0}: {LogStart: 0, HighWatermark: 5},
	}
	specs := func(ss ...string) []offsets.Spec {
		var out []offsets.Spec
		for _, s := range ss {
			sp, err := offsets.ParseSpec(s, now)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sp)
		}
		return out
	}
	for _, tc := range []struct {
		specs []string
		times map[offsets.Partition]int64
		want  map[offsets.Partition]int64
		err   string
	}{
		{specs: []string{"events=-100", "events:1=80"}, want: map[offsets.Partition]int64{ev(0): 900, ev(1): 80, ev(2): 0}},
		{specs: []string{"events:1=80", "events=latest"}, want: map[offsets.Partition]int64{ev(0): 1000, ev(1): 80, ev(2): 80}},
		{specs: []string{"events:2=earliest", "events:2=7"}, want: map[offsets.Partition]int64{ev(2): 7}},
		{specs: []string{"events:0=@-1h", "events:2=@-1h"}, times: map[offsets.Partition]int64{ev(0): 300, ev(2): -1},
			want: map[offsets.Partition]int64{ev(0): 300, ev(2): 80}},
		{specs: []string{"events:9=1"}, err: "unknown partition events:9"},
		{specs: []string{"nope=1"}, err: `topic "nope"`},
		{specs: []string{"events:0=@-1h"}, err: "no timestamp lookup"},
	} {
		got, err := offsets.ResolveTargets(parts, specs(tc.specs...), tc.times)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.specs, err, tc.err)
		case tc.err == "" && (err != nil || !maps.Equal(got, tc.want)):
			t.Errorf("%v: got %v %v, want %v", tc.specs, got, err, tc.want)
		}
	}
}

func TestCheckTopic(t *testing.T) {
	for name, ok := range map[string]bool{
		"events": true, "a.b_c-1": true, "orders.v2_eu-1": true, "": false, ".": false, "..": false, "bad topic": false, "x\x1b[2J": false,
		"$(rm)": false, "é": false, strings.Repeat("a", 249): true, strings.Repeat("a", 250): false,
	} {
		err := offsets.CheckTopic(name)
		var ue *offsets.UsageError
		if (err == nil) != ok || (err != nil && !errors.As(err, &ue)) {
			t.Errorf("CheckTopic(%q) = %v", name, err)
		}
	}
}
