package sparkwatch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// The cluster side of a Watch: samples, log bounds and progress.

// sample reads the first cfg.Samples offsets of each range of b.
func (l *sparkLoop) sample(b *consumer.Batch) []*record.Record {
	if l.cfg.Sampler == nil || l.cfg.Samples <= 0 || len(b.Ranges) == 0 {
		return nil
	}
	ranges := make([]offsets.Range, len(b.Ranges))
	for i, r := range b.Ranges {
		ranges[i] = offsets.Range{Partition: r.Partition, From: r.From, Until: min(r.Until, r.From+int64(l.cfg.Samples))}
	}
	ctx, cancel := context.WithTimeout(l.ctx, sampleTimeout)
	defer cancel()
	recs, err := l.cfg.Sampler.Sample(ctx, ranges)
	switch {
	case err != nil && l.ctx.Err() == nil:
		if msg := err.Error(); msg != l.sampleErr {
			l.sampleErr = msg
			l.notice(offsets.NewEvent(time.Now(), offsets.CodeBrokerError, offsets.Partition{Partition: -1},
				fmt.Sprintf("samples of spark batch %d: %s", b.ID, msg)))
		}
	case err == nil:
		l.sampleErr = ""
	}
	// As a stream's samples: partitions in range order, offsets ascending.
	order := make(map[offsets.Partition]int, len(ranges))
	for i, r := range ranges {
		order[r.Partition] = i
	}
	slices.SortStableFunc(recs, func(a, b *record.Record) int {
		pa := order[offsets.Partition{Topic: a.Topic, Partition: a.Partition}]
		pb := order[offsets.Partition{Topic: b.Topic, Partition: b.Partition}]
		if pa != pb {
			return cmp.Compare(pa, pb)
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
	return recs
}

// progress sends every partition's status; it is advisory, so it is
// dropped rather than wait for a slow reader.
func (l *sparkLoop) progress() {
	now := time.Now()
	per, total := l.rates.rates(now)
	pr := &consumer.Progress{Time: now, Partitions: sparkStatuses(l.parts, l.next, l.stored, l.bounds, per), Rate: total}
	select {
	case l.w.events <- pr:
	default:
	}
}

// fetchBounds fetches log starts and high watermarks off the loop, since
// kafka.ListBounds retries for seconds when the cluster is in trouble.
func (l *sparkLoop) fetchBounds() {
	if l.fetching || l.cfg.Client == nil {
		return
	}
	l.fetching = true
	parts, client, done := slices.Clone(l.parts), l.cfg.Client, l.boundsDone
	l.w.wg.Add(1)
	go func() {
		defer l.w.wg.Done()
		b, err := kafka.ListBounds(client, parts)
		done <- boundsResult{b, err} // buffered: one fetch at a time
	}()
}

func (l *sparkLoop) applyBounds(r boundsResult) {
	if r.err != nil {
		if msg := r.err.Error(); msg != l.boundsErr {
			l.boundsErr = msg
			l.notice(offsets.NewEvent(time.Now(), offsets.CodeBrokerError, offsets.Partition{Partition: -1},
				"log bounds (lag): "+msg+"; showing the last known"))
		}
		return
	}
	l.boundsErr = ""
	for p, b := range r.bounds {
		l.bounds[p] = b
	}
	l.progress()
}
