package spark

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// pickSource finds the source to read in an offset log: the one with ordinal
// source, or for source -1 the only source whose line is Kafka offset JSON.
// It may return a Void source when source >= 0; callers decide what a void
// line means for them. Errors carry no path; callers add it.
func pickSource(log OffsetLog, source int) (SourceOffset, error) {
	if source >= 0 {
		for _, s := range log.Sources {
			if s.Index != source {
				continue
			}
			if !s.Void && s.Kafka == nil {
				return SourceOffset{}, fmt.Errorf("%w: source %d's offset is not Kafka offset JSON (%d bytes)",
					ErrNoKafkaSource, source, len(s.Raw))
			}
			return s, nil
		}
		return SourceOffset{}, fmt.Errorf("no source %d; the query has %s", source, describeSources(log.Sources))
	}
	var kafka []SourceOffset
	for _, s := range log.Sources {
		if s.Kafka != nil {
			kafka = append(kafka, s)
		}
	}
	switch len(kafka) {
	case 0:
		return SourceOffset{}, fmt.Errorf("%w: the query has %s", ErrNoKafkaSource, describeSources(log.Sources))
	case 1:
		return kafka[0], nil
	}
	return SourceOffset{}, fmt.Errorf("%w (%s); pass a source index to choose one",
		ErrSeveralKafkaSources, listSources(kafka))
}

// sameSource finds want's line in another batch's offset log: by id when
// both logs have ids (v2), else by ordinal.
func sameSource(log OffsetLog, want SourceOffset) (SourceOffset, bool) {
	for _, s := range log.Sources {
		if want.ID != "" && s.ID != "" {
			if s.ID == want.ID {
				return s, true
			}
		} else if want.Index >= 0 && s.Index == want.Index {
			return s, true
		}
	}
	return SourceOffset{}, false
}

// describeSources renders sources for an error message:
// `2 sources (0: "{\"logOffset\":345}", 1: Kafka "topic-0")`.
func describeSources(sources []SourceOffset) string {
	switch len(sources) {
	case 0:
		return "no sources"
	case 1:
		return "1 source (" + listSources(sources) + ")"
	}
	return fmt.Sprintf("%d sources (%s)", len(sources), listSources(sources))
}

// listSources renders `0: "0", 1: Kafka "topic-0"`: each source's label and
// its offset, or for a Kafka source its topics.
func listSources(sources []SourceOffset) string {
	parts := make([]string, len(sources))
	for i, s := range sources {
		what := fmt.Sprintf("not Kafka (a %d-byte offset)", len(s.Raw))
		if s.Kafka != nil {
			what = "Kafka " + topicList(s.Kafka)
		}
		parts[i] = s.label() + ": " + what
	}
	return strings.Join(parts, ", ")
}

// topicList names the topics of o, sorted and quoted: "topic-0", "t2".
func topicList(o Offsets) string {
	seen := map[string]bool{}
	var topics []string
	for p := range o {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			topics = append(topics, p.Topic)
		}
	}
	if len(topics) == 0 {
		return "(no partitions)"
	}
	slices.Sort(topics)
	for i, t := range topics {
		topics[i] = quoteName(t)
	}
	return strings.Join(topics, " ")
}

// kafkaSourceDirs lists the sources/<dir>/0 files that hold Kafka initial
// offsets, for a query that has no offset log yet to say which source is
// Kafka.
func (c *Checkpoint) kafkaSourceDirs() []SourceOffset {
	entries, err := c.store.ReadDir("sources")
	if err != nil {
		return nil
	}
	var found []SourceOffset
	for _, e := range entries {
		if !e.Dir {
			continue
		}
		o, err := c.initialOffsets(e.Name)
		if err != nil {
			continue
		}
		s := SourceOffset{Index: -1, ID: e.Name, Kafka: o}
		if n, ok := batchID(e.Name); ok && n <= int64(^uint32(0)>>1) {
			s = SourceOffset{Index: int(n), Kafka: o}
		}
		found = append(found, s)
	}
	return found
}

// batchSpan describes the listed offset log for messages: " (offsets/ has
// batches 5–105)".
func (c *Checkpoint) batchSpan() string {
	switch n := len(c.Batches); n {
	case 0:
		return " (offsets/ has no batches)"
	case 1:
		return " (offsets/ has batch " + strconv.FormatInt(c.Batches[0], 10) + ")"
	default:
		return fmt.Sprintf(" (offsets/ has batches %d–%d)", c.Batches[0], c.Batches[n-1])
	}
}
