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
	// ReadTopics are the topics the stream has read before (those of its
	// stored or imported offsets). A partition of one of them with no
	// stored offset appeared since the stream last ran: it starts at its
	// log start (source new-partition, with an event), as a partition
	// found while running does, so its records written meanwhile are read.
	ReadTopics map[string]bool
	// StoredSource is the source reported for Stored offsets: SourceStored
	// (the default when empty) or SourceImport.
	StoredSource Source
	// TimeOffsets are the broker's answers for the partitions TimeLookups
	// returned (-1: no record at or after the time).
	TimeOffsets map[Partition]int64
	// Reset applies to partitions with neither an explicit nor a stored
	// offset, and to offsets above the high watermark; empty means
	// ResetLatest. It never applies to data loss (an offset below the log
	// start), which starts at the log start.
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
// (docs/design.md §2.1, §2.2, §2.5), sorted by Partition.Less. The order is: the
// winning explicit spec (source explicit, or timestamp for @TIME), else a
// stored offset (StoredSource), else, for a partition of one of ReadTopics
// (it appeared since the stream last ran), its log start (source
// new-partition, with an event), else Reset (reset-earliest at the log
// start, reset-latest at the high watermark).
//
// An explicit or stored offset below the log start is data loss: reading
// goes on with what still exists, at the log start, whatever Reset says
// (Spark's failOnDataLoss=false); the source stays, the data-loss event
// counts the offsets lost, and Start.Jump marks the first range. An offset
// above the high watermark is an offset-out-of-range event and continues
// per Reset, also marked. Reset never skips records because of data loss.
//
// Worked example: events has partitions 0, 1, 2 with bounds [0, 1000),
// [500, 1200) and [0, 80); the command line says -o events:0=50, the store
// holds 1→120 and 2→90, and --reset is latest. Partition 0 starts at 50
// (explicit). Partition 1's stored 120 is below its log start 500: records
// 120..499 are gone, so a data-loss event (Expected 120, LogStart 500,
// Lost 380) is returned and it starts at 500, the oldest record left
// (stored, jump data-loss), not at 1200. Partition 2's stored 90 is above
// its high watermark 80 (the topic was recreated): an offset-out-of-range
// event, and it starts at 80 (reset-latest, jump offset-out-of-range).
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
		case in.ReadTopics[p.Topic]:
			st.NextOffset, st.Source, st.Jump = b.LogStart, SourceNewPartition, CodeNewPartition
			e := NewEvent(in.Now, CodeNewPartition, p, fmt.Sprintf(
				"%s: new partition since the stream last ran, reading from its earliest offset %d", p, b.LogStart))
			e.To, e.LogStart, e.HighWatermark = b.LogStart, b.LogStart, b.HighWatermark
			events = append(events, e)
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

// checkRange moves st when its offset is outside its bounds: below the log
// start to the log start (data loss), above the high watermark per reset;
// it returns the event saying so and marks st.Jump with its code.
func checkRange(st *Start, reset Reset, now time.Time) (Event, bool) {
	off, b := st.NextOffset, st.Bounds
	jump := b.Jump(off)
	if jump == "" {
		return Event{}, false
	}
	was := st.Source
	var e Event
	if jump == CodeDataLoss {
		st.NextOffset = b.LogStart
		e = NewEvent(now, CodeDataLoss, st.Partition, fmt.Sprintf(
			"%s: %s offset %d is below the log start %d: %d offsets (%d..%d) were deleted before they were read; reading on at %d",
			st.Partition, was, off, b.LogStart, b.LogStart-off, off, b.LogStart-1, st.NextOffset))
		e.Lost = b.LogStart - off
	} else {
		st.NextOffset, st.Source = resetOffset(reset, b)
		e = NewEvent(now, CodeOutOfRange, st.Partition, fmt.Sprintf(
			"%s: %s offset %d is above the high watermark %d; starting at %d (%s)",
			st.Partition, was, off, b.HighWatermark, st.NextOffset, st.Source))
	}
	st.Jump = e.Code
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
			return &UsageError{Msg: fmt.Sprintf("offset spec %q: unknown partition %s:%d (the topic has %s)",
				s.text(), s.Topic, s.Partition, CountPartitions(n))}
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

// CountPartitions says n partitions in words: "1 partition", "3 partitions".
func CountPartitions(n int) string {
	if n == 1 {
		return "1 partition"
	}
	return fmt.Sprintf("%d partitions", n)
}
