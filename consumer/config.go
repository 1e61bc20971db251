package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// Processor handles a batch's records before the batch is acked: the
// --sink writer is one. If Process returns an error the batch stays
// planned and the stream ends with that error; the next start re-delivers
// it. records are only valid during the call.
type Processor interface {
	Process(ctx context.Context, b *Batch, records []*record.Record) error
}

// Tap sees every record as it is read, before it is in a batch: the
// screen's tail view. Read is called on the stream's loop goroutine with
// each chunk of one partition's records in offset order, so it must
// return at once (copy what it keeps, or drop it); the records share
// memory with their fetch answer and go on into a batch: Read must not
// keep or change them.
type Tap interface {
	Read(records []*record.Record)
}

// Store is what the stream needs of the offsets store; *offsets.Store
// implements it. A nil Store means nothing is written (--no-store).
type Store interface {
	Stream(name string) (offsets.StreamInfo, bool, error)
	EnsureStreamOn(name, clusterID string, brokers, topics []string, topicIDs map[string]string) error
	Plan(stream string, b offsets.Batch) error
	Ack(stream string, id uint64, at time.Time) error
	AckAndPlan(stream string, id uint64, at time.Time, next offsets.Batch) error
	Pending(stream string) (*offsets.Batch, error)
	AddEvent(stream string, e offsets.Event) error
	AddEvents(stream string, es []offsets.Event) error
	SetNext(stream string, next map[offsets.Partition]int64, e offsets.Event) error
	SetStarts(stream string, next map[offsets.Partition]int64, jumps map[offsets.Partition]string, e offsets.Event) error
	SeekAll(stream string, moves []offsets.SeekMove) error
	ResetSeeks(stream string, pending *offsets.Batch) error
	DropPending(stream string, id uint64, e offsets.Event) error
}

// Config is a stream's configuration. Client is owned by the caller and
// must outlive the stream.
type Config struct {
	Client  *kafka.Client
	Brokers []string
	Topics  []string
	// Name is the stream's name in the store.
	Name string
	// NameExplicit says the user named the stream (--name): then a stored
	// stream of that name is taken over even when it was made on another
	// cluster or for other topics, with a stream-changed event. Otherwise
	// (a name derived from the topics) that is refused.
	NameExplicit bool

	Explicit []offsets.Spec
	// Imported, if set, replaces stored offsets as the fallback after
	// explicit ones (source "import", e.g. --from-spark).
	Imported map[offsets.Partition]int64
	Reset    offsets.Reset
	Strict   bool

	FailOnDataLoss bool

	Interval        time.Duration // default 1s
	MaxPerPartition int           // default 10000
	// MaxBatchBytes bounds a batch's records (keys, values, headers) so
	// memory stays bounded with large records or many partitions: a
	// partition counts as full for a catch-up batch once it holds its
	// share of it (at least 1 MiB), or once the read-ahead, twice as
	// much, is spent for it. Default 8 MiB: a batch in processing and the read-ahead then
	// stay inside kbatch's 64 MiB heap target (records take about twice
	// their bytes in memory); a larger budget makes the GC run without
	// pause on wide topics.
	MaxBatchBytes int64
	Samples       int // sample records kept per partition per batch
	ManualAck     bool

	// UntilEnd stops the stream once every partition reached the high
	// watermark it had at start; MaxBatches stops it after that many
	// acked batches (0: no limit).
	UntilEnd   bool
	MaxBatches int

	Store     Store
	Processor Processor
	// GroupCommit, if set, gets the acked next offsets after each acked
	// batch (--commit-group, groupcommit.go); GroupRetry is the first
	// wait after a failed commit (default 1s, doubling to 30s).
	GroupCommit GroupCommitter
	GroupRetry  time.Duration
	// Tap, if set, sees every record as it is read (the screen's tail
	// view); nil costs nothing.
	Tap Tap
	// SampleGate, if set, bounds the samples sent and not yet taken by
	// the receiver of the events (samples.go); nil: every batch has its
	// Samples.
	SampleGate SampleGate

	// MetadataInterval is how often log starts are refreshed and new
	// partitions looked for; default 5s.
	MetadataInterval time.Duration
	// IdleDone is how often, at most, the stream asks the broker whether
	// an idle partition's offsets up to a target (--until-end, a
	// re-delivered range) hold any record at all (they may be only
	// transaction markers or compacted away); default 500ms.
	IdleDone time.Duration
	// Events is the capacity of the event channel; default 64.
	Events int
	// Log, if set, receives the stream's debug log (watch --log): fetches,
	// starts, batches processed, store writes. See debuglog.go for what
	// it holds and never holds.
	Log *slog.Logger
}

// MaxSamples caps Config.Samples (--samples): samples are copies kept for
// every partition of every batch a screen keeps in its history, so memory
// must not grow with the flag (docs/design.md §2.6).
const MaxSamples = 1000

func (c *Config) defaults() error {
	if c.Client == nil {
		return errors.New("consumer: no client")
	}
	if len(c.Topics) == 0 {
		return &offsets.UsageError{Msg: "no topic: pass -t TOPIC"}
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Interval < 0 {
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --interval %s: must be positive", c.Interval)}
	}
	if c.MaxPerPartition == 0 {
		c.MaxPerPartition = 10000
	}
	if c.MaxPerPartition < 0 {
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --max-per-partition %d: must be positive", c.MaxPerPartition)}
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = 8 << 20
	}
	if c.Samples < 0 || c.Samples > MaxSamples {
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --samples %d: must be 0 to %d", c.Samples, MaxSamples)}
	}
	if c.Reset == "" {
		c.Reset = offsets.ResetLatest
	}
	if c.MetadataInterval == 0 {
		c.MetadataInterval = 5 * time.Second
	}
	if c.IdleDone == 0 {
		c.IdleDone = 500 * time.Millisecond
	}
	if c.Events == 0 {
		c.Events = 64
	}
	return nil
}
