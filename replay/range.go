package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// BoundKind says how one end of a RangeSpec is given.
type BoundKind int

// Bound kinds. FROM takes BoundOffset, BoundEarliest or BoundTime; UNTIL
// takes BoundOffset, BoundLatest or BoundTime.
const (
	// BoundOffset is an absolute offset; as UNTIL it is exclusive.
	BoundOffset BoundKind = iota
	// BoundEarliest is the log start offset (FROM only).
	BoundEarliest
	// BoundLatest is the end of the log: the high watermark, or the last
	// stable offset under read_committed (UNTIL only).
	BoundLatest
	// BoundTime is the first offset whose timestamp is at or after Time.
	BoundTime
)

// Bound is one end of a RangeSpec.
type Bound struct {
	Kind BoundKind
	// Offset is the offset for BoundOffset.
	Offset int64
	// Time is the instant for BoundTime, monotonic reading stripped;
	// relative forms ("@-5m") are resolved against the parser's now.
	Time time.Time
}

// String renders the bound as it is written in a RANGE.
func (b Bound) String() string {
	switch b.Kind {
	case BoundEarliest:
		return "earliest"
	case BoundLatest:
		return "latest"
	case BoundTime:
		return "@" + b.Time.UTC().Format(time.RFC3339Nano)
	}
	return strconv.FormatInt(b.Offset, 10)
}

// RangeSpec is one parsed RANGE argument (docs/design.md §3).
type RangeSpec struct {
	Topic string
	// Partitions lists the partitions in the order given; nil means every
	// partition of the topic ("*").
	Partitions []int32
	From       Bound
	Until      Bound
	// Text is the argument as typed (spaces trimmed), for messages.
	Text string
}

// String renders the spec canonically; ParseRange of it returns an equal
// spec (Text aside). Relative times render as the instant they resolved to.
func (r RangeSpec) String() string {
	parts := "*"
	if r.Partitions != nil {
		ss := make([]string, len(r.Partitions))
		for i, p := range r.Partitions {
			ss[i] = strconv.FormatInt(int64(p), 10)
		}
		parts = strings.Join(ss, ",")
	}
	return r.Topic + ":" + parts + ":" + r.From.String() + "-" + r.Until.String()
}

const rangeForm = "want TOPIC:PARTITIONS:FROM-UNTIL, e.g. events:0:100-200"

// ParseRange parses TOPIC:PARTITIONS:FROM-UNTIL. PARTITIONS is N, N,M,...
// (no repeats) or *. FROM is an offset, earliest or @TIME; UNTIL is an
// offset (exclusive), latest or @TIME. TIME is RFC 3339 or a duration that
// is not positive ("@-5m"), taken relative to now; times before 1970 are
// refused. Keywords are case-insensitive; surrounding spaces are ignored.
//
// Topic names cannot hold ':', so the topic and the partitions are split at
// the first two colons and times may contain colons. FROM and UNTIL are
// split at the first '-' unless FROM is a time, whose own dashes (dates,
// zone offsets, negative durations) are skipped by taking the first '-'
// at which both sides parse.
//
// Two offsets, or two times, that run backwards (FROM after UNTIL) are
// refused here; mixed forms are checked by Plan once resolved. Every error
// is a *offsets.UsageError that quotes the RANGE and names the bad part.
func ParseRange(s string, now time.Time) (RangeSpec, error) {
	s = strings.TrimSpace(s)
	fail := func(format string, args ...any) (RangeSpec, error) {
		return RangeSpec{}, &offsets.UsageError{Msg: fmt.Sprintf("invalid range \"%s\": ", s) + fmt.Sprintf(format, args...)}
	}
	topic, rest, ok := strings.Cut(s, ":")
	if err := offsets.CheckTopic(topic); err != nil {
		return fail("%s (%s)", err, rangeForm)
	}
	if !ok {
		return fail("missing \":PARTITIONS:FROM-UNTIL\" after the topic (%s)", rangeForm)
	}
	partText, bounds, ok := strings.Cut(rest, ":")
	parts, problem := parsePartitions(partText)
	if problem != "" {
		return fail("%s", problem)
	}
	if !ok {
		return fail("missing \":FROM-UNTIL\" after the partitions (%s)", rangeForm)
	}
	from, until, problem := splitBounds(bounds, now)
	if problem != "" {
		return fail("%s", problem)
	}
	switch {
	case from.Kind == BoundOffset && until.Kind == BoundOffset && from.Offset > until.Offset:
		return fail("FROM %d is after UNTIL %d", from.Offset, until.Offset)
	case from.Kind == BoundTime && until.Kind == BoundTime && from.Time.After(until.Time):
		return fail("FROM time %s is after UNTIL time %s",
			from.Time.UTC().Format(time.RFC3339Nano), until.Time.UTC().Format(time.RFC3339Nano))
	}
	return RangeSpec{Topic: topic, Partitions: parts, From: from, Until: until, Text: s}, nil
}

// splitBounds splits and parses FROM-UNTIL, returning a problem text when
// it cannot.
func splitBounds(s string, now time.Time) (from, until Bound, problem string) {
	if s == "" {
		return from, until, "missing FROM-UNTIL after the partitions (e.g. 100-200, earliest-latest)"
	}
	if s[0] != '@' {
		f, u, ok := strings.Cut(s, "-")
		if !ok {
			return from, until, fmt.Sprintf("\"%s\" has no \"-UNTIL\" (want FROM-UNTIL, e.g. 100-200)", s)
		}
		if from, problem = parseBound(f, now, true); problem != "" {
			return from, until, problem
		}
		until, problem = parseBound(u, now, false)
		return from, until, problem
	}
	// FROM is a time: try every dash after it, first one where both parse.
	var fromProblem, untilProblem string
	sawDash := false
	for i := 1; i < len(s); i++ {
		if s[i] != '-' {
			continue
		}
		sawDash = true
		f, fp := parseBound(s[:i], now, true)
		u, up := parseBound(s[i+1:], now, false)
		switch {
		case fp == "" && up == "":
			return f, u, ""
		case fp == "" && untilProblem == "":
			// FROM is a good time here: the trouble is UNTIL.
			untilProblem = up
		case up == "" && fromProblem == "":
			fromProblem = fp
		}
	}
	switch {
	case untilProblem != "":
		return from, until, untilProblem
	case fromProblem != "":
		return from, until, fromProblem
	}
	if _, fp := parseBound(s, now, true); !sawDash || fp == "" {
		// "@-5m": the only dashes belong to FROM.
		return from, until, fmt.Sprintf("\"%s\" has no \"-UNTIL\" (want FROM-UNTIL, e.g. @-10m-latest)", s)
	}
	// Neither side parses at any dash: describe FROM up to the last dash.
	cut := strings.LastIndexByte(s, '-')
	_, problem = parseBound(s[:cut], now, true)
	return from, until, problem
}

// parseBound parses FROM (isFrom) or UNTIL.
func parseBound(t string, now time.Time, isFrom bool) (Bound, string) {
	name, want := "UNTIL", "an offset, latest or @TIME"
	if isFrom {
		name, want = "FROM", "an offset, earliest or @TIME"
	}
	switch {
	case t == "":
		return Bound{}, fmt.Sprintf("missing %s (want %s)", name, want)
	case strings.EqualFold(t, "earliest"):
		if !isFrom {
			return Bound{}, fmt.Sprintf("UNTIL cannot be \"%s\" (want %s)", t, want)
		}
		return Bound{Kind: BoundEarliest}, ""
	case strings.EqualFold(t, "latest"):
		if isFrom {
			return Bound{}, fmt.Sprintf("FROM cannot be \"%s\" (want %s)", t, want)
		}
		return Bound{Kind: BoundLatest}, ""
	case t[0] == '@':
		tm, problem := offsets.ParseTime(t[1:], now)
		if problem != "" {
			return Bound{}, name + " " + problem
		}
		return Bound{Kind: BoundTime, Time: tm}, ""
	}
	n, ok := offsets.ParseDigits(t)
	if !ok && strings.Trim(t, "0123456789") == "" {
		// Digits past 2^63-1 (an UNTIL that large means the end, capped
		// at the high watermark; past it the number is too large).
		return Bound{}, fmt.Sprintf("%s \"%s\" is too large: at most 9223372036854775807", name, t)
	}
	if !ok {
		return Bound{}, fmt.Sprintf("%s \"%s\" is not %s", name, t, want)
	}
	return Bound{Kind: BoundOffset, Offset: n}, ""
}

// parsePartitions parses "*" (nil) or a comma-separated list.
func parsePartitions(s string) ([]int32, string) {
	const want = "want N, N,M,... or *"
	switch s {
	case "":
		return nil, "missing partitions after the topic (" + want + ")"
	case "*":
		return nil, ""
	}
	var out []int32
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			return nil, fmt.Sprintf("empty partition in \"%s\" (%s)", s, want)
		}
		n, ok := offsets.ParseDigits(f)
		if !ok {
			return nil, fmt.Sprintf("partition \"%s\" is not a number (%s)", f, want)
		}
		if n > 1<<31-1 {
			return nil, fmt.Sprintf("partition \"%s\" is out of range (0..2147483647)", f)
		}
		if slices.Contains(out, int32(n)) {
			return nil, fmt.Sprintf("partition %d is listed twice", n)
		}
		out = append(out, int32(n))
	}
	return out, ""
}
