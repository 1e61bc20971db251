package consumer

import (
	"cmp"
	"slices"
	"sort"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// abortMarks finds, under read_uncommitted, which of a partition's held
// records belong to aborted transactions. Kafka tells only read_committed
// readers which transactions were aborted; a read_uncommitted reader sees
// the records first and the abort marker after them, when the producer
// ends its transaction. So the rule is:
//
//   - a record is marked aborted when the abort marker of its transaction
//     was read before the record was cut into a batch (the read-ahead
//     usually holds it: a history read in a catch-up always does unless
//     one transaction spans more than the read-ahead, and a live aborted
//     transaction does when it ended before the interval did);
//   - a record whose transaction had not ended when its batch was cut is
//     delivered unmarked, and stays so: a batch never changes after it is
//     cut. Its transaction may still commit or abort. Records of committed
//     transactions and of no transaction are never marked.
//
// With read_committed, aborted records are not delivered at all and
// abortMarks stays empty. Only the loop goroutine uses it.
//
// Example: producer 7 writes [10,12) in a transaction, producer 9 writes
// [12,13), producer 7's abort marker is at 13. Once the marker is read,
// 10 and 11 are marked; 12 is not.
type abortMarks struct {
	gen uint64 // the reader generation the open transactions were read by
	// open holds, per producer, its transactional batches read since its
	// last marker and not yet cut.
	open map[int64][]span
	// aborted holds offsets of held records that an abort marker showed
	// aborted, in offset order.
	aborted []span
}

// span is the offsets [from, until).
type span struct{ from, until int64 }

// add takes the transaction marks of one chunk read by reader gen. A new
// reader (a seek, a reset) starts with no open transactions: the ones it
// had were read at other offsets. Known aborted offsets stay known.
func (a *abortMarks) add(gen uint64, marks []kafka.TxnMark) {
	if gen != a.gen {
		a.gen, a.open = gen, nil
	}
	added := false
	for _, m := range marks {
		switch {
		case !m.Marker:
			if a.open == nil {
				a.open = map[int64][]span{}
			}
			ss := a.open[m.ProducerID]
			if n := len(ss); n > 0 && ss[n-1].until == m.From {
				ss[n-1].until = m.Until
			} else {
				ss = append(ss, span{m.From, m.Until})
			}
			a.open[m.ProducerID] = ss
		case m.Abort:
			a.aborted = append(a.aborted, a.open[m.ProducerID]...)
			added = added || len(a.open[m.ProducerID]) > 0
			delete(a.open, m.ProducerID)
		default:
			delete(a.open, m.ProducerID)
		}
	}
	if added {
		a.aborted = mergeSpans(a.aborted)
	}
}

// mergeSpans sorts ss and merges the spans that overlap (offsets read
// twice, after a seek back) or touch.
func mergeSpans(ss []span) []span {
	slices.SortFunc(ss, func(x, y span) int { return cmp.Compare(x.from, y.from) })
	out := ss[:0]
	for _, s := range ss {
		if n := len(out); n > 0 && s.from <= out[n-1].until {
			out[n-1].until = max(out[n-1].until, s.until)
			continue
		}
		out = append(out, s)
	}
	return out
}

// take returns, as ranges of p, the aborted offsets in [from, until),
// the range a batch is cut with, and forgets every offset below until:
// those records are delivered now, marked or not.
func (a *abortMarks) take(p offsets.Partition, from, until int64) []offsets.Range {
	var out []offsets.Range
	kept := a.aborted[:0]
	for _, s := range a.aborted {
		if f, u := max(s.from, from), min(s.until, until); f < u {
			out = append(out, offsets.Range{Partition: p, From: f, Until: u})
		}
		if s.until > until {
			kept = append(kept, span{max(s.from, until), s.until})
		}
	}
	a.aborted = kept
	for pid, ss := range a.open {
		ks := ss[:0]
		for _, s := range ss {
			if s.until > until {
				ks = append(ks, span{max(s.from, until), s.until})
			}
		}
		if len(ks) == 0 {
			delete(a.open, pid)
		} else {
			a.open[pid] = ks
		}
	}
	return out
}

// addAborted appends a range's aborted offsets to b.Aborted, keeping it
// sorted by partition, then offset.
func (b *Batch) addAborted(rs []offsets.Range) {
	if len(rs) == 0 {
		return
	}
	n := len(b.Aborted)
	b.Aborted = append(b.Aborted, rs...)
	if n > 0 && rs[0].Partition.Less(b.Aborted[n-1].Partition) {
		slices.SortStableFunc(b.Aborted, func(x, y offsets.Range) int {
			if c := offsets.ComparePartitions(x.Partition, y.Partition); c != 0 {
				return c
			}
			return cmp.Compare(x.From, y.From)
		})
	}
}

// IsAborted reports whether the record at offset of p belongs to a
// transaction that was aborted (read_uncommitted only; see Aborted).
func (b *Batch) IsAborted(p offsets.Partition, offset int64) bool {
	i := sort.Search(len(b.Aborted), func(i int) bool {
		r := b.Aborted[i]
		return !r.Partition.Less(p) && (r.Partition != p || r.Until > offset)
	})
	return i < len(b.Aborted) && b.Aborted[i].Partition == p && b.Aborted[i].From <= offset
}
