package offsets

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ev(p int32) Partition { return Partition{Topic: "events", Partition: p} }

// threeParts is events 0..2 with bounds [0,1000), [500,1200), [0,80).
func threeParts() map[Partition]Bounds {
	return map[Partition]Bounds{
		ev(0): {LogStart: 0, HighWatermark: 1000},
		ev(1): {LogStart: 500, HighWatermark: 1200},
		ev(2): {LogStart: 0, HighWatermark: 80},
	}
}

func specs(t *testing.T, ss ...string) []Spec {
	var out []Spec
	for _, s := range ss {
		out = append(out, mustSpec(t, s))
	}
	return out
}

// startsString renders starts compactly: "events[0]=50/explicit
// events[1]=500/stored/data-loss ...".
func startsString(starts []Start) string {
	var parts []string
	for _, s := range starts {
		part := fmt.Sprintf("%s=%d/%s", s.Partition, s.NextOffset, s.Source)
		if s.Jump != "" {
			part += "/" + s.Jump
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}

func TestResolveStarts(t *testing.T) {
	tests := []struct {
		name     string
		in       StartInput
		want     string
		wantCode []string
	}{
		{
			name: "worked example of the doc comment",
			in: StartInput{Partitions: threeParts(), Explicit: specs(t, "events:0=50"),
				Stored: map[Partition]int64{ev(1): 120, ev(2): 90}, Reset: ResetLatest},
			want:     "events[0]=50/explicit events[1]=500/stored/data-loss events[2]=80/reset-latest/offset-out-of-range",
			wantCode: []string{CodeDataLoss, CodeOutOfRange},
		},
		{
			name: "a partition of a topic read before, with nothing stored, is new: read from its log start",
			in: StartInput{Partitions: threeParts(), Stored: map[Partition]int64{ev(0): 10},
				ReadTopics: map[string]bool{"events": true}, Reset: ResetLatest},
			want:     "events[0]=10/stored events[1]=500/new-partition/new-partition events[2]=0/new-partition/new-partition",
			wantCode: []string{CodeNewPartition, CodeNewPartition},
		},
		{
			name: "no specs, nothing stored, reset defaults to latest",
			in:   StartInput{Partitions: threeParts()},
			want: "events[0]=1000/reset-latest events[1]=1200/reset-latest events[2]=80/reset-latest",
		},
		{
			name: "reset earliest",
			in:   StartInput{Partitions: threeParts(), Reset: ResetEarliest},
			want: "events[0]=0/reset-earliest events[1]=500/reset-earliest events[2]=0/reset-earliest",
		},
		{
			name: "explicit beats stored, stored beats reset, per partition",
			in: StartInput{Partitions: threeParts(), Explicit: specs(t, "events:1=600"),
				Stored: map[Partition]int64{ev(0): 10, ev(1): 700}, Reset: ResetEarliest},
			want: "events[0]=10/stored events[1]=600/explicit events[2]=0/reset-earliest",
		},
		{
			name: "imported offsets say import",
			in: StartInput{Partitions: threeParts(), Stored: map[Partition]int64{ev(0): 10},
				StoredSource: SourceImport},
			want: "events[0]=10/import events[1]=1200/reset-latest events[2]=80/reset-latest",
		},
		{
			name: "T:P beats T= even when T= comes later",
			in:   StartInput{Partitions: threeParts(), Explicit: specs(t, "events:0=5", "events=earliest")},
			want: "events[0]=5/explicit events[1]=500/explicit events[2]=0/explicit",
		},
		{
			name: "later spec of the same form wins",
			in: StartInput{Partitions: threeParts(),
				Explicit: specs(t, "events=latest", "events:0=5", "events=earliest", "events:0=7")},
			want: "events[0]=7/explicit events[1]=500/explicit events[2]=0/explicit",
		},
		{
			name: "-N clamps at the log start without an event",
			in:   StartInput{Partitions: threeParts(), Explicit: specs(t, "events=-100")},
			want: "events[0]=900/explicit events[1]=1100/explicit events[2]=0/explicit",
		},
		{
			name: "timestamp answers, -1 means the high watermark",
			in: StartInput{Partitions: threeParts(), Explicit: specs(t, "events=@-1h"),
				TimeOffsets: map[Partition]int64{ev(0): 300, ev(1): -1, ev(2): 79}},
			want: "events[0]=300/timestamp events[1]=1200/timestamp events[2]=79/timestamp",
		},
		{
			name: "explicit below the log start reads from the log start, whatever --reset says",
			in: StartInput{Partitions: threeParts(), Explicit: specs(t, "events:1=100"),
				Stored: map[Partition]int64{ev(0): 1, ev(2): 2}, Reset: ResetLatest},
			want:     "events[0]=1/stored events[1]=500/explicit/data-loss events[2]=2/stored",
			wantCode: []string{CodeDataLoss},
		},
		{
			name: "imported below the log start reads from the log start too",
			in: StartInput{Partitions: threeParts(), Stored: map[Partition]int64{ev(1): 499},
				StoredSource: SourceImport, Reset: ResetEarliest},
			want:     "events[0]=0/reset-earliest events[1]=500/import/data-loss events[2]=0/reset-earliest",
			wantCode: []string{CodeDataLoss},
		},
		{
			name: "above the high watermark, explicit and stored",
			in: StartInput{Partitions: threeParts(), Explicit: specs(t, "events:0=1001"),
				Stored: map[Partition]int64{ev(2): 81}, Reset: ResetEarliest},
			want:     "events[0]=0/reset-earliest/offset-out-of-range events[1]=500/reset-earliest events[2]=0/reset-earliest/offset-out-of-range",
			wantCode: []string{CodeOutOfRange, CodeOutOfRange},
		},
		{
			name: "offsets at the bounds are fine",
			in: StartInput{Partitions: threeParts(), Explicit: specs(t, "events:0=1000", "events:1=500"),
				Stored: map[Partition]int64{ev(2): 0}},
			want: "events[0]=1000/explicit events[1]=500/explicit events[2]=0/stored",
		},
		{
			name: "strict with every partition covered",
			in: StartInput{Partitions: threeParts(), Strict: true,
				Explicit: specs(t, "events=earliest", "events:1=600")},
			want: "events[0]=0/explicit events[1]=600/explicit events[2]=0/explicit",
		},
		{
			name: "sorted across topics, stored offsets of unwatched partitions ignored",
			in: StartInput{Partitions: map[Partition]Bounds{
				{"orders", 1}: {0, 10}, {"orders", 0}: {0, 10}, ev(10): {0, 5}, ev(2): {0, 5}},
				Stored: map[Partition]int64{{"gone", 0}: 3, ev(2): 4}},
			want: "events[2]=4/stored events[10]=5/reset-latest orders[0]=10/reset-latest orders[1]=10/reset-latest",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Now = testNow
			starts, events, err := ResolveStarts(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := startsString(starts); got != tt.want {
				t.Errorf("starts\n got %s\nwant %s", got, tt.want)
			}
			var codes []string
			for _, e := range events {
				codes = append(codes, e.Code)
			}
			if !reflect.DeepEqual(codes, tt.wantCode) {
				t.Errorf("event codes = %v, want %v (%+v)", codes, tt.wantCode, events)
			}
			for _, s := range starts {
				if s.Bounds != tt.in.Partitions[s.Partition] {
					t.Errorf("%s bounds = %+v, want %+v", s.Partition, s.Bounds, tt.in.Partitions[s.Partition])
				}
			}
		})
	}
}

func TestResolveStartsDataLossEvent(t *testing.T) {
	_, events, err := ResolveStarts(StartInput{Partitions: threeParts(),
		Stored: map[Partition]int64{ev(1): 120}, Reset: ResetLatest, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	want := Event{Time: testNow, Code: CodeDataLoss, Topic: "events", Partition: 1,
		Expected: 120, From: 120, To: 500, LogStart: 500, HighWatermark: 1200, Lost: 380,
		Message: "events[1]: stored offset 120 is below the log start 500: 380 offsets (120..499) were deleted " +
			"before they were read; reading on at 500"}
	if len(events) != 1 || events[0] != want {
		t.Errorf("events\n got %+v\nwant [%+v]", events, want)
	}

	_, events, _ = ResolveStarts(StartInput{Partitions: threeParts(), Explicit: specs(t, "events:2=90"),
		Reset: ResetEarliest, Now: testNow})
	want = Event{Time: testNow, Code: CodeOutOfRange, Topic: "events", Partition: 2,
		Expected: 90, From: 90, To: 0, LogStart: 0, HighWatermark: 80,
		Message: "events[2]: explicit offset 90 is above the high watermark 80; starting at 0 (reset-earliest)"}
	if len(events) != 1 || events[0] != want {
		t.Errorf("events\n got %+v\nwant [%+v]", events, want)
	}
}

func TestResolveStartsErrors(t *testing.T) {
	many := map[Partition]Bounds{}
	for i := range int32(12) {
		many[ev(i)] = Bounds{0, 10}
	}
	tests := []struct {
		name string
		in   StartInput
		want string
	}{
		{"unknown partition", StartInput{Partitions: threeParts(), Explicit: specs(t, "events:7=5")},
			`offset spec "events:7=5": unknown partition events:7 (the topic has 3 partitions)`},
		{"unknown topic", StartInput{Partitions: threeParts(), Explicit: specs(t, "orders=earliest")},
			`offset spec "orders=earliest": topic "orders" is not one of the watched topics (events)`},
		{"strict, partitions left out", StartInput{Partitions: threeParts(), Strict: true,
			Explicit: specs(t, "events:1=600"), Stored: map[Partition]int64{ev(0): 5}},
			`--strict-offsets: no explicit offset for events:0, events:2 (add -o TOPIC:PARTITION=OFFSET or -o TOPIC=OFFSET)`},
		{"strict, nothing given", StartInput{Partitions: many, Strict: true},
			`--strict-offsets: no explicit offset for events:0, events:1, events:2, events:3, events:4, ` +
				`events:5, events:6, events:7, events:8, events:9 and 2 more (add`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ResolveStarts(tt.in)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n got %v\nwant a *UsageError starting %s", err, tt.want)
			}
		})
	}

	// A @TIME partition without a broker answer is the caller's bug, not the user's.
	_, _, err := ResolveStarts(StartInput{Partitions: threeParts(), Explicit: specs(t, "events:0=@-1h")})
	var ue *UsageError
	if err == nil || errors.As(err, &ue) {
		t.Errorf("missing time offset: error %v, want a plain error", err)
	}
}

func TestTimeLookups(t *testing.T) {
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	got := TimeLookups(threeParts(), specs(t, "events=@-1h", "events:1=5", "events:2=@-2h", "events:9=@-3h", "orders=@-1h"))
	want := map[Partition]time.Time{ev(0): at(-time.Hour), ev(2): at(-2 * time.Hour)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TimeLookups = %v, want %v", got, want)
	}
	if got := TimeLookups(threeParts(), nil); len(got) != 0 {
		t.Errorf("TimeLookups without specs = %v, want none", got)
	}
}
