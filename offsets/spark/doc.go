// Package spark reads Spark Structured Streaming checkpoints written for the
// Kafka source, and writes Spark's startingOffsets / endingOffsets option
// JSON.
//
// A checkpoint directory holds metadata (the query id), offsets/<N> (the
// write-ahead log: the exclusive end offsets of micro-batch N, written before
// the batch runs), commits/<N> (written after batch N's output was committed)
// and sources/<i>/0 (the Kafka source's initial offsets, where batch 0
// starts). The format is described in testdata/spark-checkpoint/FORMAT.md.
//
// Offsets in a checkpoint are next offsets: the offset of the next record to
// read, the same meaning as a Kafka consumer-group commit. The offsets a query
// last committed are therefore exactly where a direct consumer seeks to carry
// on (Checkpoint.CommittedOffsets).
//
// The package only ever reads the checkpoint directory: it creates, renames
// and modifies nothing, so it is safe to point at the checkpoint of a running
// query. Log versions newer than the ones Spark has released are rejected,
// as Spark itself rejects them, rather than guessed at.
//
// The parsers (ParseOffsetJSON, ParseOffsetLog, ParseCommitLog,
// ParseInitialOffsets) are pure functions over bytes; Open and the Checkpoint
// methods do the file I/O and put the file's path in every error.
package spark
