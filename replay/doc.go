// Package replay reads exact offset ranges of Kafka partitions and writes
// their records to a sink: JSON lines (docs/design.md §4) or another topic.
//
// A replay is three steps, each usable alone:
//
//   - ParseRange turns a RANGE argument (TOPIC:PARTITIONS:FROM-UNTIL) into
//     a RangeSpec, without touching the cluster.
//   - Plan resolves RangeSpecs against the cluster into one Task per
//     partition: exact [From, Until) offsets, capped at the end of the log
//     seen at that moment, raised to the log start (the offsets below it
//     are reported as missing). Unknown topics and partitions and ranges
//     that run backwards are usage errors, found before anything is read.
//   - Run reads the tasks concurrently and hands their records, in offset
//     order per partition, to a Sink, then closes or aborts the sink.
//
// A partition is read until its position (the next offset to read) reaches
// Until, whatever offsets inside or at the end of the range hold no record
// (compaction, transaction markers, aborted transactions): positions come
// from the record batches the broker returns, never from the last record
// seen, so a range ending on a commit marker ends.
//
// Replay never reads or writes the offsets store and never joins a
// consumer group (docs/design.md §2.10).
package replay
