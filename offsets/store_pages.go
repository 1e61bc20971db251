package offsets

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// releaseEvery is how often a writable store lets go of the file pages its
// transactions have read (releasePages).
const releaseEvery = 30 * time.Second

// releasePages drops this process's mapping of the store file's pages, at
// most once per s.releaseEvery (every time when it is 0).
//
// bbolt reads the file through a shared read-only memory map, and a page a
// transaction has read stays mapped, counted in the process's RSS, until
// the kernel needs the memory back. Each batch's plan and ack write new
// pages and the next transactions read them, and the log reuses the pages
// of the batches it prunes, so a long watch ends up with the whole file
// mapped: up to the batch log's cap (tens of MiB on a wide stream), none of
// which it reads again. Open's check reads all of it at once. The pages
// stay in the kernel's page cache; a transaction that reads one again maps
// it again (a minor fault). Data is never at stake: bbolt writes with
// pwrite, never through the map, and the map is the file's.
func (s *Store) releasePages() {
	if s.readOnly {
		return
	}
	now := time.Now()
	s.mu.Lock()
	due := now.Sub(s.releasedAt) >= s.releaseEvery
	if due {
		s.releasedAt = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	// Inside a read transaction bbolt cannot remap the file (a remap waits
	// for every transaction to end), so the address and size stay valid.
	_ = s.db.View(func(tx *bolt.Tx) error {
		return dropMapped(s.db.Info().Data, tx.Size())
	})
}
