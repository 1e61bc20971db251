package kafka

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// NoEnd is the until of DecodeBlock for a reader without an end (the
// stream).
const NoEnd int64 = math.MaxInt64

// Block is what one partition's fetch answer holds from a position up to
// an end. The stream and replay both read through it.
type Block struct {
	// Msgs are the deliverable records in [pos, until), in offset order:
	// no control records and, under read_committed, none of aborted
	// transactions. They are one slab per answer, and their byte slices
	// point into the answer, which is never reused.
	Msgs []record.Record
	// Bytes is the size of their keys, values and headers.
	Bytes int64
	// Next is the position after the answer: one past the last offset of
	// its last complete batch, at most until, so transaction markers,
	// aborted batches and compacted gaps move it as records do; pos when
	// the answer held no complete batch.
	Next int64
	// Batches counts the complete batches (record batches, or legacy
	// message sets) in the answer.
	Batches int
	// Partial is set when the answer held only the start of a batch
	// larger than the fetch size: fetch again with more.
	Partial bool
	// Txn lists, under read_uncommitted only, the answer's transactional
	// batches and transaction markers in offset order. Kafka lists a
	// fetch's aborted transactions only to read_committed readers, so a
	// read_uncommitted reader learns that records were aborted from the
	// abort marker that follows them (see abortMarks).
	Txn []TxnMark
}

// TxnMark is a transactional record batch of a producer, [From, Until),
// or (Marker) the control batch at From that ends the producer's
// transaction: committed, or aborted (Abort).
type TxnMark struct {
	ProducerID  int64
	From, Until int64
	Marker      bool
	Abort       bool
}

// Memory is what the block's records take in memory once decoded: their
// bytes, decompressed, and the message each is held in. Read-aheads count
// it, so that their bounds hold whatever the compression ratio.
func (d Block) Memory() int64 { return InMemory(int64(len(d.Msgs)), d.Bytes) }

// RecordOverhead is what a decoded record takes in memory beside its
// bytes: its record.Record and the pointer to it.
const RecordOverhead = 160

// InMemory is what n decoded records of bytes (record.Record.Bytes) take
// in memory: their bytes, decompressed, and RecordOverhead each. The
// stream's and replay's read-aheads count this, so their bounds hold
// whatever the records' compression ratio and size (DESIGN §2.6).
func InMemory(n, bytes int64) int64 { return bytes + n*RecordOverhead }

// DecodeBlock decodes one partition's fetch answer read from offset pos,
// keeping the records in [pos, until). Positions advance by whole
// batches, using each batch's last offset. Under read_committed
// (committed) the batches of aborted transactions are skipped as sarama's
// partition consumer and Kafka's Java consumer do: a producer id is
// aborted from the first offset of an aborted transaction listed in the
// answer until its abort marker. An error means a malformed answer.
func DecodeBlock(blk *sarama.FetchResponseBlock, p offsets.Partition, pos, until int64, committed bool) (Block, error) {
	d := Block{Next: pos}
	if blk.Partial {
		d.Partial = true
		return d, nil
	}
	n, h := 0, 0
	for _, rs := range blk.RecordsSet {
		switch {
		case rs.RecordBatch != nil:
			n += len(rs.RecordBatch.Records)
			for _, r := range rs.RecordBatch.Records {
				h += len(r.Headers)
			}
		case rs.MsgSet != nil:
			for _, m := range rs.MsgSet.Messages {
				if m.Msg != nil && m.Msg.Set != nil {
					n += len(m.Msg.Set.Messages)
				} else {
					n++
				}
			}
		}
	}
	if n > 0 {
		d.Msgs = make([]record.Record, 0, n) // one slab per answer
	}
	var headers []*record.Header
	if h > 0 {
		headers = make([]*record.Header, 0, h) // and one for their headers
	}
	err := d.decode(blk, p, pos, until, committed, headers)
	d.Next = min(d.Next, until) // a batch can run past the range
	return d, err
}

func (d *Block) decode(blk *sarama.FetchResponseBlock, p offsets.Partition, pos, until int64, committed bool, headers []*record.Header) error {
	ab := newAborts(blk, committed)
	for _, rs := range blk.RecordsSet {
		switch {
		case rs.RecordBatch != nil:
			b := rs.RecordBatch
			if b.PartialTrailingRecord {
				d.Partial = d.Batches == 0
				return nil
			}
			if b.FirstOffset >= until {
				// Nothing lies between the previous batch and this one:
				// the range is done.
				d.Next = until
				return nil
			}
			d.Batches++
			d.Next = max(d.Next, offsets.Next(b.LastOffset()))
			if !committed && b.IsTransactional {
				d.Txn = append(d.Txn, TxnMark{ProducerID: b.ProducerID, From: b.FirstOffset, Until: offsets.Next(b.LastOffset()),
					Marker: b.Control, Abort: b.Control && IsAbortMarker(b)})
			}
			if ab.skip(b) {
				continue
			}
			first, known := firstTimestamp(b)
			for _, r := range b.Records {
				o := b.FirstOffset + r.OffsetDelta
				if o < pos {
					continue
				}
				if o >= until {
					return nil
				}
				var ts time.Time // none: a negative timestamp (-1 is Kafka's "no timestamp")
				switch {
				case b.LogAppendTime:
					ts = b.MaxTimestamp
				case known:
					if t := first.Add(r.TimestampDelta); t.UnixMilli() >= 0 {
						ts = t
					}
				}
				m := d.grow()
				m.Topic, m.Partition, m.Offset, m.Timestamp = p.Topic, p.Partition, o, ts
				m.Key, m.Value = r.Key, r.Value
				if len(r.Headers) > 0 {
					start := len(headers)
					for _, h := range r.Headers {
						if h != nil {
							headers = append(headers, (*record.Header)(h)) // same layout: no copy
						}
					}
					m.Headers = headers[start:len(headers):len(headers)]
				}
				d.Bytes += m.Bytes()
			}
		case rs.MsgSet != nil:
			if done, err := d.decodeLegacy(rs.MsgSet, p, pos, until); err != nil || done {
				return err
			}
		}
	}
	return nil
}

// firstTimestamp is the batch's first timestamp, the base of its records'
// deltas. sarama reads a negative one (a first record with Kafka's "no
// timestamp", -1) as the zero time, and adding deltas to that gave the
// batch's other records dates in year 1 or 57. The base is then worked
// back from the batch's largest timestamp, which is base plus the largest
// delta; known is false when that is negative too (no record has a time).
func firstTimestamp(b *sarama.RecordBatch) (first time.Time, known bool) {
	if !b.FirstTimestamp.IsZero() {
		return b.FirstTimestamp, true
	}
	if b.MaxTimestamp.IsZero() || len(b.Records) == 0 {
		return time.Time{}, false
	}
	var top time.Duration
	for i, r := range b.Records {
		if i == 0 || r.TimestampDelta > top {
			top = r.TimestampDelta
		}
	}
	return b.MaxTimestamp.Add(-top), true
}

// grow appends a zero record to the slab and returns it.
func (d *Block) grow() *record.Record {
	d.Msgs = append(d.Msgs, record.Record{})
	return &d.Msgs[len(d.Msgs)-1]
}

// decodeLegacy decodes a message set of message format v0/v1 (Kafka before
// 0.11), where a compressed wrapper holds inner messages whose offsets are
// relative under v1. It reports done when it reached until or the end of
// what the answer held.
func (d *Block) decodeLegacy(ms *sarama.MessageSet, p offsets.Partition, pos, until int64) (bool, error) {
	if ms.PartialTrailingMessage && len(ms.Messages) == 0 {
		d.Partial = d.Batches == 0
		return true, nil
	}
	for _, blk := range ms.Messages {
		if blk.Msg == nil {
			return false, fmt.Errorf("%s: legacy message without a body at offset %d", p, blk.Offset)
		}
		inner := blk.Messages()
		if len(inner) == 0 {
			continue
		}
		d.Batches++
		base := int64(0)
		if blk.Msg.Version >= 1 {
			base = blk.Offset - inner[len(inner)-1].Offset
		}
		for _, im := range inner {
			if im.Msg == nil {
				return false, fmt.Errorf("%s: legacy message without a body at offset %d", p, im.Offset)
			}
			o := im.Offset
			if im.Msg.Version >= 1 {
				o += base
			}
			d.Next = max(d.Next, offsets.Next(o))
			if o < pos {
				continue
			}
			if o >= until {
				return true, nil
			}
			ts := im.Msg.Timestamp
			if im.Msg.Version >= 1 && im.Msg.LogAppendTime {
				ts = blk.Msg.Timestamp
			}
			m := d.grow()
			m.Topic, m.Partition, m.Offset, m.Timestamp = p.Topic, p.Partition, o, ts
			m.Key, m.Value = im.Msg.Key, im.Msg.Value
			d.Bytes += m.Bytes()
		}
	}
	return false, nil
}

// aborts tracks the producer ids whose batches are aborted at the current
// point of a read_committed answer. It is the one place that decides
// which batches a read_committed reader skips: DecodeBlock and the probe
// (NoRecordsBetween) both step through an answer's batches with skip.
type aborts struct {
	pending []*sarama.AbortedTransaction // by first offset, not reached yet
	active  map[int64]bool
}

func newAborts(blk *sarama.FetchResponseBlock, committed bool) aborts {
	if !committed || len(blk.AbortedTransactions) == 0 {
		return aborts{}
	}
	pending := slices.Clone(blk.AbortedTransactions)
	slices.SortFunc(pending, func(a, b *sarama.AbortedTransaction) int {
		switch {
		case a.FirstOffset < b.FirstOffset:
			return -1
		case a.FirstOffset > b.FirstOffset:
			return 1
		}
		return 0
	})
	return aborts{pending: pending, active: map[int64]bool{}}
}

// reach starts every aborted transaction that begins at or before last.
func (a *aborts) reach(last int64) {
	for len(a.pending) > 0 && a.pending[0].FirstOffset <= last {
		a.active[a.pending[0].ProducerID] = true
		a.pending = a.pending[1:]
	}
}

// end is the abort marker of pid.
func (a *aborts) end(pid int64) { delete(a.active, pid) }

// skip takes the answer's next record batch b, in offset order, and
// reports whether it holds no record to deliver: a control batch (whose
// abort marker ends its producer's aborted transaction), or a batch of an
// aborted transaction. Without an aborted-transactions list (read
// uncommitted, or none aborted) only control batches are skipped.
func (a *aborts) skip(b *sarama.RecordBatch) bool {
	a.reach(b.LastOffset())
	if b.Control {
		if IsAbortMarker(b) {
			a.end(b.ProducerID)
		}
		return true
	}
	return b.IsTransactional && a.active[b.ProducerID]
}

// IsAbortMarker reports whether a control batch holds an ABORT marker:
// its record's key is version int16, type int16 (0 abort, 1 commit).
func IsAbortMarker(b *sarama.RecordBatch) bool {
	if len(b.Records) == 0 || len(b.Records[0].Key) < 4 {
		return false
	}
	return binary.BigEndian.Uint16(b.Records[0].Key[2:4]) == 0
}
