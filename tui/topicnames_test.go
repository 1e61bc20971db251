package tui

import (
	"testing"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// In a stream of two topics, a search whose matches all come from one of
// them still names the topic of each: orders[0], not 0.
func TestSearchNamesTheTopicInAStreamOfSeveral(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	st := startedWithOrders(1)
	b := batch(1, 1, 10, offsets.StateAcked)
	b.Ranges = append(b.Ranges, offsets.BatchRange{Range: offsets.Range{Partition: part("orders", 0), From: 0, Until: 1}, Records: 1})
	b.Records++
	b.Samples = append(b.Samples, msg("orders", 0, 0, "order-1", `{"total":3}`))
	feed(m, st, &consumer.BatchEvent{Batch: b})
	press(m, "2", "/")
	typeText(m, "order-1")
	s := screen(m)
	mustContain(t, s, "orders[0]")
	// The samples pane of a batch of one topic names it too.
	b2 := batch(2, 1, 12, offsets.StateAcked)
	press(m, "esc", "esc")
	feed(m, &consumer.BatchEvent{Batch: b2})
	mustContain(t, screen(m), "10:00:00.012") // b2's first sample
	mustContain(t, screen(m), "  events[0]  10:00:00.012")
}

// startedWithOrders is started(parts) over the topics events and orders,
// orders with one partition of 50 records.
func startedWithOrders(parts int) *consumer.Started {
	st := started(parts)
	st.Topics = []string{"events", "orders"}
	st.Starts = append(st.Starts, offsets.Start{Partition: part("orders", 0), Source: offsets.SourceStored,
		Bounds: offsets.Bounds{HighWatermark: 50}})
	return st
}
