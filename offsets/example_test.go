package offsets_test

import (
	"fmt"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

func ExampleParseSpec() {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, text := range []string{"events:0=50", "events=earliest", "events:2=-100", "events:1=@-15m", "events:x=5"} {
		spec, err := offsets.ParseSpec(text, now)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-16s %-8s all=%-5v → %s\n", text, spec.Kind, spec.AllPartitions, spec)
	}
	// Output:
	// events:0=50      offset   all=false → events:0=50
	// events=earliest  earliest all=true  → events=earliest
	// events:2=-100    from-end all=false → events:2=-100
	// events:1=@-15m   time     all=false → events:1=@2026-11-29T09:45:00Z
	// invalid offset spec "events:x=5": partition "x" is not a number
}

func ExampleSpec_Resolve() {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	b := offsets.Bounds{LogStart: 950, HighWatermark: 1000}
	for _, text := range []string{"earliest", "latest", "-10", "-100"} {
		spec, _ := offsets.ParseTarget(text, now)
		fmt.Printf("%-8s → %d\n", text, spec.Resolve(b, -1))
	}
	// Output:
	// earliest → 950
	// latest   → 1000
	// -10      → 990
	// -100     → 950
}

func ExampleResolveStarts() {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ev := func(p int32) offsets.Partition { return offsets.Partition{Topic: "events", Partition: p} }
	spec, _ := offsets.ParseSpec("events:0=50", now)
	starts, events, err := offsets.ResolveStarts(offsets.StartInput{
		Partitions: map[offsets.Partition]offsets.Bounds{
			ev(0): {LogStart: 0, HighWatermark: 1000},
			ev(1): {LogStart: 500, HighWatermark: 1200},
			ev(2): {LogStart: 0, HighWatermark: 80},
		},
		Explicit:     []offsets.Spec{spec},
		Stored:       map[offsets.Partition]int64{ev(1): 120, ev(2): 90},
		StoredSource: offsets.SourceStored,
		Reset:        offsets.ResetLatest,
		Now:          now,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range starts {
		fmt.Printf("%s starts at %d (%s)", s.Partition, s.NextOffset, s.Source)
		if s.Jump != "" {
			fmt.Printf(", marked %s", s.Jump)
		}
		fmt.Println()
	}
	for _, e := range events {
		fmt.Printf("%s: %s\n", e.Code, e.Message)
	}
	// Output:
	// events[0] starts at 50 (explicit)
	// events[1] starts at 500 (stored), marked data-loss
	// events[2] starts at 80 (reset-latest), marked offset-out-of-range
	// data-loss: events[1]: stored offset 120 is below the log start 500: 380 offsets (120..499) were deleted before they were read; reading on at 500
	// offset-out-of-range: events[2]: stored offset 90 is above the high watermark 80; starting at 80 (reset-latest)
}
