package offsets

// BatchSpan returns start and end offsets that make a reader which reads
// [start[p], end[p]) on every partition p read exactly batch id's records:
// for each range of the batch, its From and Until; for every other partition
// the log or stored know, start[p] == end[p], an empty range, at the position
// that partition had around the batch. That position is the Until of the
// newest earlier batch that read the partition, else the From of the oldest
// later batch that read it, else stored[p] (the stream's next offset). Which
// offset an empty range names does not change what is read; a real position
// is chosen so that it stays a valid offset for the consumer (Spark checks
// that its start offsets exist).
//
// log is the stream's batch log in any order (pruned batches are simply not
// known); stored may be nil. ok is false when batch id is not in log. A
// planned batch that was never acked is exported like any other: its ranges
// are what was, or will be, delivered.
//
// Worked example: batch 7 read events[0] 100 → 150; batch 6 read events[1]
// 40 → 60 and batch 9 read events[2] 5 → 8. Then start = {0:100, 1:60, 2:5}
// and end = {0:150, 1:60, 2:5}.
func BatchSpan(log []Batch, id uint64, stored map[Partition]int64) (start, end map[Partition]int64, ok bool) {
	var batch *Batch
	for i := range log {
		if log[i].ID == id {
			batch = &log[i]
		}
	}
	if batch == nil {
		return nil, nil, false
	}
	type mark struct {
		id  uint64
		off int64
	}
	before := map[Partition]mark{} // newest earlier batch's Until
	after := map[Partition]mark{}  // oldest later batch's From
	for _, b := range log {
		for _, r := range b.Ranges {
			switch {
			case b.ID < id:
				if m, seen := before[r.Partition]; !seen || b.ID > m.id {
					before[r.Partition] = mark{b.ID, r.Until}
				}
			case b.ID > id:
				if m, seen := after[r.Partition]; !seen || b.ID < m.id {
					after[r.Partition] = mark{b.ID, r.From}
				}
			}
		}
	}
	start, end = map[Partition]int64{}, map[Partition]int64{}
	idle := func(p Partition, off int64) {
		if _, done := start[p]; !done {
			start[p], end[p] = off, off
		}
	}
	for _, r := range batch.Ranges {
		start[r.Partition], end[r.Partition] = r.From, r.Until
	}
	for p, m := range before {
		idle(p, m.off)
	}
	for p, m := range after {
		idle(p, m.off)
	}
	for p, off := range stored {
		idle(p, off)
	}
	return start, end, true
}
