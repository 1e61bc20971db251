package spark

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Spark's special offsets in startingOffsets / endingOffsets JSON. They have
// the same values as Kafka's ListOffsets LATEST_TIMESTAMP and
// EARLIEST_TIMESTAMP.
const (
	// OffsetLatest (-1) binds to the high watermark. Spark rejects it in a
	// batch query's startingOffsets.
	OffsetLatest int64 = -1
	// OffsetEarliest (-2) binds to the log start offset. Spark rejects it in
	// endingOffsets.
	OffsetEarliest int64 = -2
)

// StartingOffsetsJSON renders next as the value of Spark's startingOffsets
// option. Spark requires that JSON to list every partition it is assigned, so
// every partition 0..n-1 of each topic in partitions (topic → partition count
// now) that next lacks, such as a partition added after the checkpoint was
// written, is listed with OffsetEarliest (-2), which is where Spark starts a
// partition it discovers during a query. Partitions of next are all kept,
// even ones partitions does not mention. Output is compact JSON with topics
// sorted by name and partitions numerically, e.g.
//
//	{"events":{"0":3,"1":3,"2":-2}}
//
// partitions may be nil. A topic with no partitions at all is left out.
func StartingOffsetsJSON(next Offsets, partitions map[string]int32) string {
	return optionJSON(next, partitions, OffsetEarliest)
}

// EndingOffsetsJSON renders end as the value of Spark's endingOffsets option
// (batch queries only). It fills partitions the way StartingOffsetsJSON does,
// but with OffsetLatest (-1), since Spark does not allow -2 there. end itself
// must not hold OffsetEarliest; the value is written as given.
func EndingOffsetsJSON(end Offsets, partitions map[string]int32) string {
	return optionJSON(end, partitions, OffsetLatest)
}

// optionJSON renders known plus every partition of partitions it lacks, the
// missing ones at fill.
func optionJSON(known Offsets, partitions map[string]int32, fill int64) string {
	byTopic := map[string]map[int32]int64{}
	set := func(topic string, p int32, off int64) {
		if byTopic[topic] == nil {
			byTopic[topic] = map[int32]int64{}
		}
		byTopic[topic][p] = off
	}
	for tp, off := range known {
		set(tp.Topic, tp.Partition, off)
	}
	for topic, n := range partitions {
		for p := int32(0); p < n; p++ {
			if _, ok := byTopic[topic][p]; !ok {
				set(topic, p, fill)
			}
		}
	}
	topics := make([]string, 0, len(byTopic))
	for t := range byTopic {
		topics = append(topics, t)
	}
	slices.Sort(topics)

	var sb strings.Builder
	sb.WriteByte('{')
	for i, topic := range topics {
		if i > 0 {
			sb.WriteByte(',')
		}
		name, _ := json.Marshal(topic) // a string always marshals
		sb.Write(name)
		sb.WriteString(":{")
		parts := make([]int32, 0, len(byTopic[topic]))
		for p := range byTopic[topic] {
			parts = append(parts, p)
		}
		slices.Sort(parts)
		for j, p := range parts {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteByte('"')
			sb.WriteString(strconv.FormatInt(int64(p), 10))
			sb.WriteString(`":`)
			sb.WriteString(strconv.FormatInt(byTopic[topic][p], 10))
		}
		sb.WriteByte('}')
	}
	sb.WriteByte('}')
	return sb.String()
}
