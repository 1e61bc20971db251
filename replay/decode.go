package replay

import (
	"fmt"
	"slices"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// decoded is what one fetch answer contributes to reading a partition.
type decoded struct {
	// msgs are the records in [pos, until), in offset order, without
	// control records and, under read_committed, aborted ones. Their
	// byte slices point into the answer, which is never reused.
	msgs []sarama.ConsumerMessage
	// bytes is the size of the keys, values and headers in msgs.
	bytes int64
	// next is the position after the answer: one past the last offset of
	// the last complete batch (capped at until), or pos when the answer
	// held no complete batch.
	next int64
	// batches counts the complete batches (record batches or legacy
	// message sets) in the answer.
	batches int
	// partial is set when the answer held only the start of a batch that
	// did not fit: fetch again with more bytes.
	partial bool
}

// decodeBlock decodes one partition's fetch answer read from offset pos.
// Positions advance by whole batches, using each batch's last offset, so
// offsets without a record (transaction markers, aborted records,
// compacted records) move the position as records do. Records at or after
// until are dropped. Under read_committed (committed) the batches of
// aborted transactions are skipped as Kafka's Java consumer does: a
// producer id is aborted from the first offset of an aborted transaction
// listed in the answer until its abort marker.
func decodeBlock(blk *sarama.FetchResponseBlock, p offsets.Partition, pos, until int64, committed bool) (decoded, error) {
	d := decoded{next: pos}
	if blk.Partial {
		d.partial = true
		return d, nil
	}
	var aborted []*sarama.AbortedTransaction
	var abortedPIDs map[int64]bool
	if committed && len(blk.AbortedTransactions) > 0 {
		aborted = slices.Clone(blk.AbortedTransactions)
		slices.SortFunc(aborted, func(a, b *sarama.AbortedTransaction) int {
			switch {
			case a.FirstOffset < b.FirstOffset:
				return -1
			case a.FirstOffset > b.FirstOffset:
				return 1
			}
			return 0
		})
		abortedPIDs = map[int64]bool{}
	}
	n := 0
	for _, rs := range blk.RecordsSet {
		if rs.RecordBatch != nil {
			n += len(rs.RecordBatch.Records)
		} else if rs.MsgSet != nil {
			n += len(rs.MsgSet.Messages)
		}
	}
	d.msgs = make([]sarama.ConsumerMessage, 0, n)

	for _, rs := range blk.RecordsSet {
		switch {
		case rs.RecordBatch != nil:
			b := rs.RecordBatch
			if b.PartialTrailingRecord {
				d.partial = d.batches == 0
				return d.capped(until), nil
			}
			if b.FirstOffset >= until {
				// Nothing lies between the previous batch and this one:
				// the range is done.
				d.next = until
				return d, nil
			}
			d.batches++
			last := b.LastOffset()
			for len(aborted) > 0 && aborted[0].FirstOffset <= last {
				abortedPIDs[aborted[0].ProducerID] = true
				aborted = aborted[1:]
			}
			d.next = max(d.next, last+1)
			if b.Control {
				if committed && consumer.IsAbortMarker(b) {
					delete(abortedPIDs, b.ProducerID)
				}
				continue
			}
			if committed && b.IsTransactional && abortedPIDs[b.ProducerID] {
				continue
			}
			for _, r := range b.Records {
				o := b.FirstOffset + r.OffsetDelta
				if o < pos {
					continue
				}
				if o >= until {
					return d.capped(until), nil
				}
				ts := b.FirstTimestamp.Add(r.TimestampDelta)
				if b.LogAppendTime {
					ts = b.MaxTimestamp
				}
				d.add(sarama.ConsumerMessage{Topic: p.Topic, Partition: p.Partition, Offset: o,
					Timestamp: ts, Key: r.Key, Value: r.Value, Headers: r.Headers})
			}
		case rs.MsgSet != nil:
			if done, err := d.addLegacy(rs.MsgSet, p, pos, until); err != nil || done {
				return d.capped(until), err
			}
		}
	}
	return d.capped(until), nil
}

func (d *decoded) add(m sarama.ConsumerMessage) {
	d.bytes += int64(len(m.Key) + len(m.Value))
	for _, h := range m.Headers {
		d.bytes += int64(len(h.Key) + len(h.Value))
	}
	d.msgs = append(d.msgs, m)
}

// addLegacy decodes a message set of message format v0/v1 (Kafka before
// 0.11), where a compressed wrapper holds inner messages whose offsets are
// relative under v1. It reports done when it reached until.
func (d *decoded) addLegacy(ms *sarama.MessageSet, p offsets.Partition, pos, until int64) (bool, error) {
	if ms.PartialTrailingMessage && len(ms.Messages) == 0 {
		d.partial = d.batches == 0
		return true, nil
	}
	for _, blk := range ms.Messages {
		inner := blk.Messages()
		if len(inner) == 0 {
			continue
		}
		d.batches++
		base := int64(0)
		if blk.Msg != nil && blk.Msg.Version >= 1 && len(inner) > 0 {
			base = blk.Offset - inner[len(inner)-1].Offset
		}
		for _, m := range inner {
			if m.Msg == nil {
				return false, fmt.Errorf("%s: legacy message without a body at offset %d", p, m.Offset)
			}
			o := m.Offset
			if m.Msg.Version >= 1 {
				o += base
			}
			d.next = max(d.next, o+1)
			if o < pos {
				continue
			}
			if o >= until {
				return true, nil
			}
			ts := m.Msg.Timestamp
			if m.Msg.LogAppendTime && blk.Msg != nil {
				ts = blk.Msg.Timestamp
			}
			d.add(sarama.ConsumerMessage{Topic: p.Topic, Partition: p.Partition, Offset: o,
				Timestamp: ts, Key: m.Msg.Key, Value: m.Msg.Value})
		}
	}
	return false, nil
}

// capped keeps next within until: a batch can run past the range.
func (d decoded) capped(until int64) decoded {
	d.next = min(d.next, until)
	return d
}
