package offsets

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// StartInput is everything start resolution needs, fetched by the caller.
type StartInput struct {
	// Partitions is every partition of the watched topics with its bounds.
	Partitions map[Partition]Bounds
	// Explicit are the --offset specs in command-line order. For one
	// partition a TOPIC:PARTITION spec beats a TOPIC= spec whatever the
	// order; between specs of the same form the later one wins.
	Explicit []Spec
	// Stored are next offsets from the store, or imported ones.
	Stored map[Partition]int64
	// StoredSource is the source reported for Stored offsets: SourceStored
	// (the default when empty) or SourceImport.
	StoredSource Source
	// TimeOffsets are the broker's answers for the partitions TimeLookups
	// returned (-1: no record at or after the time).
	TimeOffsets map[Partition]int64
	// Reset applies to partitions with neither an explicit nor a stored
	// offset, and to offsets out of range; empty means ResetLatest.
	Reset Reset
	// Strict makes every partition of every watched topic need an explicit
	// spec (TOPIC= covers a whole topic); stored offsets do not count.
	// Like Spark's startingOffsets JSON, a partial mapping is an error
	// rather than a silent fall-through.
	Strict bool
	// Now stamps the events.
	Now time.Time
}

// TimeLookups returns the partitions whose winning explicit spec is
// SpecTime, with the time to look up (ListOffsets by timestamp). Specs
// naming unknown topics or partitions are skipped here; ResolveStarts
// reports them.
func TimeLookups(parts map[Partition]Bounds, explicit []Spec) map[Partition]time.Time {
	out := make(map[Partition]time.Time)
	for p, s := range winningSpecs(parts, explicit) {
		if s.Kind == SpecTime {
			out[p] = s.Time
		}
	}
	return out
}

// ResolveStarts decides, per partition, the next offset to start at and why
// (DESIGN §2.1, §2.2, §2.5), sorted by Partition.Less. The order is: the
// winning explicit spec (source explicit, or timestamp for @TIME), else a
// stored offset (StoredSource), else Reset (reset-earliest at the log
// start, reset-latest at the high watermark). An explicit or stored offset
// below the log start is a data-loss event, one above the high watermark an
// offset-out-of-range event; both then continue per Reset.
//
// Worked example: events has partitions 0, 1, 2 with bounds [0, 1000),
// [500, 1200) and [0, 80); the command line says -o events:0=50, the store
// holds 1→120 and 2→70, and --reset is latest. Partition 0 starts at 50
// (explicit). Partition 1's stored 120 is below its log start 500: records
// 120..499 are gone, so a data-loss event (Expected 120, LogStart 500,
// HighWatermark 1200) is returned and it starts at 1200 (reset-latest).
// Partition 2 starts at 70 (stored).
//
// A spec naming a topic that is not in Partitions, or a partition the topic
// does not have, is a *UsageError, as is, under Strict, a partition no spec
// covers. A SpecTime partition missing from TimeOffsets is a caller bug and
// a plain error.
func ResolveStarts(in StartInput) ([]Start, []Event, error) {
	if err := checkSpecs(in.Partitions, in.Explicit); err != nil {
		return nil, nil, err
	}
	win := winningSpecs(in.Partitions, in.Explicit)
	parts := SortedPartitions(in.Partitions)
	if in.Strict {
		if err := checkStrict(parts, win); err != nil {
			return nil, nil, err
		}
	}
	storedSource := in.StoredSource
	if storedSource == "" {
		storedSource = SourceStored
	}
	starts := make([]Start, 0, len(parts))
	var events []Event
	for _, p := range parts {
		b := in.Partitions[p]
		st := Start{Partition: p, Bounds: b}
		spec, explicit := win[p]
		stored, hasStored := in.Stored[p]
		switch {
		case explicit && spec.Kind == SpecTime:
			off, ok := in.TimeOffsets[p]
			if !ok {
				return nil, nil, fmt.Errorf("no timestamp lookup for %s (spec %q)", p, spec.text())
			}
			st.NextOffset, st.Source = spec.Resolve(b, off), SourceTimestamp
		case explicit:
			st.NextOffset, st.Source = spec.Resolve(b, -1), SourceExplicit
		case hasStored:
			st.NextOffset, st.Source = stored, storedSource
		default:
			st.NextOffset, st.Source = resetOffset(in.Reset, b)
		}
		if e, moved := checkRange(&st, in.Reset, in.Now); moved {
			events = append(events, e)
		}
		starts = append(starts, st)
	}
	return starts, events, nil
}

// checkRange moves st per reset when its offset is outside its bounds and
// returns the event saying so.
func checkRange(st *Start, reset Reset, now time.Time) (Event, bool) {
	off, b := st.NextOffset, st.Bounds
	if off >= b.LogStart && off <= b.HighWatermark {
		return Event{}, false
	}
	was := st.Source
	st.NextOffset, st.Source = resetOffset(reset, b)
	var e Event
	if off < b.LogStart {
		e = NewEvent(now, CodeDataLoss, st.Partition, fmt.Sprintf(
			"%s: %s offset %d is below the log start %d, offsets %d..%d were deleted; starting at %d (%s)",
			st.Partition, was, off, b.LogStart, off, b.LogStart-1, st.NextOffset, st.Source))
	} else {
		e = NewEvent(now, CodeOutOfRange, st.Partition, fmt.Sprintf(
			"%s: %s offset %d is above the high watermark %d; starting at %d (%s)",
			st.Partition, was, off, b.HighWatermark, st.NextOffset, st.Source))
	}
	e.Expected, e.From, e.To = off, off, st.NextOffset
	e.LogStart, e.HighWatermark = b.LogStart, b.HighWatermark
	return e, true
}

func resetOffset(r Reset, b Bounds) (int64, Source) {
	if r == ResetEarliest {
		return b.LogStart, SourceResetEarly
	}
	return b.HighWatermark, SourceResetLatest
}

// winningSpecs applies the precedence rules of StartInput.Explicit to every
// partition in parts.
func winningSpecs(parts map[Partition]Bounds, explicit []Spec) map[Partition]Spec {
	win := make(map[Partition]Spec)
	exact := make(map[Partition]bool)
	for _, s := range explicit {
		if !s.AllPartitions {
			p := Partition{Topic: s.Topic, Partition: s.Partition}
			if _, ok := parts[p]; ok {
				win[p], exact[p] = s, true
			}
			continue
		}
		for p := range parts {
			if s.Matches(p) && !exact[p] {
				win[p] = s
			}
		}
	}
	return win
}

// checkSpecs reports the first spec that names an unknown topic or
// partition.
func checkSpecs(parts map[Partition]Bounds, explicit []Spec) error {
	counts := make(map[string]int)
	for p := range parts {
		counts[p.Topic]++
	}
	for _, s := range explicit {
		n, ok := counts[s.Topic]
		if !ok {
			return &UsageError{Msg: fmt.Sprintf("offset spec %q: topic %q is not one of the watched topics (%s)",
				s.text(), s.Topic, strings.Join(slices.Sorted(maps.Keys(counts)), ", "))}
		}
		if s.AllPartitions {
			continue
		}
		if _, ok := parts[Partition{Topic: s.Topic, Partition: s.Partition}]; !ok {
			return &UsageError{Msg: fmt.Sprintf("offset spec %q: unknown partition %s:%d (topic has %d partitions)",
				s.text(), s.Topic, s.Partition, n)}
		}
	}
	return nil
}

// checkStrict reports the partitions no explicit spec covers, naming at
// most ten.
func checkStrict(parts []Partition, win map[Partition]Spec) error {
	var missing []string
	for _, p := range parts {
		if _, ok := win[p]; !ok {
			missing = append(missing, fmt.Sprintf("%s:%d", p.Topic, p.Partition))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	list := strings.Join(missing[:min(len(missing), 10)], ", ")
	if len(missing) > 10 {
		list += fmt.Sprintf(" and %d more", len(missing)-10)
	}
	return &UsageError{Msg: "--strict-offsets: no explicit offset for " + list +
		" (add -o TOPIC:PARTITION=OFFSET or -o TOPIC=OFFSET)"}
}

// text is the spec as the user wrote it, or its canonical form.
func (s Spec) text() string {
	if s.Text != "" {
		return s.Text
	}
	return s.String()
}
