package consumer

import (
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// Event is what the stream reports on its channel: *Started, *BatchEvent,
// *Notice, *Progress or *Ended. Events are values the receiver may keep;
// the stream never changes one after sending it.
type Event interface{ event() }

// Started is the first event: where every partition starts and why.
type Started struct {
	Stream  string
	Brokers []string
	Topics  []string
	Starts  []offsets.Start
	// Redelivering is the planned-but-unacked batch found in the store,
	// which the stream re-delivers with the same ranges before anything
	// else; nil when there is none.
	Redelivering *offsets.Batch
}

// Batch is one cut of the stream as the stream reports it: the stored
// batch plus samples and timings. Its Ranges are sorted by partition.
type Batch struct {
	offsets.Batch
	// Samples holds up to Config.Samples records per partition, in offset
	// order per partition, partitions in range order. Each is the
	// stream's own copy, sharing no bytes with a fetch answer or another
	// batch, so a receiver may keep it as it is.
	Samples []*record.Record
	// SamplesSkipped is set when the batch was cut while the receiver's
	// SampleGate was closed (it had not taken the samples of earlier
	// events): the batch has none, so that a screen behind a catch-up of
	// large records does not get copies of all of them (samples.go).
	SamplesSkipped bool
	// Duration is how long processing (sink, ack) took.
	Duration time.Duration
	// Aborted holds the offsets of the batch's records that belong to
	// aborted transactions, sorted by partition, then offset. Only a
	// read_uncommitted stream delivers such records, and it marks those
	// whose abort marker it had read when the batch was cut (abortMarks
	// says why not all); IsAborted looks one up.
	Aborted []offsets.Range
	// Filtered is set by a Processor that keeps only some records (watch
	// --where) during Process, with Matched the number it kept; the acked
	// batch's event carries both.
	Filtered bool
	Matched  int64
}

// Jumped reports whether any range of the batch did not start where the
// previous batch of its partition ended.
func (b *Batch) Jumped() bool {
	for _, r := range b.Ranges {
		if r.Jump != "" {
			return true
		}
	}
	return false
}

// BatchEvent reports a batch: planned (manual ack, waiting) or acked.
type BatchEvent struct{ Batch *Batch }

// Notice reports something that moved or threatened a position: data loss,
// out-of-range, seeks, resets, new partitions, broker errors.
type Notice struct{ offsets.Event }

// StatusLag is what Lag is for r's high watermark, NEXT and Read: for a
// caller that updates r's high watermark or NEXT between two progress
// events.
func StatusLag(r PartitionStatus) int64 {
	return max(0, r.HighWatermark-max(r.NextOffset, r.Read))
}

// PartitionStatus is one partition's live state.
type PartitionStatus struct {
	offsets.Partition
	Source offsets.Source
	// NextOffset is the next offset the stream will put in a batch.
	NextOffset int64
	// Stored is the acked next offset (what a restart resumes from); -1
	// when nothing is stored.
	Stored int64
	offsets.Bounds
	// Lag is HighWatermark - NextOffset, never negative; with no record
	// held, from Read instead: offsets read past NextOffset then hold no
	// record (transaction markers, aborted batches).
	Lag int64
	// Read is where the partition was read to when it holds no record
	// read ahead (at least NextOffset), else NextOffset: what Lag counts
	// from (StatusLag).
	Read int64
	// Rate is records per second over the last few seconds.
	Rate    float64
	Paused  bool
	Errored bool
	// Corrupt is set while the partition is stopped at a record batch
	// that cannot be delivered (kafka.CorruptBatchError), at offset
	// CorruptAt: it reads nothing more until a seek.
	Corrupt    bool
	CorruptAt  int64
	Buffered   int
	LastRecord time.Time
	// Acked is the next offset after the last acked range: where the
	// partition's batches cut and not yet acked (waiting for a manual ack,
	// in processing, to re-deliver) start, else where its next range
	// starts. Ahead counts the records read past it: those of the batches
	// not yet acked and those held for the next batch (Buffered).
	Acked int64
	Ahead int64
}

// Progress is sent about once a second with every partition's status.
type Progress struct {
	Time       time.Time
	Partitions []PartitionStatus
	// Rate and ByteRate are the whole stream's records and bytes per second.
	Rate     float64
	ByteRate float64
	Paused   bool
	// Waiting is true when a planned batch waits for a manual ack.
	Waiting bool
}

// Ended is the last event before the channel closes.
type Ended struct {
	Reason  string // "until-end", "batches", "closed", "error"
	Batches int
	Records int64
	Err     error
}

func (*Started) event()    {}
func (*BatchEvent) event() {}
func (*Notice) event()     {}
func (*Progress) event()   {}
func (*Ended) event()      {}
