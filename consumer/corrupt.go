package consumer

import (
	"fmt"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// CorruptError ends a stream that stopped by itself (Config.UntilEnd or
// MaxBatches) while a partition was stopped at a record batch that cannot
// be delivered: the range asked for was not read whole. Its Error is one
// line naming the partition, the batch's offset and what is wrong.
type CorruptError struct {
	Partition offsets.Partition
	Batch     *kafka.CorruptBatchError
	// Others counts the other partitions so stopped.
	Others int
}

func (e *CorruptError) Error() string {
	msg := fmt.Sprintf("%s: %v; seek past it to read on (-o %s:%d=OFFSET)", e.Partition, e.Batch, e.Partition.Topic, e.Partition.Partition)
	if e.Others > 0 {
		msg += fmt.Sprintf("; %d more partition%s stopped at a corrupt batch", e.Others, map[bool]string{true: "s"}[e.Others > 1])
	}
	return msg
}

func (e *CorruptError) Unwrap() error { return e.Batch }
