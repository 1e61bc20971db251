package offsets

import (
	"errors"
	"fmt"

	"github.com/kbatch-dev/kbatch/record"
)

// UsageError is a mistake in what the user typed: a bad offset SPEC, an
// unknown topic or partition, a partition left uncovered under
// --strict-offsets. main maps it to exit code 2; its Msg is one line that
// names the bad part.
type UsageError struct{ Msg string }

// Error returns Msg.
func (e *UsageError) Error() string { return e.Msg }

// Errors a Store returns, for errors.Is. The error values themselves carry
// the file name and what to do; these only classify them.
var (
	// ErrLocked: another process holds the store file open for writing.
	ErrLocked = errors.New("store is in use")
	// ErrCorrupt: the file is not a bbolt file, or is damaged.
	ErrCorrupt = errors.New("store is damaged or not a bbolt file")
	// ErrForeign: the file is a bbolt database that kbatch did not create.
	ErrForeign = errors.New("store is not a kbatch store")
	// ErrSchema: the file was written by a newer kbatch.
	ErrSchema = errors.New("store has a newer schema")
	// ErrReadOnly: a write was attempted on a store opened read-only, or
	// a writable open of a file that can be read but not written (its
	// mode, a read-only file system).
	ErrReadOnly = errors.New("store is read-only")
	// ErrUnknownStream: a write named a stream EnsureStream never created.
	ErrUnknownStream = errors.New("unknown stream")
	// ErrChecksum: a value of a stream fails its checksum (ChecksumError):
	// the store was changed outside kbatch.
	ErrChecksum = errors.New("store value fails its checksum")
	// ErrBatchOrder: Plan or Ack was called with a batch id that does not
	// follow the stream's batch log.
	ErrBatchOrder = errors.New("batch out of order")
)

// StoreError is an error about a store file as a whole (opening, locking,
// schema). Error is one line naming the file and what to do; errors.Is
// matches Kind (one of the Err values above) and the underlying cause.
type StoreError struct {
	Path  string
	Kind  error
	Msg   string // what went wrong, after "store PATH "
	Cause error  // the bbolt or OS error, if any
}

// Error renders "store PATH MSG".
func (e *StoreError) Error() string { return "store " + e.Path + " " + e.Msg }

// Unwrap returns Kind and Cause so errors.Is sees both.
func (e *StoreError) Unwrap() []error {
	errs := make([]error, 0, 2)
	for _, err := range []error{e.Kind, e.Cause} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// ChecksumError is a value of a stream whose seal (store_seal.go) does not
// hold: a byte of it, of its key or of the stream's name changed outside
// kbatch. Such a value is never used. Error is one line that follows
// "store PATH: stream NAME: " and says what to do; errors.Is matches
// ErrChecksum.
type ChecksumError struct {
	Stream string
	// What names the value: "batch 17", "event 40", "the stream's record";
	// empty for a partition's next offset or jump mark (Partition).
	What      string
	Partition Partition
	// Mark is set when the partition's jump mark (why its next offset
	// moved without an ack) fails its checksum, not the offset itself.
	Mark bool
	// Stored is the next offset as it reads now; -1 when it does not read
	// as one.
	Stored int64
	// AckedBatch is the newest acked batch in the log with a range of
	// Partition, and AckedUntil where that range ends (the next offset
	// its ack stored); AckedBatch is 0 when the log has none.
	AckedBatch uint64
	AckedUntil int64
}

// Error renders the one line.
func (e *ChecksumError) Error() string {
	if e.What != "" {
		return e.What + " fails its checksum: the store was changed outside kbatch; move it away (its streams restart per --reset) or pass --store to use another file"
	}
	stored := "does not read as an offset"
	if e.Stored >= 0 {
		stored = fmt.Sprintf("is %d", e.Stored)
	}
	acked := "no acked batch in the log has a range of it"
	if e.AckedBatch > 0 {
		acked = fmt.Sprintf("the last acked batch with it (%d) ends at %d", e.AckedBatch, e.AckedUntil)
	}
	what := "the stored next offset of " + SafeName(e.Partition.String()) + " " + stored + " but fails its checksum"
	if e.Mark {
		what = "the jump mark of " + SafeName(e.Partition.String()) + " fails its checksum (its next offset " + stored + ")"
	}
	return fmt.Sprintf("%s; %s: the store was changed outside kbatch. "+
		"Store the right one with kbatch offsets set --name %s '%s:%d=OFFSET', or pass --store to use another file",
		what, acked, SafeName(e.Stream), record.String(e.Partition.Topic), e.Partition.Partition)
}

// Unwrap returns ErrChecksum.
func (e *ChecksumError) Unwrap() error { return ErrChecksum }
