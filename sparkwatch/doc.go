// Package sparkwatch is the live view of a Spark Structured Streaming
// query's checkpoint (kbatch spark): it polls the checkpoint folder
// (offsets/spark reads its files; the folder is only ever read) and
// reports the query's Kafka batches with the stream's event types
// (package consumer), so the same screen and JSON lines show them. With a
// cluster it adds lag from the partitions' bounds and reads sample records
// of each batch with package replay.
//
// A Watch has no controls: the batches are Spark's, so kbatch can neither
// pause, seek nor ack them; the screen shows it read-only.
package sparkwatch
