package demo

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

var fixedTS = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func TestGeneratorIsReproducible(t *testing.T) {
	a, b, c := newGenerator(42), newGenerator(42), newGenerator(43)
	differs := false
	for i := range 5000 {
		x, y, z := a.next(fixedTS), b.next(fixedTS), c.next(fixedTS)
		if !sameRecord(x, y) {
			t.Fatalf("record %d differs for the same seed:\n%+v\n%+v", i, x, y)
		}
		differs = differs || !sameRecord(x, z)
	}
	if !differs {
		t.Fatal("seeds 42 and 43 gave the same records")
	}
}

func sameRecord(x, y *kgo.Record) bool {
	return x.Topic == y.Topic && x.Partition == y.Partition &&
		bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value) &&
		slices.EqualFunc(x.Headers, y.Headers, func(a, b kgo.RecordHeader) bool {
			return a.Key == b.Key && bytes.Equal(a.Value, b.Value)
		})
}

func TestGeneratorMix(t *testing.T) {
	g := newGenerator(1)
	perTopic := map[string]int{}
	perPartition := map[string]map[int32]int{EventsTopic: {}, SensorTopic: {}}
	for range 20_000 {
		r := g.next(fixedTS)
		perTopic[r.Topic]++
		perPartition[r.Topic][r.Partition]++
		if !r.Timestamp.Equal(fixedTS) {
			t.Fatalf("timestamp %v, want %v", r.Timestamp, fixedTS)
		}
	}
	if share := float64(perTopic[EventsTopic]) / 20_000; share < 0.55 || share > 0.65 {
		t.Errorf("events share = %.2f, want about %.2f", share, eventsShare)
	}
	for topic, n := range map[string]int{EventsTopic: eventsPartitions, SensorTopic: sensorPartitions} {
		for p := range int32(n) {
			if perPartition[topic][p] == 0 {
				t.Errorf("%s partition %d got no records", topic, p)
			}
		}
		if len(perPartition[topic]) != n {
			t.Errorf("%s: records in partitions %v, want 0..%d", topic, perPartition[topic], n-1)
		}
	}
}

func TestActionWeightsSumTo100(t *testing.T) {
	sum := 0
	for _, a := range actions {
		sum += a.weight
	}
	if sum != 100 {
		t.Fatalf("action weights sum to %d, want 100", sum)
	}
}

func TestEventRecord(t *testing.T) {
	g := newGenerator(3)
	for range 1000 {
		checkEvent(t, g.event(fixedTS))
	}
}

// checkEvent fails t unless r is a well-formed "events" record.
func checkEvent(t *testing.T, r *kgo.Record) {
	t.Helper()
	var v struct {
		User   *string  `json:"user"`
		Action *string  `json:"action"`
		Amount *float64 `json:"amount"`
		TS     *string  `json:"ts"`
	}
	if !json.Valid(r.Value) {
		t.Fatalf("offset %d: value is not JSON: %q", r.Offset, r.Value)
	}
	if err := json.Unmarshal(r.Value, &v); err != nil || v.User == nil || v.Action == nil || v.TS == nil {
		t.Fatalf("offset %d: value %s lacks user, action or ts (%v)", r.Offset, r.Value, err)
	}
	if *v.User != string(r.Key) || !strings.HasPrefix(*v.User, "user-") {
		t.Fatalf("offset %d: key %q, user %q", r.Offset, r.Key, *v.User)
	}
	if _, err := time.Parse(time.RFC3339, *v.TS); err != nil {
		t.Fatalf("offset %d: ts %q: %v", r.Offset, *v.TS, err)
	}
	if (v.Amount != nil) != (*v.Action == "checkout" || *v.Action == "add_to_cart") {
		t.Fatalf("offset %d: action %s with amount %v", r.Offset, *v.Action, v.Amount)
	}
	h := headers(r)
	if !slices.Contains([]string{"web", "ios", "android"}, h["source"]) || len(h["trace-id"]) != 32 {
		t.Fatalf("offset %d: headers %q", r.Offset, h)
	}
}

func headers(r *kgo.Record) map[string]string {
	h := map[string]string{}
	for _, x := range r.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}

func TestOddRecords(t *testing.T) {
	g := newGenerator(5)
	if r := g.odd(oddNullKey, fixedTS); r.Key != nil || !json.Valid(r.Value) {
		t.Errorf("null-key record: key %q, value %q", r.Key, r.Value)
	}
	if r := g.odd(oddBinary, fixedTS); r.Key == nil || utf8.Valid(r.Value) {
		t.Errorf("binary record: key %q, value %q is valid UTF-8", r.Key, r.Value)
	}
	r := g.odd(oddHostile, fixedTS)
	for _, seq := range []string{"\x1b[2J", "\x1b]52;", "\u202e", "\u009b"} {
		if !strings.Contains(string(r.Value), seq) {
			t.Errorf("hostile value %q lacks %q", r.Value, seq)
		}
	}
	if !strings.Contains(headers(r)["note"], "\x1b]0;") {
		t.Errorf("hostile record headers %q lack an OSC 0", headers(r))
	}
	for _, r := range []*kgo.Record{g.odd(oddNullKey, fixedTS), g.odd(oddBinary, fixedTS), r} {
		if r.Topic != SensorTopic || r.Partition < 0 || r.Partition >= sensorPartitions {
			t.Errorf("odd record in %s/%d", r.Topic, r.Partition)
		}
	}
}
