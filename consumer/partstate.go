package consumer

import (
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// partState is the loop's view of one partition. Only the loop goroutine
// touches it.
type partState struct {
	// afterRedeliver is a seek to afterRedeliverTo made before the batch
	// re-delivered at start was cut; the partition moves right after it.
	afterRedeliver   bool
	afterRedeliverTo int64
	p                offsets.Partition
	source           offsets.Source
	reader           *reader
	gen              uint64
	// from is where the partition's next range starts: the previous
	// range's Until, or where a seek, reset or data loss moved it.
	from  int64
	recs  []*record.Record
	bytes int64
	// fetched is the current reader's position: every record below it
	// is in recs or in a batch. It can be past position() when the last
	// offsets read hold no record (transaction markers, aborted or
	// compacted batches).
	fetched int64
	// jump names why from is not the previous range's Until ("seek",
	// "reset", "data-loss"); cleared when a range carries it.
	jump string
	// restart, when set, is where the reader must start again once the
	// records already held are in a batch (data loss while running).
	restart *restart
	// needReader is set when starting the reader failed; the loop retries.
	needReader bool
	// readerAt is when the reader is started again at the earliest
	// (needReader): a broker that contradicts itself is asked again after
	// a wait (onLookup).
	readerAt time.Time
	// contradicted counts the lookups in a row that found the position
	// contradictedAt inside the log after the broker said it was out of
	// range.
	contradicted   int
	contradictedAt int64

	userPaused bool
	// corrupt is the record batch the reader stopped at, which cannot
	// be delivered; the partition reads nothing more until a seek.
	corrupt *kafka.CorruptBatchError
	errored bool
	errKind string // the kind (errorKind) of the error last reported
	// unknownID is the reader's kafka.ErrUnknownTopicID, held until a
	// refresh started after unknownAt (the one it nudged) tells whether
	// the topic was created again (one topic-recreated event) or not
	// (then it is reported as the broker error it is).
	unknownID error
	unknownAt time.Time

	bounds offsets.Bounds
	// stored is the acked next offset, -1 when none.
	stored int64
	// target is the high watermark at start for --until-end, -1 when the
	// partition does not count.
	target int64

	rate       rateWindow
	lastRecord time.Time
	// marks finds the held records of aborted transactions
	// (read_uncommitted only).
	marks abortMarks

	// The last kafka.NoRecordsBetween probe: when, over which range, and its
	// answer; probing while one runs.
	probeAt                time.Time
	probeFrom, probeTarget int64
	probeEmpty             bool
	probing                bool
}

type restart struct {
	offset int64
	code   string
}

// position is the offset after the last record held, or from.
func (ps *partState) position() int64 {
	if n := len(ps.recs); n > 0 {
		return offsets.Next(ps.recs[n-1].Offset)
	}
	return ps.from
}

// hwm is the freshest high watermark known.
func (ps *partState) hwm() int64 {
	h := ps.bounds.HighWatermark
	if ps.reader != nil {
		if r := ps.reader.highWatermark(); r > h {
			h = r
		}
	}
	return h
}

func (ps *partState) setPaused(paused bool) {
	if ps.reader == nil {
		return
	}
	if paused {
		ps.reader.pause()
	} else {
		ps.reader.resume()
	}
}

// rateWindow counts records and bytes per second over the last few
// seconds.
type rateWindow struct {
	counts [5]int64
	bytes  [5]int64
	i      int
	filled int
}

func (w *rateWindow) add(n, b int64) {
	w.counts[w.i] += n
	w.bytes[w.i] += b
}

// roll closes the current second and returns records/s and bytes/s.
func (w *rateWindow) roll() (float64, float64) {
	if w.filled < len(w.counts) {
		w.filled++
	}
	var n, b int64
	for i := 0; i < w.filled; i++ {
		n += w.counts[i]
		b += w.bytes[i]
	}
	w.i = (w.i + 1) % len(w.counts)
	w.counts[w.i], w.bytes[w.i] = 0, 0
	return float64(n) / float64(w.filled), float64(b) / float64(w.filled)
}

// corruptAt is PartitionStatus.CorruptAt of ps.
func corruptAt(ps *partState) int64 {
	if ps.corrupt == nil {
		return 0
	}
	return ps.corrupt.Offset
}
