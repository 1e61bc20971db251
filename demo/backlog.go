package demo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// backlogSpan is how far back the backlog's timestamps reach. Records
	// are spread evenly over it, ending when Start was called, so that a
	// start spec like @-5m lands inside the backlog rather than on offset 0
	// or on the live edge. Live records are stamped with the current time.
	backlogSpan = 10 * time.Minute
	// backlogChunk is how many records one synchronous produce carries.
	backlogChunk = 2000
)

// writeBacklog writes the mixed stream until every "events" partition holds
// at least perPartition records, and returns when the broker has
// acknowledged all of it. Somewhere in it is one odd record of each kind,
// so the first screen of the demo already shows them.
func (d *Demo) writeBacklog(ctx context.Context, cl *kgo.Client, g *generator, perPartition int, end time.Time) error {
	expected := int(float64(perPartition*eventsPartitions)/eventsShare) + 1
	step := backlogSpan / time.Duration(expected)
	start := end.Add(-backlogSpan)

	// One odd record of each kind, each in its own quarter of the backlog.
	quarter := expected / 4
	var forced []int // forced[kind] is the position of that kind, -1 once written
	for k := range oddKinds {
		forced = append(forced, k*quarter+g.rng.IntN(quarter))
	}

	var counts [eventsPartitions]int
	chunk := make([]*kgo.Record, 0, backlogChunk)
	flush := func() error {
		if err := cl.ProduceSync(ctx, chunk...).FirstErr(); err != nil {
			return fmt.Errorf("demo: write backlog: %w", err)
		}
		d.produced.Add(int64(len(chunk)))
		chunk = chunk[:0]
		return nil
	}
	for i := 0; slices.Min(counts[:]) < perPartition; i++ {
		ts := start.Add(time.Duration(i) * step)
		if ts.After(end) {
			ts = end
		}
		r := g.next(ts)
		if k := slices.Index(forced, i); k >= 0 {
			r, forced[k] = g.odd(oddKind(k), ts), -1
		}
		if r.Topic == EventsTopic {
			counts[r.Partition]++
		}
		if chunk = append(chunk, r); len(chunk) == backlogChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for k, at := range forced { // only if the loop ended early
		if at >= 0 {
			chunk = append(chunk, g.odd(oddKind(k), end))
		}
	}
	return flush()
}

// writeOrders writes the orders' backlog, spread over the same span as the
// mixed stream's, and returns when the broker has acknowledged it.
func (d *Demo) writeOrders(ctx context.Context, cl *kgo.Client, ord *orders, end time.Time) error {
	step := backlogSpan / ordersBacklog
	recs := make([]*kgo.Record, 0, ordersBacklog)
	for i := range ordersBacklog {
		recs = append(recs, ord.order(end.Add(-backlogSpan+time.Duration(i)*step)))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("demo: write the orders' backlog: %w", err)
	}
	d.produced.Add(int64(len(recs)))
	return nil
}
