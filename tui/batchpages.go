package tui

import (
	"context"
	"errors"
	"fmt"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// pagePos is a place in a list of ranges read one after the other: range
// r at offset off. {len(ranges), 0} is the end of the last range.
type pagePos struct {
	r   int
	off int64
}

// before reports whether p comes before q in reading order.
func (p pagePos) before(q pagePos) bool {
	return p.r < q.r || p.r == q.r && p.off < q.off
}

// pageStart and pageEnd are the first and the past-the-end positions of
// ranges.
func pageStart(ranges []offsets.Range) pagePos {
	if len(ranges) == 0 {
		return pagePos{}
	}
	return pagePos{0, ranges[0].From}
}

func pageEnd(ranges []offsets.Range) pagePos { return pagePos{len(ranges), 0} }

// normalize moves a position at a range's Until to the next range's From,
// so that two names of one place compare equal.
func normalize(ranges []offsets.Range, p pagePos) pagePos {
	for p.r < len(ranges) && p.off >= ranges[p.r].Until {
		p.r++
		p.off = 0
		if p.r < len(ranges) {
			p.off = ranges[p.r].From
		}
	}
	if p.r >= len(ranges) {
		return pageEnd(ranges)
	}
	return p
}

// errPageFull stops a read once a page holds what it asked for.
var errPageFull = errors.New("page full")

// readSpan reads the records of [from, until) on rg's partition in offset
// order and keeps the last keep of them (all when keep <= 0), calling
// stop after each chunk: stop returning true ends the read early. It
// returns the records and the position after the last offset read.
func readSpan(ctx context.Context, rd Replayer, rg offsets.Range, from, until int64, keep int, stop func([]*krecord.Record) bool) ([]*krecord.Record, int64, error) {
	task := ReplayTask{
		Spec:  fmt.Sprintf("%s:%d:%d-%d", rg.Topic, rg.Partition.Partition, from, until),
		Range: offsets.Range{Partition: rg.Partition, From: from, Until: until},
	}
	var out []*krecord.Record
	next := from
	err := rd.Read(ctx, []ReplayTask{task}, func(c ReplayChunk) error {
		for _, m := range c.Records {
			if m.Offset < next || m.Offset >= until {
				continue
			}
			out = append(out, m)
			next = offsets.Next(m.Offset)
			if keep > 0 && len(out) > keep {
				out = out[len(out)-keep:]
			}
			if stop != nil && stop(out) {
				return errPageFull
			}
		}
		next = max(next, min(c.Next, until))
		return nil
	})
	if errors.Is(err, errPageFull) || err == nil && stop != nil && stop(out) {
		return out, next, nil
	}
	if err != nil {
		return out, next, err
	}
	return out, until, nil
}

// readForward reads up to n records from pos on, in reading order,
// crossing into the next ranges. It returns them and the position after
// the last one read: the end of a range read in full counts, so a range
// whose last offsets hold no record (compaction, transaction markers)
// is not read again.
func readForward(ctx context.Context, rd Replayer, ranges []offsets.Range, pos pagePos, n int) ([]*krecord.Record, pagePos, error) {
	var out []*krecord.Record
	pos = normalize(ranges, pos)
	for pos.r < len(ranges) && len(out) < n {
		rg := ranges[pos.r]
		want := n - len(out)
		recs, next, err := readSpan(ctx, rd, rg, pos.off, rg.Until, 0, func(got []*krecord.Record) bool { return len(got) >= want })
		out = append(out, recs...)
		pos = normalize(ranges, pagePos{pos.r, next})
		if err != nil {
			return out, pos, err
		}
	}
	return out, pos, nil
}

// readBackward reads up to n records before pos, in reading order,
// crossing into the ranges before. It returns them and the position of
// the first one (the start of the ranges when fewer than n were there).
// It reads n offsets at a time back from pos, twice as many after a read
// that found fewer than asked (a compacted stretch), and never keeps more
// than n records.
func readBackward(ctx context.Context, rd Replayer, ranges []offsets.Range, pos pagePos, n int) ([]*krecord.Record, pagePos, error) {
	if pos.r >= len(ranges) {
		if len(ranges) == 0 {
			return nil, pos, nil
		}
		pos = pagePos{len(ranges) - 1, ranges[len(ranges)-1].Until}
	}
	var out []*krecord.Record
	span := int64(n)
	for len(out) < n {
		rg := ranges[pos.r]
		if pos.off <= rg.From {
			if pos.r == 0 {
				break
			}
			pos = pagePos{pos.r - 1, ranges[pos.r-1].Until}
			continue
		}
		lo := max(rg.From, pos.off-span)
		recs, _, err := readSpan(ctx, rd, rg, lo, pos.off, n-len(out), nil)
		if err != nil {
			return out, pos, err
		}
		out = append(recs, out...)
		pos.off = lo
		if len(out) >= n {
			pos.off = out[0].Offset // earlier records of [lo, …) were not kept
		}
		if int64(len(recs)) < span/2 {
			span = min(span*2, int64(n)<<6)
		}
	}
	if len(out) < n {
		return out, normalize(ranges, pos), nil
	}
	return out, pos, nil
}
