package replay

import (
	"context"
	"sync"
)

// buffered bounds what the partition readers have decoded and Run has not
// yet written, over all readers: before a fetch a reader reserves what it
// expects the answer to take in memory (the last answer's, as a
// partition's record batches are alike), and fetches once that fits
// under the limit or nothing else is buffered. So memory stays within the
// limit, or one answer when a single record batch takes more, whatever
// the records' compression ratio (docs/design.md §2.6). A reader settles its
// reservation to what the answer took; Run releases that once written
// (or dropped).
type buffered struct {
	mu      sync.Mutex
	held    int64
	limit   int64
	waiting int           // readers in reserve, for tests
	freed   chan struct{} // closed and replaced at each release
}

func newBuffered(limit int64) *buffered {
	return &buffered{limit: max(limit, 1), freed: make(chan struct{})}
}

// reserve waits until n more bytes fit under the limit, or nothing is
// buffered (an answer larger than the limit is read alone), then counts
// them; else it returns ctx's error, counting nothing.
func (b *buffered) reserve(ctx context.Context, n int64) error {
	for {
		b.mu.Lock()
		if b.held == 0 || b.held+n <= b.limit {
			b.held += n
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		b.waiting++
		b.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
		}
		b.mu.Lock()
		b.waiting--
		b.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// settle replaces a reservation of reserved bytes by the used bytes an
// answer took, about to be handed to Run.
func (b *buffered) settle(reserved, used int64) {
	if used >= reserved {
		b.mu.Lock()
		b.held += used - reserved
		b.mu.Unlock()
		return
	}
	b.release(reserved - used)
}

// release uncounts n bytes Run is done with and wakes the waiting readers.
func (b *buffered) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// state reports what is buffered and how many readers wait.
func (b *buffered) state() (held int64, waiting int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held, b.waiting
}
