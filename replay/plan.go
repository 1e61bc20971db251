package replay

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Task is one partition's share of a RANGE, resolved against the cluster.
type Task struct {
	// Spec is the RANGE the task came from, as typed.
	Spec string
	// Requested is the range the RANGE resolved to: earliest is the log
	// start, latest the end, @TIME the broker's answer; not yet capped.
	Requested offsets.Range
	// Read is what will be read: Requested with From raised to the log
	// start and both ends capped at the end of the log. It can be empty.
	Read offsets.Range
	// Bounds are the partition's log start and end when planned. The end
	// is the high watermark, or the last stable offset when the client
	// reads committed records only.
	Bounds offsets.Bounds
	// Capped is set when Requested.Until was beyond the end.
	Capped bool
	// Unreachable is set when UNTIL was an explicit offset beyond the end
	// (Capped is set too): the read stops at the end, short of what was
	// asked, and the replay says so with its own exit code (ShortError).
	// An UNTIL of latest or @TIME means "up to the end" and never is.
	Unreachable bool
	// TopicID is the topic's id when planned (KIP-516; zero when the
	// cluster gave none). Reads ask under it, so a topic deleted and
	// created again while it is replayed fails the replay instead of
	// handing on the new topic's records at the range's offsets.
	TopicID kafka.TopicID
}

// Missing is the part of Requested below the log start, which no longer
// exists; empty when nothing is missing.
func (t Task) Missing() offsets.Range {
	return offsets.Range{Partition: t.Requested.Partition, From: t.Requested.From,
		Until: max(t.Requested.From, min(t.Requested.Until, t.Bounds.LogStart))}
}

// Plan resolves specs into tasks, one per partition of each spec, in spec
// order and then partition order. It asks the cluster for partitions, log
// bounds (one ListOffsets request per broker and kind) and, for @TIME
// bounds, offsets by timestamp. The end used for latest and for capping
// depends on the client's Consumer.IsolationLevel: the high watermark, or
// the last stable offset for read_committed (kafka.ClientConfig.ReadCommitted).
//
// An unknown topic or partition, and a range whose FROM resolves after its
// UNTIL, are *offsets.UsageError values naming the RANGE.
func Plan(client *kafka.Client, specs []RangeSpec) ([]Task, error) {
	pairs, err := expandSpecs(client, specs)
	if err != nil || len(pairs) == 0 {
		return nil, err
	}
	var used []offsets.Partition
	seen := map[offsets.Partition]bool{}
	for _, pr := range pairs {
		if !seen[pr.part] {
			seen[pr.part] = true
			used = append(used, pr.part)
		}
	}
	// The ids before the bounds: a topic created again in between is
	// then read under the old id, and refused, rather than planned with
	// the new topic's bounds and read as the old one.
	var topics []string
	for _, p := range used {
		if !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	ids, _ := kafka.TopicIDs(client, topics) // none: reads go by name
	bounds, err := kafka.ListBounds(client, used)
	if err != nil {
		return nil, fmt.Errorf("log bounds: %w", err)
	}
	timeOffset, err := lookupTimes(client, pairs)
	if err != nil {
		return nil, err
	}
	tasks := make([]Task, 0, len(pairs))
	for _, pr := range pairs {
		t, err := planTask(pr.spec, pr.part, bounds[pr.part], timeOffset(pr.part, pr.spec.From), timeOffset(pr.part, pr.spec.Until))
		if err != nil {
			return nil, err
		}
		t.TopicID = kafka.ParseTopicID(ids[pr.part.Topic])
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// specPart is one partition a RANGE names.
type specPart struct {
	spec RangeSpec
	part offsets.Partition
}

// expandSpecs lists the partitions each spec names, in spec order, each
// topic's partitions asked once. An unknown topic or partition is an
// *offsets.UsageError naming the range.
func expandSpecs(client *kafka.Client, specs []RangeSpec) ([]specPart, error) {
	var pairs []specPart
	topicParts := map[string][]offsets.Partition{}
	for _, s := range specs {
		parts, ok := topicParts[s.Topic]
		if !ok {
			var err error
			parts, err = kafka.TopicPartitions(client, []string{s.Topic})
			if errors.Is(err, kafka.ErrUnknownTopic) {
				return nil, &offsets.UsageError{Msg: fmt.Sprintf("range %q: topic %q does not exist on this cluster", s.Text, s.Topic)}
			}
			if err != nil {
				return nil, fmt.Errorf("range %q: %w", s.Text, err)
			}
			topicParts[s.Topic] = parts
		}
		if s.Partitions == nil {
			for _, p := range parts {
				pairs = append(pairs, specPart{s, p})
			}
			continue
		}
		for _, n := range s.Partitions {
			p := offsets.Partition{Topic: s.Topic, Partition: n}
			if !slices.Contains(parts, p) {
				return nil, &offsets.UsageError{Msg: fmt.Sprintf("range %q: topic %q has no partition %d (it has %s)",
					s.Text, s.Topic, n, describePartitions(parts))}
			}
			pairs = append(pairs, specPart{s, p})
		}
	}
	return pairs, nil
}

// lookupTimes resolves the time bounds of pairs to offsets, one lookup
// per distinct (partition, time), in rounds since a request holds one
// time per partition. The function it returns gives a bound's offset: -1
// for a bound that is not a time, or a time after every record.
func lookupTimes(client *kafka.Client, pairs []specPart) (func(offsets.Partition, Bound) int64, error) {
	type lookup struct {
		p offsets.Partition
		t int64 // Unix ms
	}
	found := map[lookup]int64{}
	var rounds []map[offsets.Partition]time.Time
	need := func(p offsets.Partition, b Bound) {
		if b.Kind != BoundTime {
			return
		}
		k := lookup{p, b.Time.UnixMilli()}
		if _, ok := found[k]; ok {
			return
		}
		found[k] = -1
		for _, r := range rounds {
			if _, busy := r[p]; !busy {
				r[p] = b.Time
				return
			}
		}
		rounds = append(rounds, map[offsets.Partition]time.Time{p: b.Time})
	}
	for _, pr := range pairs {
		need(pr.part, pr.spec.From)
		need(pr.part, pr.spec.Until)
	}
	for _, r := range rounds {
		res, err := kafka.ListOffsetsForTimes(client, r)
		if err != nil {
			return nil, fmt.Errorf("offsets by time: %w", err)
		}
		for p, tm := range r {
			found[lookup{p, tm.UnixMilli()}] = res[p]
		}
	}
	return func(p offsets.Partition, b Bound) int64 {
		if b.Kind != BoundTime {
			return -1
		}
		return found[lookup{p, b.Time.UnixMilli()}]
	}, nil
}

// planTask resolves one spec on one partition with bounds b. fromTime and
// untilTime are the broker's answers to the timestamp lookups of @TIME
// bounds (-1: no record at or after the time, which means the end).
//
// Worked example: RANGE events:0:0-500 on bounds [120, 400) reads
// [120, 400): offsets 0 → 120 are missing (below the log start), and the
// range is capped at 400.
func planTask(s RangeSpec, p offsets.Partition, b offsets.Bounds, fromTime, untilTime int64) (Task, error) {
	resolve := func(bd Bound, timeOffset int64) int64 {
		switch bd.Kind {
		case BoundEarliest:
			return b.LogStart
		case BoundLatest:
			return b.HighWatermark
		case BoundTime:
			if timeOffset < 0 || timeOffset > b.HighWatermark {
				return b.HighWatermark
			}
			return max(timeOffset, b.LogStart)
		}
		return bd.Offset
	}
	req := offsets.Range{Partition: p, From: resolve(s.From, fromTime), Until: resolve(s.Until, untilTime)}
	if openEnd := s.Until.Kind == BoundLatest || s.Until.Kind == BoundTime && (untilTime < 0 || untilTime > b.HighWatermark); openEnd {
		// "Up to the end" never runs backwards: FROM beyond the end reads
		// nothing (and is reported as capped) instead of failing, so
		// events:*:500-latest works on partitions shorter than 500.
		req.Until = max(req.Until, req.From)
	}
	if req.From > req.Until && s.From.Kind == BoundTime && s.Until.Kind == BoundTime {
		// FROM's time is at most UNTIL's (ParseRange), and the first
		// record at or after a later time is never before the first at
		// or after an earlier one: the broker's answers are wrong, not
		// the RANGE.
		return Task{}, fmt.Errorf("range %q: on %s the broker answered offset %d for FROM %s and offset %d for UNTIL %s, a later time at an earlier offset, "+
			"which no log has; nothing was read", s.Text, p, req.From, s.From, req.Until, s.Until)
	}
	if req.From > req.Until {
		return Task{}, &offsets.UsageError{Msg: fmt.Sprintf("range %q: on %s FROM %s is offset %d, after UNTIL %s at offset %d",
			s.Text, p, s.From, req.From, s.Until, req.Until)}
	}
	end := b.HighWatermark
	read := offsets.Range{Partition: p}
	read.From = min(max(req.From, b.LogStart), end)
	read.Until = max(min(req.Until, end), read.From)
	return Task{Spec: s.Text, Requested: req, Read: read, Bounds: b, Capped: req.Until > end,
		Unreachable: s.Until.Kind == BoundOffset && req.Until > end}, nil
}

// describePartitions renders a topic's partitions for messages: "0..5"
// when contiguous from 0, else the list.
func describePartitions(parts []offsets.Partition) string {
	contiguous := true
	for i, p := range parts {
		if p.Partition != int32(i) {
			contiguous = false
		}
	}
	switch {
	case len(parts) == 1 && contiguous:
		return "only partition 0"
	case contiguous:
		return fmt.Sprintf("partitions 0..%d", len(parts)-1)
	}
	s := "partitions "
	for i, p := range parts {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(p.Partition)
	}
	return s
}
