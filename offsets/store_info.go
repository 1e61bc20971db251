package offsets

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// info copies the stream out of the transaction. A partition whose next
// offset or jump mark fails its checksum is left out of Next and Moved and
// listed in Damaged.
func (st *streamTx) info() (StreamInfo, error) {
	info := StreamInfo{Name: st.name, ClusterID: st.meta.ClusterID, Brokers: st.meta.Brokers, Topics: st.meta.Topics, TopicIDs: st.meta.TopicIDs,
		Next: make(map[Partition]int64), LastBatch: st.meta.LastBatch, Updated: st.meta.Updated, StartChoice: st.meta.StartChoice}
	for _, m := range st.meta.Seeks {
		if info.Seeks == nil {
			info.Seeks = map[Partition]int64{}
		}
		info.Seeks[Partition{Topic: m.Topic, Partition: m.Partition}] = m.Offset
	}
	damaged := map[Partition]bool{}
	nNext, nMoved := 0, 0
	err := st.next.ForEach(func(k, v []byte) error {
		nNext++
		p, ok := decodePartitionKey(k)
		payload, sealOK := st.unseal(bucketNext, k, v)
		switch {
		case !sealOK:
			stored := int64(-1)
			if len(payload) == 8 && int64(binary.BigEndian.Uint64(payload)) >= 0 {
				stored = int64(binary.BigEndian.Uint64(payload))
			}
			damaged[p] = true
			info.Damaged = append(info.Damaged, st.checksumError(p, stored))
			return nil
		case !ok || len(payload) != 8:
			return fmt.Errorf("stream %q: bad next-offset entry %q: %w", st.name, k, ErrCorrupt)
		}
		info.Next[p] = int64(binary.BigEndian.Uint64(payload))
		return nil
	})
	if err != nil {
		return info, err
	}
	if st.moved == nil {
		return info, st.checkEntries(nNext, 0)
	}
	err = st.moved.ForEach(func(k, v []byte) error {
		nMoved++
		p, ok := decodePartitionKey(k)
		payload, sealOK := st.unseal(bucketMoved, k, v)
		switch {
		case !sealOK:
			if !damaged[p] {
				damaged[p] = true
				next, had := info.Next[p]
				if !had {
					next = -1
				}
				e := st.checksumError(p, next)
				e.Mark = true
				info.Damaged = append(info.Damaged, e)
			}
			return nil
		case !ok:
			return fmt.Errorf("stream %q: bad moved entry %q: %w", st.name, k, ErrCorrupt)
		}
		if info.Moved == nil {
			info.Moved = map[Partition]string{}
		}
		info.Moved[p] = string(payload)
		return nil
	})
	for p := range damaged {
		delete(info.Next, p)
		delete(info.Moved, p)
	}
	if err != nil {
		return info, err
	}
	return info, st.checkEntries(nNext, nMoved)
}

// checksumError is the error of p's next offset (stored, -1 when it does
// not read as one) failing its checksum, with where the newest acked batch
// of the log with a range of p ended it.
func (st *streamTx) checksumError(p Partition, stored int64) *ChecksumError {
	e := &ChecksumError{Stream: st.name, Partition: p, Stored: stored}
	c := st.batches.Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		payload, ok := st.unseal(bucketBatches, k, v)
		var b Batch
		if !ok || json.Unmarshal(payload, &b) != nil || b.State != StateAcked {
			continue
		}
		for _, r := range b.Ranges {
			if r.Partition == p {
				e.AckedBatch, e.AckedUntil = b.ID, r.Until
				return e
			}
		}
	}
	return e
}
