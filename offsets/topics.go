package offsets

import "slices"

// TopicsOf returns the topics of next, sorted, each once.
func TopicsOf[V any](next map[Partition]V) []string {
	var topics []string
	for p := range next {
		if !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	slices.Sort(topics)
	return topics
}

// FilterTopics keeps the offsets of next whose topic is in keep (next
// itself when keep is empty) and returns the topics it dropped, sorted.
// next is not changed.
func FilterTopics(next map[Partition]int64, keep []string) (kept map[Partition]int64, dropped []string) {
	if len(keep) == 0 {
		return next, nil
	}
	kept = map[Partition]int64{}
	for p, off := range next {
		if slices.Contains(keep, p.Topic) {
			kept[p] = off
		} else if !slices.Contains(dropped, p.Topic) {
			dropped = append(dropped, p.Topic)
		}
	}
	slices.Sort(dropped)
	return kept, dropped
}

// AllTopics are the topics the stream reads: those watch recorded, and
// those it holds next offsets for (an import can add topics), sorted.
func (s StreamInfo) AllTopics() []string {
	topics := slices.Clone(s.Topics)
	for p := range s.Next {
		if !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	slices.Sort(topics)
	return topics
}
