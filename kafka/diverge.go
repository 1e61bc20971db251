package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// Truncation after an unclean leader election (KIP-320).
//
// A client that read a partition up to pos, its last record in a record
// batch of leader epoch e, must learn whether the log it reads now still
// holds that history. Kafka's consumer asks the leader with
// OffsetForLeaderEpoch where epoch e ends, or sends e as lastFetchedEpoch
// in Fetch v12 and later and gets the diverging epoch back. kbatch does
// neither (sarama 1.61 has no OffsetForLeaderEpoch request; the kgo client
// of fetchconn.go could send one, and NewFetchRequest sends no
// lastFetchedEpoch): it reads the same answer from the log itself, with
// the Fetch requests it already builds. The epochs of a log's record
// batches never decrease along it, and two logs whose batches at an offset
// carry the same leader epoch agree on everything before it (Kafka's
// log-matching property, what its replication rests on). So
//
//   - the logs agree up to pos when the batch holding pos-1 still carries
//     epoch e (VerifyEpoch: one fetch at pos-1 instead of pos, which also
//     brings the records from pos on), and
//   - otherwise they diverge at the first offset whose batch carries an
//     epoch above e, or where the log now ends: exactly the end offset
//     OffsetForLeaderEpoch(e) answers. Divergence finds it by bisection,
//     a few small fetches.

// EpochAt returns the leader epoch of the answer's first record batch
// that reaches offset off (the batch holding off, or the first after it
// when compaction removed off), and false when the answer holds no such
// batch or its epoch is unknown (message format before v2, or -1).
func (a *PartitionAnswer) EpochAt(off int64) (int32, bool) {
	for in := a.raw; len(in) > 0; {
		size, magic, whole := entry(in)
		if !whole {
			return -1, false
		}
		if magic < 2 {
			return -1, false // no epochs before message format v2
		}
		if size >= batchHeader {
			base := int64(binary.BigEndian.Uint64(in))
			last := base + int64(int32(binary.BigEndian.Uint32(in[23:])))
			if last >= off {
				if e := int32(binary.BigEndian.Uint32(in[12:])); e >= 0 {
					return e, true
				}
				return -1, false
			}
		}
		in = in[size:]
	}
	return -1, false
}

// ErrDiverged marks a partition whose log no longer holds the history a
// reader read (found by a fetch of pos-1, see Divergence).
var ErrDiverged = errors.New("the log no longer holds the records read")

// Divergence is what Diverged found.
type Divergence struct {
	// Diverged is true when the log no longer holds what was read below
	// pos: At is then the first offset where it differs (the end of the
	// read epoch in the current log, or the log's end).
	Diverged bool
	At       int64
	// Bounds are the partition's log start and high watermark.
	Bounds offsets.Bounds
}

// Diverged finds where p's log, as its current leader holds it, stops
// agreeing with a reader that read it up to pos, the record before pos in
// a record batch of leader epoch epoch (see the comment above EpochAt).
// Below the log start nothing can be compared: a pos-1 that retention
// deleted is no divergence.
func Diverged(ctx context.Context, c *Client, p offsets.Partition, epoch int32, pos int64) (Divergence, error) {
	bs, err := ListBoundsContext(ctx, c, []offsets.Partition{p})
	if err != nil {
		return Divergence{}, err
	}
	b := bs[p]
	d := Divergence{Bounds: b}
	if pos-1 < b.LogStart {
		return d, nil
	}
	// above reports whether the log at off holds an epoch above epoch
	// or nothing any more: the divergence is at or below off.
	above := func(off int64) (bool, error) {
		if off >= b.HighWatermark {
			return true, nil
		}
		e, ok, gone, err := fetchEpoch(ctx, c, p, off)
		if err != nil || gone {
			return gone, err
		}
		if !ok {
			return false, fmt.Errorf("fetch %s at %d: no record batch with a leader epoch", p, off)
		}
		return e > epoch, nil
	}
	hi := pos - 1
	if gone, err := above(hi); err != nil || !gone {
		return d, err
	}
	lo := b.LogStart
	for lo < hi {
		mid := lo + (hi-lo)/2
		gone, err := above(mid)
		if err != nil {
			return d, err
		}
		if gone {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	d.Diverged, d.At = true, hi
	return d, nil
}

// fetchEpoch reads the leader epoch of the record batch holding off (or
// the first after it) from p's leader, the fetch carrying the leader's
// epoch so that only the current leader answers; gone when the leader
// says off is out of range. Errors a metadata refresh can cure are retried
// for a few seconds.
func fetchEpoch(ctx context.Context, c *Client, p offsets.Partition, off int64) (epoch int32, ok, gone bool, err error) {
	var last error
	_, largest := c.FetchSizes()
	size := int32(64 << 10)
	for try := 0; try < 8; try++ {
		if try > 0 {
			_ = c.RefreshMetadata(p.Topic)
			select {
			case <-ctx.Done():
				return -1, false, false, ctx.Err()
			case <-time.After(time.Duration(50<<min(try, 5)) * time.Millisecond):
			}
		}
		leader, lepoch, err := c.LeaderEpoch(p)
		if err != nil {
			last = err
			continue
		}
		o := c.FetchOptions()
		o.MinBytes, o.MaxWait, o.Rack = 1, 0, "" // the leader answers at once
		req := NewFetchRequest(o, size)
		req.AddEpoch(p, off, size, lepoch)
		resp, err := c.Fetch(leader.ID, req)
		if err != nil {
			last = err
			continue
		}
		a := resp.Partition(p)
		switch {
		case a == nil:
			last = fmt.Errorf("no answer for the partition")
			continue
		case errors.Is(a.Err, ErrOffsetOutOfRange):
			return -1, false, true, nil
		case a.Err != nil && Retriable(a.Err):
			last = a.Err
			continue
		case a.Err != nil:
			return -1, false, false, fmt.Errorf("fetch %s at %d: %w", p, off, a.Err)
		case a.Partial() && size < largest:
			size = int32(min(2*int64(size), int64(largest)))
			try-- // not a failure: ask again for more
			continue
		}
		e, ok := a.EpochAt(off)
		return e, ok, false, nil
	}
	return -1, false, false, fmt.Errorf("fetch %s at %d: %w", p, off, last)
}
