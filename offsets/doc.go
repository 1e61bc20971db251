// Package offsets is kbatch's offset model and its store.
//
// The model is plain values and pure functions: a Partition, a half-open
// Range [From, Until), the next offset a partition starts at and why
// (Source), offset SPECs as typed on the command line, and start resolution
// (explicit → stored → reset, per partition). Nothing in the model does I/O;
// callers fetch log starts, high watermarks and timestamp lookups and pass
// the results in.
//
// The Store is the only place in kbatch that touches bbolt. It keeps, per
// named stream, the next offsets, a write-ahead batch log (planned, then
// acked) and an event log: all streams in one file (Open), or one file per
// stream in a folder (OpenFolder, kbatch's default store), so that
// processes writing different streams do not lock each other out.
package offsets
