package consumer

import (
	"encoding/binary"
	"slices"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// decoded is what one partition's fetch answer adds to its reader.
type decoded struct {
	// msgs are the deliverable records at or after the fetch position, in
	// offset order: no control records and, under read_committed, none of
	// aborted transactions. They live in one slab per answer and their
	// byte slices point into the answer, which is never reused.
	msgs  []*sarama.ConsumerMessage
	bytes int64 // msgBytes of msgs
	// next is the position after the answer: one past the last offset of
	// its last complete batch, so transaction markers, aborted batches
	// and compacted gaps inside the answer move it as records do; pos
	// when the answer held no complete batch.
	next int64
	// partial is set when the answer held only the start of a batch
	// larger than the partition's fetch size: fetch again with more.
	partial bool
}

// decodeBlock decodes one partition's fetch answer read from pos. Under
// read_committed (committed) the batches of aborted transactions are
// skipped as sarama's partition consumer and Kafka's Java consumer do: a
// producer id is aborted from the first offset of an aborted transaction
// listed in the answer until its abort marker.
func decodeBlock(blk *sarama.FetchResponseBlock, p offsets.Partition, pos int64, committed bool) decoded {
	d := decoded{next: pos}
	if blk.Partial {
		d.partial = true
		return d
	}
	n := 0
	for _, rs := range blk.RecordsSet {
		if rs.RecordBatch != nil {
			n += len(rs.RecordBatch.Records)
		} else if rs.MsgSet != nil {
			for _, m := range rs.MsgSet.Messages {
				n += max(len(m.Messages()), 1)
			}
		}
	}
	if n == 0 {
		d.partial = len(blk.RecordsSet) > 0 && isPartialSet(blk.RecordsSet[0])
		for _, rs := range blk.RecordsSet {
			// Batches without records (all compacted away) still move
			// the position.
			if rs.RecordBatch != nil && !rs.RecordBatch.PartialTrailingRecord {
				d.partial = false
				d.next = max(d.next, rs.RecordBatch.LastOffset()+1)
			}
		}
		return d
	}
	// One slab of messages and one of pointers per answer, not one
	// allocation per record.
	slab := make([]sarama.ConsumerMessage, n)
	d.msgs = make([]*sarama.ConsumerMessage, 0, n)

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
	complete := 0
	for _, rs := range blk.RecordsSet {
		switch {
		case rs.RecordBatch != nil:
			b := rs.RecordBatch
			if b.PartialTrailingRecord {
				d.partial = complete == 0
				return d
			}
			complete++
			last := b.LastOffset()
			for len(aborted) > 0 && aborted[0].FirstOffset <= last {
				abortedPIDs[aborted[0].ProducerID] = true
				aborted = aborted[1:]
			}
			d.next = max(d.next, last+1)
			if b.Control {
				if committed && IsAbortMarker(b) {
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
				ts := b.FirstTimestamp.Add(r.TimestampDelta)
				if b.LogAppendTime {
					ts = b.MaxTimestamp
				}
				m := &slab[len(d.msgs)]
				*m = sarama.ConsumerMessage{Topic: p.Topic, Partition: p.Partition, Offset: o,
					Timestamp: ts, Key: r.Key, Value: r.Value, Headers: r.Headers}
				d.add(m)
			}
		case rs.MsgSet != nil:
			if rs.MsgSet.PartialTrailingMessage && len(rs.MsgSet.Messages) == 0 {
				d.partial = complete == 0
				return d
			}
			complete++
			d.addLegacy(rs.MsgSet, slab, p, pos)
		}
	}
	return d
}

func (d *decoded) add(m *sarama.ConsumerMessage) {
	d.bytes += msgBytes(m)
	d.msgs = append(d.msgs, m)
}

// addLegacy decodes a message set of message format v0/v1 (Kafka before
// 0.11), where a compressed wrapper holds inner messages whose offsets are
// relative under v1.
func (d *decoded) addLegacy(ms *sarama.MessageSet, slab []sarama.ConsumerMessage, p offsets.Partition, pos int64) {
	for _, blk := range ms.Messages {
		inner := blk.Messages()
		if len(inner) == 0 {
			continue
		}
		base := int64(0)
		if blk.Msg != nil && blk.Msg.Version >= 1 {
			base = blk.Offset - inner[len(inner)-1].Offset
		}
		for _, im := range inner {
			if im.Msg == nil {
				continue
			}
			o := im.Offset
			if im.Msg.Version >= 1 {
				o += base
			}
			d.next = max(d.next, o+1)
			if o < pos {
				continue
			}
			ts := im.Msg.Timestamp
			if im.Msg.Version >= 1 && im.Msg.LogAppendTime && blk.Msg != nil {
				ts = blk.Msg.Timestamp
			}
			m := &slab[len(d.msgs)]
			*m = sarama.ConsumerMessage{Topic: p.Topic, Partition: p.Partition, Offset: o,
				Timestamp: ts, Key: im.Msg.Key, Value: im.Msg.Value}
			if blk.Msg != nil {
				m.BlockTimestamp = blk.Msg.Timestamp
			}
			d.add(m)
		}
	}
}

func isPartialSet(rs *sarama.Records) bool {
	switch {
	case rs.RecordBatch != nil:
		return rs.RecordBatch.PartialTrailingRecord
	case rs.MsgSet != nil:
		return rs.MsgSet.PartialTrailingMessage && len(rs.MsgSet.Messages) == 0
	}
	return false
}

// IsAbortMarker reports whether a control batch holds an ABORT marker:
// its record's key is version int16, type int16 (0 abort, 1 commit).
func IsAbortMarker(b *sarama.RecordBatch) bool {
	if len(b.Records) == 0 || len(b.Records[0].Key) < 4 {
		return false
	}
	return binary.BigEndian.Uint16(b.Records[0].Key[2:4]) == 0
}
