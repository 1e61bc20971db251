package replay

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// These tests run against kfake, or the cluster in KBATCH_TEST_BROKERS.

func dialTest(t testing.TB, tc *testkafka.Cluster, committed bool) *kafka.Client {
	t.Helper()
	c, err := kafka.Dial(kafka.ClientConfig{Brokers: tc.Brokers, ReadCommitted: committed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// memSink keeps what it is given.
type memSink struct {
	recs            []record.Record
	closed, aborted int
}

func (m *memSink) Write(recs []record.Record) error {
	m.recs = append(m.recs, recs...)
	return nil
}
func (m *memSink) Close() error { m.closed++; return nil }
func (m *memSink) Abort()       { m.aborted++ }

// byPartition lists the offsets read per partition, in the order read.
func (m *memSink) byPartition() map[int32][]int64 {
	out := map[int32][]int64{}
	for _, r := range m.recs {
		out[r.Partition] = append(out[r.Partition], r.Offset)
	}
	return out
}

func replayRanges(t *testing.T, client *kafka.Client, ranges ...string) (*memSink, *Report, error) {
	t.Helper()
	var specs []RangeSpec
	for _, r := range ranges {
		s, err := ParseRange(r, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	tasks, err := Plan(client, specs)
	if err != nil {
		t.Fatalf("plan %v: %v", ranges, err)
	}
	sink := &memSink{}
	rep, err := Run(context.Background(), client, tasks, sink, Options{})
	if sink.closed+sink.aborted != 1 {
		t.Errorf("sink closed %d times, aborted %d times; want exactly one of them once", sink.closed, sink.aborted)
	}
	return sink, rep, err
}

func seq(from, until int64) []int64 {
	var s []int64
	for o := from; o < until; o++ {
		s = append(s, o)
	}
	return s
}

func cat(parts ...[]int64) []int64 {
	var s []int64
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

func TestReplayRanges(t *testing.T) {
	tc := testkafka.New(t)
	topic := tc.Topic("replay", 3)
	tc.ProduceN(topic, 0, 100, 20)
	tc.ProduceN(topic, 1, 50, 20)
	client := dialTest(t, tc, false)

	tests := []struct {
		name   string
		ranges []string
		want   map[int32][]int64
		capped int
	}{
		{"middle", []string{"%s:0:10-20"}, map[int32][]int64{0: seq(10, 20)}, 0},
		{"start", []string{"%s:0:earliest-5"}, map[int32][]int64{0: seq(0, 5)}, 0},
		{"first offset", []string{"%s:0:0-1"}, map[int32][]int64{0: {0}}, 0},
		{"end", []string{"%s:0:90-latest"}, map[int32][]int64{0: seq(90, 100)}, 0},
		{"end exactly", []string{"%s:0:95-100"}, map[int32][]int64{0: seq(95, 100)}, 0},
		{"beyond the end is capped", []string{"%s:0:95-200"}, map[int32][]int64{0: seq(95, 100)}, 1},
		{"across partitions", []string{"%s:0,1:40-60"}, map[int32][]int64{0: seq(40, 60), 1: seq(40, 50)}, 1},
		{"every partition", []string{"%s:*:earliest-latest"}, map[int32][]int64{0: seq(0, 100), 1: seq(0, 50)}, 0},
		{"empty range", []string{"%s:0:30-30"}, map[int32][]int64{}, 0},
		{"empty partition", []string{"%s:2:earliest-latest"}, map[int32][]int64{}, 0},
		{"several ranges", []string{"%s:0:0-2", "%s:1:48-latest", "%s:0:98-latest"}, map[int32][]int64{0: {0, 1, 98, 99}, 1: {48, 49}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ranges []string
			for _, r := range tt.ranges {
				ranges = append(ranges, fmt.Sprintf(r, topic))
			}
			sink, rep, err := replayRanges(t, client, ranges...)
			if err != nil {
				t.Fatal(err)
			}
			got := sink.byPartition()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("offsets read %v\nwant %v", got, tt.want)
			}
			for _, r := range sink.recs {
				if want := fmt.Sprintf("k%d", r.Offset); string(r.Key) != want || r.Topic != topic {
					t.Errorf("record %s[%d]@%d has key %q, want %q", r.Topic, r.Partition, r.Offset, r.Key, want)
				}
			}
			capped := 0
			var records int64
			for _, p := range rep.Partitions {
				if !p.Complete() || p.Position != p.Read.Until {
					t.Errorf("%s ended at %d, want %d", p.Read.Partition, p.Position, p.Read.Until)
				}
				if p.Capped {
					capped++
				}
				records += p.Records
			}
			if capped != tt.capped || records != int64(len(sink.recs)) || rep.Records != records {
				t.Errorf("capped %d (want %d), records %d/%d (sink has %d)", capped, tt.capped, records, rep.Records, len(sink.recs))
			}
		})
	}
}

func TestReplayBelowLogStart(t *testing.T) {
	tc := testkafka.New(t)
	topic := tc.Topic("replay-gone", 1)
	tc.ProduceN(topic, 0, 100, 10)
	tc.DeleteRecords(topic, 0, 40)
	client := dialTest(t, tc, false)

	for _, tt := range []struct {
		rng     string
		want    []int64
		missing offsets.Range
	}{
		{"%s:0:10-60", seq(40, 60), offsets.Range{From: 10, Until: 40}},
		{"%s:0:0-20", nil, offsets.Range{From: 0, Until: 20}},
		{"%s:0:39-41", []int64{40}, offsets.Range{From: 39, Until: 40}},
	} {
		sink, rep, err := replayRanges(t, client, fmt.Sprintf(tt.rng, topic))
		var pe *PartialError
		if !errors.As(err, &pe) || pe.ExitCode() != 3 {
			t.Fatalf("%s: err %v, want a *PartialError with exit code 3", tt.rng, err)
		}
		if sink.closed != 1 {
			t.Errorf("%s: the available part was not closed into the sink", tt.rng)
		}
		if got := sink.byPartition()[0]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: offsets %v, want %v", tt.rng, got, tt.want)
		}
		tt.missing.Partition = offsets.Partition{Topic: topic}
		if got := rep.Partitions[0].Missing; len(got) != 1 || got[0] != tt.missing || !reflect.DeepEqual(pe.Missing, got) {
			t.Errorf("%s: missing %v (error says %v), want %v", tt.rng, got, pe.Missing, tt.missing)
		}
		if !strings.Contains(err.Error(), tt.missing.String()) {
			t.Errorf("%s: error %q does not name %v", tt.rng, err, tt.missing)
		}
	}
	// A range entirely above the log start is complete: exit 0.
	if _, _, err := replayRanges(t, client, topic+":0:40-50"); err != nil {
		t.Errorf("range above the log start: %v", err)
	}
}

func TestReplayTimes(t *testing.T) {
	tc := testkafka.New(t)
	topic := tc.Topic("replay-time", 1)
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	tc.Produce(recs...)
	client := dialTest(t, tc, false)
	ts := func(d time.Duration) string { return base.Add(d).Format(time.RFC3339Nano) }
	for _, tt := range []struct {
		rng  string
		want []int64
	}{
		{fmt.Sprintf("%s:0:@%s-@%s", topic, ts(3*time.Second), ts(7*time.Second)), seq(3, 7)},
		{fmt.Sprintf("%s:0:@%s-latest", topic, ts(3500*time.Millisecond)), seq(4, 10)},
		{fmt.Sprintf("%s:0:earliest-@%s", topic, ts(5*time.Second)), seq(0, 5)},
		{fmt.Sprintf("%s:0:@%s-@%s", topic, ts(-time.Hour), ts(time.Second)), seq(0, 1)},
		{fmt.Sprintf("%s:0:@%s-latest", topic, ts(time.Minute)), nil},
		{fmt.Sprintf("%s:0:@%s-@-1s", topic, ts(8*time.Second)), seq(8, 10)},
		{fmt.Sprintf("%s:0:2-@%s", topic, ts(4*time.Second)), seq(2, 4)},
	} {
		sink, rep, err := replayRanges(t, client, tt.rng)
		if err != nil {
			t.Fatalf("%s: %v", tt.rng, err)
		}
		if got := sink.byPartition()[0]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: offsets %v, want %v", tt.rng, got, tt.want)
		}
		for _, r := range sink.recs {
			if want := base.Add(time.Duration(r.Offset) * time.Second); !r.Timestamp.Equal(want) {
				t.Errorf("%s: record %d has timestamp %v, want %v", tt.rng, r.Offset, r.Timestamp, want)
			}
		}
		if !rep.Partitions[0].Complete() {
			t.Errorf("%s: incomplete", tt.rng)
		}
	}
}

func TestPlanUsageErrors(t *testing.T) {
	tc := testkafka.New(t)
	topic := tc.Topic("replay-plan", 2)
	tc.ProduceN(topic, 0, 10, 10)
	client := dialTest(t, tc, false)
	for _, tt := range []struct{ rng, want string }{
		{"no-such-topic-kbatch:0:0-1", `topic "no-such-topic-kbatch" does not exist`},
		{topic + ":2:0-1", fmt.Sprintf("topic %q has no partition 2 (it has partitions 0..1)", topic)},
		{topic + ":0,1,7:0-1", "has no partition 7"},
		{topic + ":0:5-@-1s", "FROM 5 is offset 5, after UNTIL"},
	} {
		spec, err := ParseRange(tt.rng, time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Plan(client, []RangeSpec{spec})
		var ue *offsets.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.rng)) {
			t.Errorf("%s: error %v, want a usage error naming the range and containing %q", tt.rng, err, tt.want)
		}
	}
}

// TestRunCancelled: a cancelled replay aborts the sink and says so.
func TestRunCancelled(t *testing.T) {
	tc := testkafka.New(t)
	topic := tc.Topic("replay-cancel", 1)
	tc.ProduceN(topic, 0, 10, 10)
	client := dialTest(t, tc, false)
	tasks := planRange(t, client, topic+":0:earliest-latest")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sink := &memSink{}
	_, err := Run(ctx, client, tasks, sink, Options{})
	if err == nil || sink.aborted != 1 || sink.closed != 0 {
		t.Fatalf("err %v, aborted %d, closed %d; want an error and an aborted sink", err, sink.aborted, sink.closed)
	}
}

// TestReplayOfATopicDeletedMeanwhile: a topic deleted, or deleted and
// created again, between the plan and the reads. Reads by name would hand
// on the new topic's records at the range's offsets as the range's; reads
// ask under the id planned (Fetch v13), and the replay fails saying what
// became of the topic, with nothing of another topic written.
func TestReplayOfATopicDeletedMeanwhile(t *testing.T) {
	for _, again := range []bool{true, false} {
		t.Run(fmt.Sprintf("created again %v", again), func(t *testing.T) {
			tc := testkafka.New(t)
			if v := tc.FetchMaxVersion(); v < 13 {
				t.Skipf("the broker serves Fetch v%d at most; topic ids came in v13 (Kafka 3.1)", v)
			}
			topic := tc.Topic("replay-recreated", 1)
			tc.ProduceN(topic, 0, 10, 10)
			client := dialTest(t, tc, false)
			tasks := planRange(t, client, topic+":0:5-latest")
			want := "deleted while it was replayed"
			if again {
				tc.Recreate(topic, 1)
				tc.ProduceN(topic, 0, 20, 10)
				want = "deleted and created again while it was replayed"
			} else if _, err := tc.Admin().DeleteTopics(context.Background(), topic); err != nil {
				t.Fatal(err)
			}
			sink := &memSink{}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := Run(ctx, client, tasks, sink, Options{})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("replay after the topic was %s: error %v, want one that says so", map[bool]string{true: "created again", false: "deleted"}[again], err)
			}
			if len(sink.recs) > 0 || sink.aborted != 1 {
				t.Errorf("%d records written (aborted %d): want none, the sink aborted", len(sink.recs), sink.aborted)
			}
		})
	}
}

// planRange plans the one RANGE argument rng (relative to now) on client.
func planRange(t *testing.T, client *kafka.Client, rng string) []Task {
	t.Helper()
	spec, err := ParseRange(rng, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := Plan(client, []RangeSpec{spec})
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}
