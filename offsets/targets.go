package offsets

import "fmt"

// CheckTopic returns a *UsageError when name is not a legal Kafka topic name
// ([a-zA-Z0-9._-], 1 to 249 characters, not "." or ".."), so names read
// from files and other tools are checked before they are stored or shown.
func CheckTopic(name string) error {
	if problem := checkTopic(name); problem != "" {
		return &UsageError{Msg: problem}
	}
	return nil
}

// ResolveTargets returns the next offset that specs assign to every
// partition of parts they cover, as `kbatch offsets set` stores it. The
// precedence is that of StartInput.Explicit (a TOPIC:PARTITION spec beats a
// TOPIC= spec; among specs of one form the later wins), and each spec is
// resolved with Spec.Resolve against the partition's bounds; timeOffsets are
// the broker's answers for the partitions TimeLookups returned. Partitions no
// spec covers are absent: unlike ResolveStarts there is no stored or reset
// fallback, and offsets outside the bounds are returned as given, for the
// caller to refuse or accept.
//
// Worked example: events has partitions 0 and 1 with bounds [0, 1000) and
// [500, 1200); specs "events=-100" and "events:1=80" give 0 → 900 (the
// TOPIC= spec, 100 before the high watermark) and 1 → 80 (the exact spec
// wins; 80 is below the log start and is returned as is).
//
// A spec naming a topic that is not in parts, or a partition its topic does
// not have, is a *UsageError; a SpecTime partition missing from timeOffsets
// is a caller bug and a plain error.
func ResolveTargets(parts map[Partition]Bounds, specs []Spec, timeOffsets map[Partition]int64) (map[Partition]int64, error) {
	if err := checkSpecs(parts, specs); err != nil {
		return nil, err
	}
	out := make(map[Partition]int64)
	for p, s := range winningSpecs(parts, specs) {
		timeOffset := int64(-1)
		if s.Kind == SpecTime {
			off, ok := timeOffsets[p]
			if !ok {
				return nil, fmt.Errorf("no timestamp lookup for %s (spec %q)", p, s.text())
			}
			timeOffset = off
		}
		out[p] = s.Resolve(parts[p], timeOffset)
	}
	return out, nil
}
