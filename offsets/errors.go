package offsets

import "errors"

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
	// ErrReadOnly: a write was attempted on a store opened read-only.
	ErrReadOnly = errors.New("store is read-only")
	// ErrUnknownStream: a write named a stream EnsureStream never created.
	ErrUnknownStream = errors.New("unknown stream")
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
