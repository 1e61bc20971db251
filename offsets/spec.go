package offsets

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SpecKind says how a Spec names its offset.
type SpecKind int

// Spec kinds.
const (
	// SpecOffset is an absolute next offset: "events:0=50".
	SpecOffset SpecKind = iota
	// SpecEarliest is the log start offset: "events:0=earliest".
	SpecEarliest
	// SpecLatest is the high watermark: "events:0=latest".
	SpecLatest
	// SpecFromEnd is N offsets before the high watermark: "events:0=-100".
	SpecFromEnd
	// SpecTime is the first offset at or after a time: "events:0=@-15m".
	SpecTime
)

// String names the kind as it appears in messages.
func (k SpecKind) String() string {
	switch k {
	case SpecOffset:
		return "offset"
	case SpecEarliest:
		return "earliest"
	case SpecLatest:
		return "latest"
	case SpecFromEnd:
		return "from-end"
	case SpecTime:
		return "time"
	}
	return "SpecKind(" + strconv.Itoa(int(k)) + ")"
}

// Spec is one parsed offset SPEC (docs/design.md §3): where one partition, or every
// partition of a topic, starts.
type Spec struct {
	Topic string
	// Partition is the partition number; -1 when AllPartitions is set.
	Partition int32
	// AllPartitions is set for the TOPIC=... form.
	AllPartitions bool
	Kind          SpecKind
	// Offset is the offset for SpecOffset and N for SpecFromEnd (N ≥ 1).
	Offset int64
	// Time is the instant for SpecTime, with the monotonic reading
	// stripped; relative forms ("@-15m") are already resolved against the
	// now passed to the parser.
	Time time.Time
	// Text is the text the spec was parsed from.
	Text string
}

const targetHelp = "want an offset, earliest, latest, -N or @TIME"

// MaxOffset is the largest offset kbatch takes, 2^62: far beyond any log,
// and what every offset file kbatch reads or writes may hold (offsets
// export → import, Spark's offset JSON), so an offset set by hand always
// exports and imports back.
const MaxOffset int64 = 1 << 62

// ParseSpec parses TOPIC:PARTITION=TARGET or TOPIC=TARGET, where TARGET is
// an offset, "earliest", "latest" (either in any case), -N (N ≥ 1 offsets
// before the high watermark; "-0" is refused, "latest" says it), or @TIME.
// TIME is RFC 3339 or a Go duration that is not positive ("@-15m"), taken
// relative to now; times before 1970 are refused because Kafka reads
// negative timestamps as earliest/latest. Surrounding spaces are ignored.
//
// The topic is split off at the first ':' or '=' (Kafka topic names are
// [a-zA-Z0-9._-], at most 249 characters, not "." or ".."), the target at
// the first '=', so times with colons are safe. Every error is a
// *UsageError that quotes the spec and names the bad part.
func ParseSpec(s string, now time.Time) (Spec, error) {
	s = strings.TrimSpace(s)
	fail := func(format string, args ...any) (Spec, error) {
		return Spec{}, &UsageError{Msg: fmt.Sprintf("invalid offset spec \"%s\": ", s) + fmt.Sprintf(format, args...)}
	}
	left, target, ok := strings.Cut(s, "=")
	if !ok {
		return fail(`missing "=" (want TOPIC:PARTITION=OFFSET or TOPIC=OFFSET)`)
	}
	topic, part, hasPart := strings.Cut(left, ":")
	if problem := checkTopic(topic); problem != "" {
		return fail("%s", problem)
	}
	spec := Spec{Topic: topic, Partition: -1, AllPartitions: true}
	if hasPart {
		p, problem := parsePartition(part)
		if problem != "" {
			return fail("%s", problem)
		}
		spec.Partition, spec.AllPartitions = p, false
	}
	t, problem := parseTarget(target, now)
	if problem != "" {
		return fail("%s", problem)
	}
	spec.Kind, spec.Offset, spec.Time, spec.Text = t.Kind, t.Offset, t.Time, s
	return spec, nil
}

// ParseTarget parses only the part after "=" (an offset, earliest, latest,
// -N or @TIME) for a partition that is already known, as the TUI seek form
// does. The returned Spec has an empty Topic; errors are *UsageError.
func ParseTarget(s string, now time.Time) (Spec, error) {
	s = strings.TrimSpace(s)
	spec, problem := parseTarget(s, now)
	if problem != "" {
		return Spec{}, &UsageError{Msg: "invalid offset: " + problem}
	}
	spec.Text = s
	return spec, nil
}

// parseTarget returns the spec for a target, or a problem text quoting the
// bad part.
func parseTarget(t string, now time.Time) (Spec, string) {
	spec := Spec{Partition: -1}
	switch {
	case t == "":
		return spec, "missing offset after \"=\" (" + targetHelp + ")"
	case strings.EqualFold(t, "earliest"):
		spec.Kind = SpecEarliest
	case strings.EqualFold(t, "latest"):
		spec.Kind = SpecLatest
	case t[0] == '@':
		tm, problem := ParseTime(t[1:], now)
		if problem != "" {
			return spec, problem
		}
		spec.Kind, spec.Time = SpecTime, tm
	case t[0] == '-':
		n, ok := ParseDigits(t[1:])
		if !ok {
			if d := t[1:]; d != "" && strings.Trim(d, "0123456789") == "" {
				// Any N up to 2^63-1 is taken (the log start, at most);
				// past it the number is too large, as an offset's is.
				return spec, fmt.Sprintf("offset \"%s\" is too large: N in -N is at most 9223372036854775807 (earliest reads from the log start)", t)
			}
			return spec, fmt.Sprintf("offset \"%s\" is not a number (%s)", t, targetHelp)
		}
		if n == 0 {
			return spec, fmt.Sprintf("offset \"%s\": N in -N must be at least 1 (use latest for the high watermark)", t)
		}
		spec.Kind, spec.Offset = SpecFromEnd, n
	default:
		n, ok := ParseDigits(t)
		if !ok {
			if strings.Trim(t, "0123456789") == "" {
				return spec, fmt.Sprintf("offset \"%s\" is too large", t)
			}
			return spec, fmt.Sprintf("offset \"%s\" is not a number (%s)", t, targetHelp)
		}
		if n > MaxOffset {
			return spec, fmt.Sprintf("offset \"%s\" is too large: an offset is at most 2^62", t)
		}
		spec.Kind, spec.Offset = SpecOffset, n
	}
	return spec, ""
}

// ParseTime parses what follows '@' in a SPEC or a replay RANGE: RFC 3339,
// or a negative duration back from now ("-15m"). It returns the time, or a
// problem text naming v when it is not valid. Pure: now is the caller's.
func ParseTime(v string, now time.Time) (time.Time, string) {
	tm, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		d, derr := time.ParseDuration(v)
		if derr != nil && strings.Contains(derr.Error(), "invalid duration") && strings.HasPrefix(v, "-") && looksLikeDuration(v[1:]) {
			// time.ParseDuration says "invalid" for a duration past its
			// range (about 292 years).
			return time.Time{}, fmt.Sprintf("time \"%s\" is too far back: a duration is at most about 290 years (2562047h)", v)
		}
		if derr != nil {
			return time.Time{}, fmt.Sprintf("time \"%s\" is neither RFC 3339 (2026-11-29T10:00:00Z) nor a duration like -15m", v)
		}
		if d > 0 {
			ago := strings.TrimPrefix(v, "+")
			return time.Time{}, fmt.Sprintf("time \"%s\" is in the future; write @-%s for %s ago", v, ago, ago)
		}
		tm = now.Add(d)
	}
	if tm.Before(time.Unix(0, 0)) {
		return time.Time{}, fmt.Sprintf("time \"%s\" is before 1970-01-01", v)
	}
	return tm.Round(0), ""
}

// looksLikeDuration reports whether s is digits followed by Go duration
// units ("99999999h", "5h30m"), whatever its size.
func looksLikeDuration(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	rest := strings.TrimLeft(s, "0123456789.")
	for rest != "" {
		unit := rest[:len(rest)-len(strings.TrimLeft(rest, "nsuµmh"))]
		if unit == "" {
			return false
		}
		switch unit {
		case "ns", "us", "µs", "ms", "s", "m", "h":
		default:
			return false
		}
		rest = strings.TrimLeft(rest[len(unit):], "0123456789.")
	}
	return true
}

// ParseDigits accepts a non-empty run of ASCII digits that fits an int64;
// signs, spaces and underscores are refused.
func ParseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func parsePartition(s string) (int32, string) {
	if s == "" {
		return 0, "missing partition after \":\""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Sprintf("partition \"%s\" is not a number", s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Sprintf("partition \"%s\" is out of range (0..2147483647)", s)
	}
	return int32(n), ""
}

// checkTopic returns a problem text when name is not a legal Kafka topic.
func checkTopic(name string) string {
	switch {
	case name == "":
		return "missing topic"
	case len(name) > 249:
		return fmt.Sprintf("topic \"%s\" is longer than 249 characters", name[:20]+"…")
	case name == "." || name == "..":
		return fmt.Sprintf("topic \"%s\" is not a legal topic name", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Sprintf("topic \"%s\" is not a legal topic name (only [a-zA-Z0-9._-])", name)
		}
	}
	return ""
}

// NeedsCluster reports whether resolving the spec needs the cluster: every
// form but TOPIC:PARTITION=OFFSET does (a topic's partitions, its log start
// or high watermark, a timestamp lookup).
func (s Spec) NeedsCluster() bool { return s.AllPartitions || s.Kind != SpecOffset }

// CheckDistinct refuses two specs for the same partition, or two
// TOPIC=... specs for the same topic: one would silently override the
// other, and which the user meant cannot be known. A TOPIC:PARTITION spec
// beside a TOPIC=... spec is fine: it takes that partition out of the
// topic-wide one.
func CheckDistinct(specs []Spec) error {
	type key struct {
		topic string
		part  int32
		all   bool
	}
	seen := make(map[key]Spec, len(specs))
	for _, sp := range specs {
		k := key{sp.Topic, sp.Partition, sp.AllPartitions}
		if k.all {
			k.part = 0
		}
		if first, ok := seen[k]; ok {
			what := fmt.Sprintf("partition %s:%d", sp.Topic, sp.Partition)
			if k.all {
				what = "every partition of topic " + sp.Topic
			}
			return &UsageError{Msg: fmt.Sprintf("offset specs \"%s\" and \"%s\" both set %s: give one", first.text(), sp.text(), what)}
		}
		seen[k] = sp
	}
	return nil
}

// Matches reports whether the spec applies to p.
func (s Spec) Matches(p Partition) bool {
	return s.Topic != "" && s.Topic == p.Topic && (s.AllPartitions || s.Partition == p.Partition)
}

// String renders the spec in canonical form ("events:0=50",
// "events=earliest", "events:0=@2026-11-29T10:00:00Z"); ParseSpec of it
// gives the same spec back, except Text. A relative time is rendered as the
// absolute time it resolved to. A spec from ParseTarget renders only its
// target.
func (s Spec) String() string {
	var target string
	switch s.Kind {
	case SpecEarliest:
		target = "earliest"
	case SpecLatest:
		target = "latest"
	case SpecFromEnd:
		target = "-" + strconv.FormatInt(s.Offset, 10)
	case SpecTime:
		target = "@" + s.Time.Format(time.RFC3339Nano)
	default:
		target = strconv.FormatInt(s.Offset, 10)
	}
	switch {
	case s.Topic == "":
		return target
	case s.AllPartitions:
		return s.Topic + "=" + target
	}
	return s.Topic + ":" + strconv.FormatInt(int64(s.Partition), 10) + "=" + target
}

// Resolve returns the next offset the spec means for a partition with bounds
// b. timeOffset is the broker's answer to a timestamp lookup for SpecTime
// (-1: no record at or after the time, so the high watermark) and is
// ignored otherwise.
//
// SpecOffset is returned as given, even outside b: ResolveStarts reports
// that as data loss or out of range. SpecFromEnd clamps at the log start
// (-100 on bounds [950, 1000) is 950, not 900), and SpecTime's answer is
// clamped into [LogStart, HighWatermark] because retention may have moved
// the log start between the two broker calls.
func (s Spec) Resolve(b Bounds, timeOffset int64) int64 {
	switch s.Kind {
	case SpecEarliest:
		return b.LogStart
	case SpecLatest:
		return b.HighWatermark
	case SpecFromEnd:
		if s.Offset >= b.HighWatermark-b.LogStart {
			return b.LogStart
		}
		return b.HighWatermark - s.Offset
	case SpecTime:
		if timeOffset < 0 || timeOffset > b.HighWatermark {
			return b.HighWatermark
		}
		return max(timeOffset, b.LogStart)
	}
	return s.Offset
}
