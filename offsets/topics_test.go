package offsets

import (
	"maps"
	"slices"
	"testing"
	"time"
)

func TestTopicsOf(t *testing.T) {
	next := map[Partition]int64{{"b", 0}: 1, {"a", 2}: 1, {"b", 1}: 1}
	if got := TopicsOf(next); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("TopicsOf = %v, want [a b]", got)
	}
	if got := TopicsOf(map[Partition]int64{}); got != nil {
		t.Errorf("TopicsOf(empty) = %v, want nil", got)
	}
}

func TestFilterTopics(t *testing.T) {
	next := map[Partition]int64{{"a", 0}: 1, {"b", 0}: 2, {"c", 1}: 3, {"c", 0}: 4}
	kept, dropped := FilterTopics(next, []string{"c", "x"})
	if want := (map[Partition]int64{{"c", 1}: 3, {"c", 0}: 4}); !maps.Equal(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if !slices.Equal(dropped, []string{"a", "b"}) {
		t.Errorf("dropped %v, want [a b]", dropped)
	}
	if len(next) != 4 {
		t.Errorf("FilterTopics changed its argument: %v", next)
	}
	if kept, dropped := FilterTopics(next, nil); !maps.Equal(kept, next) || dropped != nil {
		t.Errorf("no filter: kept %v dropped %v, want everything", kept, dropped)
	}
}

func TestStreamInfoAllTopics(t *testing.T) {
	info := StreamInfo{Topics: []string{"z", "a"}, Next: map[Partition]int64{{"m", 0}: 1, {"a", 1}: 2}}
	if got := info.AllTopics(); !slices.Equal(got, []string{"a", "m", "z"}) {
		t.Errorf("AllTopics = %v, want [a m z]", got)
	}
	if info.Topics[0] != "z" {
		t.Errorf("AllTopics sorted the stream's own list: %v", info.Topics)
	}
}

func TestSpecNeedsCluster(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for spec, want := range map[string]bool{
		"events:0=12": false, "events=12": true, "events:0=earliest": true, "events:0=latest": true,
		"events:0=-5": true, "events:0=@2026-11-29T09:00:00Z": true,
	} {
		sp, err := ParseSpec(spec, now)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := sp.NeedsCluster(); got != want {
			t.Errorf("%s: NeedsCluster = %v, want %v", spec, got, want)
		}
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"events":           "events",
		"":                 `""`,
		"ev\x1b[2Jil":      `"ev\x1b[2Jil"`,
		"name with spaces": "name with spaces",
	} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestBoundsJump(t *testing.T) {
	b := Bounds{LogStart: 10, HighWatermark: 20}
	for off, want := range map[int64]string{9: CodeDataLoss, 10: "", 15: "", 20: "", 21: CodeOutOfRange, 0: CodeDataLoss} {
		if got := b.Jump(off); got != want {
			t.Errorf("Jump(%d) = %q, want %q", off, got, want)
		}
	}
	if got := (Bounds{}).Jump(0); got != "" {
		t.Errorf("an empty partition: Jump(0) = %q", got)
	}
}
