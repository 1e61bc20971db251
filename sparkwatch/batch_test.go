package sparkwatch

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

func sparkTP(topic string, p int32) offsets.Partition {
	return offsets.Partition{Topic: topic, Partition: p}
}

func TestSparkBatch(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	rng := func(p offsets.Partition, from, until int64, jump string) offsets.BatchRange {
		return offsets.BatchRange{Range: offsets.Range{Partition: p, From: from, Until: until}, Records: until - from, Jump: jump}
	}
	cases := []struct {
		name    string
		br      spark.BatchRanges
		bounds  map[offsets.Partition]offsets.Bounds
		state   offsets.BatchState
		ranges  []offsets.BatchRange
		records int64
		codes   []string
	}{
		{name: "the doc's worked example",
			br: spark.BatchRanges{ID: 7, Committed: true,
				Start: spark.Offsets{sparkTP("e", 0): 5, sparkTP("e", 1): 3},
				End:   spark.Offsets{sparkTP("e", 0): 12, sparkTP("e", 1): 3, sparkTP("e", 2): 4}},
			bounds: map[offsets.Partition]offsets.Bounds{sparkTP("e", 2): {LogStart: 2, HighWatermark: 9}},
			state:  offsets.StateAcked,
			ranges: []offsets.BatchRange{rng(sparkTP("e", 0), 5, 12, ""), rng(sparkTP("e", 2), 2, 4, offsets.CodeNewPartition)}, records: 9,
			codes: []string{offsets.CodeNewPartition}},
		{name: "running, ranges sorted by topic and partition",
			br: spark.BatchRanges{ID: 0,
				Start: spark.Offsets{sparkTP("b", 1): 0, sparkTP("a", 0): 10},
				End:   spark.Offsets{sparkTP("b", 1): 4, sparkTP("a", 0): 11}},
			state:  offsets.StatePlanned,
			ranges: []offsets.BatchRange{rng(sparkTP("a", 0), 10, 11, ""), rng(sparkTP("b", 1), 0, 4, "")}, records: 5},
		{name: "new partition without bounds starts at 0",
			br:     spark.BatchRanges{ID: 3, Start: spark.Offsets{}, End: spark.Offsets{sparkTP("e", 0): 6}},
			state:  offsets.StatePlanned,
			ranges: []offsets.BatchRange{rng(sparkTP("e", 0), 0, 6, offsets.CodeNewPartition)}, records: 6,
			codes: []string{offsets.CodeNewPartition}},
		{name: "an end before the start is no range but a notice",
			br:    spark.BatchRanges{ID: 4, Committed: true, Start: spark.Offsets{sparkTP("e", 0): 50}, End: spark.Offsets{sparkTP("e", 0): 10}},
			state: offsets.StateAcked, codes: []string{offsets.CodeOutOfRange}},
		{name: "no partition moved: an empty batch",
			br:    spark.BatchRanges{ID: 5, Committed: true, Start: spark.Offsets{sparkTP("e", 0): 50}, End: spark.Offsets{sparkTP("e", 0): 50}},
			state: offsets.StateAcked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, notices := sparkBatch(tc.br, at, tc.bounds)
			if b.ID != uint64(tc.br.ID) || b.State != tc.state || !b.Time.Equal(at) || b.Records != tc.records || b.Bytes != 0 {
				t.Errorf("batch %+v", b.Batch)
			}
			if !reflect.DeepEqual(b.Ranges, tc.ranges) {
				t.Errorf("ranges\n got %+v\nwant %+v", b.Ranges, tc.ranges)
			}
			var codes []string
			for _, n := range notices {
				codes = append(codes, n.Code)
				if !strings.Contains(n.Message, "spark batch") {
					t.Errorf("notice %q does not name the Spark batch", n.Message)
				}
			}
			if !reflect.DeepEqual(codes, tc.codes) {
				t.Errorf("notices %v, want %v", codes, tc.codes)
			}
		})
	}
}

func TestSparkStatuses(t *testing.T) {
	parts := []offsets.Partition{sparkTP("e", 0), sparkTP("e", 1), sparkTP("e", 2)}
	next := map[offsets.Partition]int64{sparkTP("e", 0): 120, sparkTP("e", 1): 40, sparkTP("e", 2): 9}
	stored := map[offsets.Partition]int64{sparkTP("e", 0): 100, sparkTP("e", 1): 40}
	bounds := map[offsets.Partition]offsets.Bounds{sparkTP("e", 0): {LogStart: 0, HighWatermark: 150}, sparkTP("e", 1): {LogStart: 0, HighWatermark: 30}}
	got := sparkStatuses(parts, next, stored, bounds, map[offsets.Partition]float64{sparkTP("e", 0): 2.5})
	want := []consumer.PartitionStatus{
		{Partition: sparkTP("e", 0), Source: offsets.SourceImport, NextOffset: 120, Stored: 100, Bounds: offsets.Bounds{LogStart: 0, HighWatermark: 150}, Lag: 30, Rate: 2.5},
		// A stale high watermark below the next offset is no negative lag.
		{Partition: sparkTP("e", 1), Source: offsets.SourceImport, NextOffset: 40, Stored: 40, Bounds: offsets.Bounds{LogStart: 0, HighWatermark: 30}},
		// No bounds (no cluster): unknown, no lag; nothing committed: -1.
		{Partition: sparkTP("e", 2), Source: offsets.SourceImport, NextOffset: 9, Stored: -1, Bounds: offsets.Bounds{LogStart: -1, HighWatermark: -1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("statuses\n got %+v\nwant %+v", got, want)
	}
}

func TestSparkRates(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	r := sparkRates{window: time.Minute}
	batch := func(ago time.Duration, span int64) *consumer.Batch {
		return &consumer.Batch{Batch: offsets.Batch{Time: now.Add(-ago), Ranges: []offsets.BatchRange{{Range: offsets.Range{Partition: sparkTP("e", 0), From: 0, Until: span}}}}}
	}
	r.add(batch(10*time.Second, 1200), now)
	r.add(batch(50*time.Second, 600), now)
	r.add(batch(2*time.Minute, 9999), now) // too old to count
	per, total := r.rates(now)
	if per[sparkTP("e", 0)] != 30 || total != 30 {
		t.Fatalf("rates %v total %v, want 30 (the doc's worked example)", per, total)
	}
	// Twenty seconds on, the older batch left the window.
	per, total = r.rates(now.Add(20 * time.Second))
	if math.Abs(per[sparkTP("e", 0)]-20) > 1e-9 || len(r.batches) != 1 || total != per[sparkTP("e", 0)] {
		t.Fatalf("rates later %v total %v, kept %d", per, total, len(r.batches))
	}
}

func TestSparkJSONLines(t *testing.T) {
	w := &Watch{cfg: Config{Dir: "/data/cp/./q1"}, queryID: "fc415a71", source: 1}
	b := &consumer.Batch{Batch: offsets.Batch{ID: 7, State: offsets.StatePlanned,
		Ranges: []offsets.BatchRange{{Range: offsets.Range{Partition: sparkTP("e", 0), From: 5, Until: 12}, Records: 7}}, Records: 7}}
	cases := []struct {
		ev   consumer.Event
		want map[string]any
	}{
		{&consumer.Started{Stream: "spark:q1", Brokers: []string{}, Topics: []string{"e"}},
			map[string]any{"type": "start", "stream": "spark:q1", "checkpoint": "/data/cp/q1", "query_id": "fc415a71", "source": 1.0}},
		{&consumer.BatchEvent{Batch: b}, map[string]any{"type": "batch", "batch": 7.0, "spark_batch": 7.0, "state": "planned", "records": 7.0}},
		{&consumer.Ended{Reason: "once", Batches: 1}, map[string]any{"type": "end", "reason": "once"}},
	}
	for _, tc := range cases {
		buf, err := w.AppendEventJSON([]byte("previous line\n"), tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		line, ok := strings.CutPrefix(string(buf), "previous line\n")
		if !ok || strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "}\n") {
			t.Fatalf("not one appended line: %q", buf)
		}
		// A Spark line is a watch line with more fields.
		plain, _ := consumer.AppendEventJSON(nil, tc.ev)
		if !strings.HasPrefix(line, strings.TrimSuffix(string(plain), "}\n")) {
			t.Errorf("line %q does not extend the watch line %q", line, plain)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		for k, v := range tc.want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s: %s = %v, want %v", line, k, got[k], v)
			}
		}
	}
	if buf, _ := w.AppendEventJSON(nil, &consumer.Progress{}); len(buf) != 0 {
		t.Errorf("progress wrote %q", buf)
	}
}

// TestCheckSparkTopics: a checkpoint's topic names pass only when Kafka
// could have them (offsets.CheckTopic), and the error wraps
// spark.ErrMalformed and quotes the name.
func TestCheckSparkTopics(t *testing.T) {
	for topic, ok := range map[string]bool{
		"events": true, "a.b_c-1": true, strings.Repeat("a", 249): true,
		"": false, ".": false, "..": false, "a b": false, "x\x1b[2J": false, strings.Repeat("a", 250): false,
	} {
		err := checkSparkTopics(spark.Offsets{sparkTP(topic, 0): 1})
		switch {
		case ok && err != nil:
			t.Errorf("%q: %v", topic, err)
		case !ok && !errors.Is(err, spark.ErrMalformed):
			t.Errorf("%q: err = %v, want one wrapping spark.ErrMalformed", topic, err)
		case !ok && strings.ContainsRune(err.Error(), 0x1b):
			t.Errorf("%q: the error holds the raw name: %q", topic, err)
		}
	}
}
