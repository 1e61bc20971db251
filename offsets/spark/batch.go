package spark

import (
	"errors"
	"fmt"
	"io/fs"
)

// BatchRanges are the offset ranges one Spark micro-batch read from one
// Kafka source: [Start[p], End[p]) for every partition p of End.
type BatchRanges struct {
	// ID is the Spark batch id.
	ID int64
	// Start is where the batch began: the end of batch ID-1 (offsets/ID-1),
	// or the source's initial offsets (sources/<i>/0) for batch 0 and for a
	// source that is new in this batch. A partition in End but not in Start
	// was new to the query; Spark read it from its log start offset.
	Start Offsets
	// End is the exclusive end, offsets/ID: the next offsets after the batch.
	End Offsets
	// Committed is true when the batch is at or below the checkpoint's last
	// committed batch as of Open; false means Spark planned it but had not
	// committed it, and re-runs it over the same ranges on restart.
	Committed bool
	// Log is offsets/ID as parsed (its metadata has the batch's time).
	Log OffsetLog
}

// Batch returns the ranges Spark batch id read from a Kafka source: from
// offsets/<id-1> (or sources/<i>/0 for batch 0) to offsets/<id>. source is
// the source ordinal, or -1 for the query's one Kafka source (see
// CommittedOffsets). The files are read even when id is newer than Open's
// listing. It is an error when offsets/<id> does not exist, when
// offsets/<id-1> was purged (the start is then unknown), and when the source
// has no Kafka offset in batch id.
func (c *Checkpoint) Batch(id int64, source int) (BatchRanges, error) {
	if id < 0 || source < -1 {
		return BatchRanges{}, fmt.Errorf("spark checkpoint %s: invalid batch %d or source index %d", c.Dir, id, source)
	}
	path := c.path("offsets", id)
	log, err := c.OffsetLog(id)
	if errors.Is(err, fs.ErrNotExist) {
		return BatchRanges{}, fmt.Errorf("spark checkpoint %s: batch %d is not in the offset log%s", path, id, c.batchSpan())
	}
	if err != nil {
		return BatchRanges{}, err
	}
	end, err := pickSource(log, source)
	if err != nil {
		return BatchRanges{}, fmt.Errorf("spark checkpoint %s: %w", path, err)
	}
	if end.Void {
		return BatchRanges{}, fmt.Errorf("spark checkpoint %s: source %s has no offset in batch %d", path, end.label(), id)
	}
	start, err := c.batchStart(id, end)
	if err != nil {
		return BatchRanges{}, err
	}
	return BatchRanges{ID: id, Start: start, End: end.Kafka, Committed: id <= c.Committed, Log: log}, nil
}

// batchStart finds where batch id of source end started.
func (c *Checkpoint) batchStart(id int64, end SourceOffset) (Offsets, error) {
	if id > 0 {
		path := c.path("offsets", id-1)
		prev, err := c.OffsetLog(id - 1)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("spark checkpoint %s: missing, so where batch %d started is unknown (Spark purged it: it keeps the last spark.sql.streaming.minBatchesToRetain batches, default 100)", path, id)
		}
		if err != nil {
			return nil, err
		}
		if s, ok := sameSource(prev, end); ok && !s.Void {
			if s.Kafka == nil {
				return nil, fmt.Errorf("spark checkpoint %s: source %s's offset is not Kafka offset JSON (%d bytes)", path, s.label(), len(s.Raw))
			}
			return s.Kafka, nil
		}
		// The source had no offset in batch id-1: it is new in batch id and
		// started at its initial offsets.
	}
	return c.initialOffsets(end.dir())
}
