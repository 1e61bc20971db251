package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
)

// realFixtureLine is the part of a kbatch spark line these tests read,
// with each range's jump.
type realFixtureLine struct {
	Type   string   `json:"type"`
	Topics []string `json:"topics"`
	Batch  uint64   `json:"batch"`
	Code   string   `json:"code"`
	Topic  string   `json:"topic"`
	Part   int32    `json:"partition"`
	Ranges []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		From      int64  `json:"from"`
		Until     int64  `json:"until"`
		Jump      string `json:"jump"`
	} `json:"ranges"`
}

// rangesText is a batch's ranges as "topic[p] from-until jump" lines, with
// the topic's random suffix cut off.
func (l realFixtureLine) rangesText() []string {
	var out []string
	for _, r := range l.Ranges {
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s[%d] %d-%d %s", shortTopic(r.Topic), r.Partition, r.From, r.Until, r.Jump)))
	}
	return out
}

// shortTopic cuts the random "-xxxxxxxx" the test broker's topic names end with.
func shortTopic(topic string) string {
	if i := strings.LastIndexByte(topic, '-'); i > 0 && len(topic)-i == 9 {
		return topic[:i]
	}
	return topic
}

// Checkpoints a real Spark 4.2.0 query wrote (testdata/spark-real): kbatch
// spark shows every batch with exactly the ranges of Spark's offset log
// (checked from the files on their own by checkSparkLines), acked where
// commits/N exists, without a cluster; and what the queries did, as Spark
// wrote it: several topics in one batch, a topic a subscribePattern found
// while running, partitions added while running (both read by Spark from
// offset 0, shown as new-partition jumps with one event each).
func TestSparkRealFixtures(t *testing.T) {
	isolatedStore(t)
	cases := map[string]struct {
		batches int
		topics  []string
		ranges  map[uint64][]string // batch → ranges, for the batches checked in full
		events  []string            // new-partition events: topic[p]
	}{
		"spark-4.2.0-3-partitions": {batches: 5, topics: []string{"spark"},
			ranges: map[uint64][]string{0: {"spark[0] 0-30", "spark[1] 0-30", "spark[2] 0-30"},
				4: {"spark[0] 108-116", "spark[1] 108-116", "spark[2] 108-116"}}},
		"spark-4.2.0-two-topics": {batches: 2, topics: []string{"orders", "payments"},
			ranges: map[uint64][]string{1: {"orders[0] 20-30", "orders[1] 20-30", "payments[0] 20-30", "payments[1] 20-30", "payments[2] 20-30"}}},
		"spark-4.2.0-subscribe-pattern": {batches: 3, topics: []string{"sparkpat9fa29c-a", "sparkpat9fa29c-b", "sparkpat9fa29c-c"},
			ranges: map[uint64][]string{
				0: {"sparkpat9fa29c-a[0] 0-20", "sparkpat9fa29c-a[1] 0-20", "sparkpat9fa29c-b[0] 0-20"},
				2: {"sparkpat9fa29c-c[0] 0-15 new-partition", "sparkpat9fa29c-c[1] 0-15 new-partition"}},
			events: []string{"sparkpat9fa29c-c[0]", "sparkpat9fa29c-c[1]"}},
		"spark-4.2.0-partitions-grew": {batches: 3, topics: []string{"grows"},
			ranges: map[uint64][]string{2: {"grows[0] 30-40", "grows[1] 30-40", "grows[2] 0-10 new-partition", "grows[3] 0-10 new-partition"}},
			events: []string{"grows[2]", "grows[3]"}},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			dir := fixtures.SparkReal(t, name)
			out, errOut, code := runInProcess(t, "", "spark", dir, "--no-tui", "--once", "--last", "1000")
			if code != 0 {
				t.Fatalf("kbatch spark %s: exit %d: %s", dir, code, errOut)
			}
			if n := checkSparkLines(t, dir, parseSparkLines(t, out), want.batches); n != want.batches {
				t.Errorf("%d batches shown, want %d", n, want.batches)
			}
			var events []string
			for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
				var l realFixtureLine
				if err := json.Unmarshal([]byte(s), &l); err != nil {
					t.Fatalf("%q: %v", s, err)
				}
				switch l.Type {
				case "start":
					var topics []string
					for _, tp := range l.Topics {
						topics = append(topics, shortTopic(tp))
					}
					if !slices.Equal(topics, want.topics) {
						t.Errorf("topics %v, want %v", topics, want.topics)
					}
				case "event":
					events = append(events, fmt.Sprintf("%s %s[%d]", l.Code, shortTopic(l.Topic), l.Part))
				case "batch":
					if w, ok := want.ranges[l.Batch]; ok && !slices.Equal(l.rangesText(), w) {
						t.Errorf("batch %d: ranges %q, want %q", l.Batch, l.rangesText(), w)
					}
				}
			}
			var wantEvents []string
			for _, e := range want.events {
				wantEvents = append(wantEvents, "new-partition "+e)
			}
			if !slices.Equal(events, wantEvents) {
				t.Errorf("events %q, want %q", events, wantEvents)
			}
		})
	}
}
