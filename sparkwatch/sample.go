package sparkwatch

import (
	"context"
	"errors"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/replay"
)

// ReplaySampler reads the sample records of kbatch spark's batches with
// package replay: exact ranges, planned against the cluster (raised to the
// log start, capped at the end), never touching a store or a group.
type ReplaySampler struct{ Client *kafka.Client }

// Sample implements SampleReader. Offsets below the log start are gone:
// the samples are what is left, not an error.
func (s ReplaySampler) Sample(ctx context.Context, ranges []offsets.Range) ([]*record.Record, error) {
	specs := make([]replay.RangeSpec, len(ranges))
	for i, r := range ranges {
		specs[i] = replay.RangeSpec{Topic: r.Topic, Partitions: []int32{r.Partition.Partition},
			From: replay.Bound{Kind: replay.BoundOffset, Offset: r.From}, Until: replay.Bound{Kind: replay.BoundOffset, Offset: r.Until}}
		specs[i].Text = specs[i].String()
	}
	tasks, err := replay.Plan(s.Client, specs)
	if err != nil {
		return nil, err
	}
	sink := &collectSink{}
	_, err = replay.Run(ctx, s.Client, tasks, sink, replay.Options{FetchBytes: 64 << 10})
	var partial *replay.PartialError
	if errors.As(err, &partial) {
		err = nil
	}
	return sink.recs, err
}

// collectSink keeps a replay's records in memory; only for the few
// records of samples. It keeps copies: a batch's samples share no bytes
// with a fetch answer (consumer.Batch.Samples), so a screen keeps them as
// they are without pinning the answers they came in.
type collectSink struct{ recs []*record.Record }

func (s *collectSink) Write(recs []record.Record) error {
	for i := range recs {
		s.recs = append(s.recs, recs[i].Clone())
	}
	return nil
}

func (s *collectSink) Close() error { return nil }
func (s *collectSink) Abort()       {}
