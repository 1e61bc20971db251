package kafka

import (
	"errors"
	"fmt"

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
// are told apart exactly as DecodeRecords does (one tracker, aborts): a
// producer's transaction is aborted from its first offset to its abort
// marker, and its later transactions are not.
func NoRecordsBetween(c *Client, p offsets.Partition, from, until int64, readCommitted bool) (bool, error) {
	if from >= until {
		return true, nil
	}
	pos := from
	for page := 0; page < 64 && pos < until; page++ {
		a, err := fetchOnce(c, p, pos, readCommitted)
		if err != nil {
			return false, err
		}
		// Within a budget of one byte: batches are decoded up to the
		// first that holds a record, which answers the question.
		d, err := a.DecodeWithin(p, pos, until, readCommitted, 1)
		if err != nil {
			return false, fmt.Errorf("fetch %s at %d: %w", p, pos, err)
		}
		if len(d.Msgs) > 0 {
			return false, nil
		}
		if d.Next <= pos {
			return false, nil // nothing more to read yet
		}
		pos = d.Next
	}
	return pos >= until, nil
}

func fetchOnce(c *Client, p offsets.Partition, offset int64, readCommitted bool) (*PartitionAnswer, error) {
	o := c.FetchOptions()
	o.ReadCommitted, o.MinBytes, o.MaxWait = readCommitted, 1, 0
	o.Rack = "" // the leader answers: no preferred read replica
	req := NewFetchRequest(o, 4<<20)
	req.Add(p, offset, 1<<20)
	resp, err := c.FetchLeader(p, req)
	if err != nil {
		var nl *NoLeaderError
		if errors.As(err, &nl) {
			return nil, fmt.Errorf("leader of %s: %w", p, nl.Err)
		}
		return nil, fmt.Errorf("fetch %s at %d: %w", p, offset, err)
	}
	a := resp.Partition(p)
	if a == nil {
		return nil, fmt.Errorf("fetch %s at %d: no answer for the partition", p, offset)
	}
	if a.Err != nil {
		return nil, fmt.Errorf("fetch %s at %d: %w", p, offset, a.Err)
	}
	return a, nil
}
