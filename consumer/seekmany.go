package consumer

import (
	"fmt"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// SeekTarget is where a seek puts one partition. A seek lands inside the
// offsets the partition holds, [log start, high watermark]: a spec that
// resolves outside them (an offset past the high watermark or below the
// log start, -N reaching before the log start, a time with no record at
// or after it) is moved to the nearest end, and Note says so. This is the
// one rule for every seek the screen makes.
type SeekTarget struct {
	offsets.Partition
	// Offset is where the partition moves, inside Bounds.
	Offset int64
	// Bounds are the partition's log start and high watermark as listed
	// for this seek.
	Bounds offsets.Bounds
	// Note says why Offset is not what the spec asked for; "" when it is.
	Note string
}

// Bounds lists the partitions' log start and high watermark now.
func (s *Stream) Bounds(parts []offsets.Partition) (map[offsets.Partition]offsets.Bounds, error) {
	return kafka.ListBoundsContext(s.ctx, s.cfg.Client, parts)
}

// ResolveSeek resolves spec (an offset, earliest, latest, -N or @TIME) for
// each partition against bounds listed now, one round trip for all (and
// one more for @TIME), and applies SeekTarget's rule. An unknown
// partition is a usage error. Nothing moves until SeekTargets.
func (s *Stream) ResolveSeek(parts []offsets.Partition, spec offsets.Spec) ([]SeekTarget, error) {
	bounds, err := kafka.ListBoundsContext(s.ctx, s.cfg.Client, parts)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if _, ok := bounds[p]; !ok {
			return nil, &offsets.UsageError{Msg: fmt.Sprintf("unknown partition %s", p)}
		}
	}
	var times map[offsets.Partition]int64
	if spec.Kind == offsets.SpecTime {
		at := make(map[offsets.Partition]time.Time, len(parts))
		for _, p := range parts {
			at[p] = spec.Time
		}
		if times, err = kafka.ListOffsetsForTimes(s.cfg.Client, at); err != nil {
			return nil, err
		}
	}
	out := make([]SeekTarget, len(parts))
	for i, p := range parts {
		tOff := int64(-1)
		if t, ok := times[p]; ok {
			tOff = t
		}
		out[i] = ResolveTarget(p, spec, bounds[p], tOff)
	}
	return out, nil
}

// ResolveTarget applies SeekTarget's rule to one partition with bounds b;
// timeOffset is the broker's answer for a SpecTime (-1: no record at or
// after the time).
func ResolveTarget(p offsets.Partition, spec offsets.Spec, b offsets.Bounds, timeOffset int64) SeekTarget {
	t := SeekTarget{Partition: p, Bounds: b}
	end := fmt.Sprintf(" (%s holds offsets %d to %d)", p, b.LogStart, b.HighWatermark)
	switch spec.Kind {
	case offsets.SpecOffset:
		t.Offset = min(max(spec.Offset, b.LogStart), b.HighWatermark)
		switch {
		case spec.Offset > b.HighWatermark:
			t.Note = fmt.Sprintf("offset %d is past the high watermark: moved to %d", spec.Offset, t.Offset) + end
		case spec.Offset < b.LogStart:
			t.Note = fmt.Sprintf("offset %d is below the log start: moved to %d", spec.Offset, t.Offset) + end
		}
	case offsets.SpecFromEnd:
		t.Offset = spec.Resolve(b, -1)
		if spec.Offset > b.HighWatermark-b.LogStart {
			t.Note = fmt.Sprintf("-%d reaches before the log start: moved to %d", spec.Offset, t.Offset) + end
		}
	case offsets.SpecTime:
		t.Offset = spec.Resolve(b, timeOffset)
		if timeOffset < 0 || timeOffset > b.HighWatermark {
			t.Note = fmt.Sprintf("no record at or after %s: moved to the high watermark %d", spec.Time.UTC().Format(time.RFC3339), t.Offset)
		}
	default:
		t.Offset = spec.Resolve(b, timeOffset)
	}
	return t
}

// SeekTargets moves every partition to its target, as Seek moves one: the
// records it read that are not in a batch yet are dropped, its next range
// starts at the target and is marked as a jump, and each move is its own
// "seek" event (with the target's note). The moves are stored in one
// write, so seeking 1,000 partitions costs one write to disk, not 1,000.
// If any target's partition is one the stream does not read, no
// partition moves and it returns 0 with the error; otherwise len(ts).
func (s *Stream) SeekTargets(ts []SeekTarget) (int, error) {
	if len(ts) == 0 {
		return 0, nil
	}
	if err := s.send(command{kind: cmdSeekAll, targets: ts}); err != nil {
		return 0, err
	}
	return len(ts), nil
}
