package tui

import (
	"context"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// Controls is what the keys do to the running stream; *consumer.Stream
// implements it. Calls may block until the stream's loop answers, so the
// UI makes them from tea.Cmds, never from Update. A source without
// controls (kbatch spark: the batches are Spark's) passes nil, and the
// keys that would use them say the view is read-only.
type Controls interface {
	PauseAll() error
	ResumeAll() error
	Pause(p offsets.Partition) error
	Resume(p offsets.Partition) error
	// Seek moves p to where spec resolves and returns that offset.
	Seek(p offsets.Partition, spec offsets.Spec) (int64, error)
	// Ack acks the batch waiting for a manual ack.
	Ack(id uint64) error
	// CutNow cuts the next batch without waiting for the interval.
	CutNow() error
}

// EventSource is the stream's event channel, closed after *consumer.Ended.
type EventSource interface {
	Events() <-chan consumer.Event
}

// Stream is what Run needs of a running source of events:
// *consumer.Stream and *sparkwatch.Watch implement it.
type Stream interface {
	EventSource
	// Close stops the stream cleanly (the batch being processed is acked,
	// a batch waiting for a manual ack stays planned).
	Close() error
}

// ReplayTask is one partition's exact range as a replay will read it.
type ReplayTask struct {
	// Spec is the RANGE text the task came from.
	Spec string
	// Range is what will be read: [From, Until), capped at the end of the
	// log and raised to the log start.
	Range offsets.Range
	// Missing is the part of the requested range below the log start
	// (deleted by retention); empty when nothing is missing.
	Missing offsets.Range
	// Capped is set when the requested Until was beyond the end of the log.
	Capped bool
}

// ReplayChunk is a piece of a replay's output: records of one task in
// offset order and that task's position (next offset) after them.
type ReplayChunk struct {
	Task    int
	Records []*krecord.Record
	Next    int64
}

// Replayer reads exact ranges for the replay view (docs/design.md §2.10: it never
// moves a stream's stored positions). The replay package provides it
// through a small adapter wired in main.
type Replayer interface {
	// Plan resolves RANGE texts (TOPIC:PARTITIONS:FROM-UNTIL, docs/design.md §3)
	// against the cluster. Bad input is an *offsets.UsageError whose text
	// the form shows as it is.
	Plan(ctx context.Context, ranges []string) ([]ReplayTask, error)
	// Read reads the tasks and hands their records to emit, from one
	// goroutine at a time, in offset order per task. It returns nil when
	// every task reached its Until, or the error that stopped it (ctx's,
	// emit's or the cluster's). Records may be kept after emit returns.
	Read(ctx context.Context, tasks []ReplayTask, emit func(ReplayChunk) error) error
}
