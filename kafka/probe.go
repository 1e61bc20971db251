package kafka

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// NoRecordsBetween reports whether the partition's log holds no record a
// consumer would deliver at offsets [from, until): only transaction
// markers, compacted-away offsets or (with read-committed) aborted
// records. It asks the leader directly with a Fetch, so it is exact, not a
// guess from timing: a reader whose position stopped short of until while
// this is true has read everything there is below until.
//
// It returns false when a deliverable record exists in the range or when
// the broker cannot yet say (the range reaches past the high watermark, or
// past the last stable offset with read-committed). Aborted transactions
// are told apart exactly as DecodeBlock does (one tracker, aborts): a
// producer's transaction is aborted from its first offset to its abort
// marker, and its later transactions are not.
func NoRecordsBetween(c *Client, p offsets.Partition, from, until int64, readCommitted bool) (bool, error) {
	if from >= until {
		return true, nil
	}
	pos := from
	for page := 0; page < 64 && pos < until; page++ {
		blk, err := fetchOnce(c, p, pos, readCommitted)
		if err != nil {
			return false, err
		}
		ab := newAborts(blk, readCommitted)
		covered := pos
		for _, rs := range blk.RecordsSet {
			rb := rs.RecordBatch
			if rb == nil {
				continue // legacy message sets are not written by brokers >= 0.11
			}
			if rb.PartialTrailingRecord {
				break
			}
			covered = max(covered, offsets.Next(rb.LastOffset()))
			if ab.skip(rb) {
				continue
			}
			for _, r := range rb.Records {
				if o := rb.FirstOffset + r.OffsetDelta; o >= pos && o < until {
					return false, nil
				}
			}
		}
		if covered <= pos {
			return false, nil // nothing more to read yet
		}
		pos = covered
	}
	return pos >= until, nil
}

func fetchOnce(c *Client, p offsets.Partition, offset int64, readCommitted bool) (*sarama.FetchResponseBlock, error) {
	b, err := c.sc.Leader(p.Topic, p.Partition)
	if err != nil {
		return nil, fmt.Errorf("leader of %s: %w", p, err)
	}
	o := FetchOptionsFor(c.sc.Config())
	o.ReadCommitted, o.MinBytes, o.MaxWait = readCommitted, 1, 0
	o.Rack = "" // the leader answers: no preferred read replica
	req := NewFetchRequest(o, 4<<20)
	req.Add(p, offset, 1<<20)
	resp, err := b.Fetch(req.r)
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("fetch %s at %d: %w", p, offset, err)
	}
	blk := resp.GetBlock(p.Topic, p.Partition)
	if blk == nil {
		return nil, fmt.Errorf("fetch %s at %d: no answer for the partition", p, offset)
	}
	if !errors.Is(blk.Err, sarama.ErrNoError) {
		return nil, fmt.Errorf("fetch %s at %d: %w", p, offset, blk.Err)
	}
	return blk, nil
}
