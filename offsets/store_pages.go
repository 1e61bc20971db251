package offsets

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// releaseEvery is the shortest time between two releases of the file
// pages a writable store's transactions have read (releasePages).
const releaseEvery = 30 * time.Second

// releasePages drops this process's mapping of the store file's pages, at
// most once per s.releaseEvery (every time when it is 0). It runs after a
// successful Ack or AckAndPlan, and once after Open; pages read while no
// batch is acked stay mapped until the next ack.
//
// bbolt reads the file through a shared read-only memory map, and a page a
// transaction has read stays mapped, counted in the process's RSS, until
// the kernel needs the memory back. Each batch's plan and ack write new
// pages and the next transactions read them, and the log reuses the pages
// of the batches it prunes, so a long watch ended up with the whole file
// mapped: up to the batch log's cap, tens of MiB on a wide stream, most of
// which it seldom reads again. Open's check reads all of it at once. The
// pages stay in the kernel's page cache while it has room; a transaction
// that reads one again maps it again.
//
// What makes this safe: the range released, [Data, Data+tx.Size()), lies
// inside bbolt's shared file mapping. tx.Size() is the transaction's high
// water mark, and bbolt grows the map before any page past it is used (the
// map only grows); Open's preflight has checked the mark against the file.
// Inside a read transaction bbolt cannot remap (a remap waits for every
// read transaction to end), so Data stays the map's address. Dropping a
// shared file mapping's pages loses nothing: bbolt writes with pwrite,
// never through the map, and a later read faults the same bytes back in.
func (s *Store) releasePages() {
	if s.readOnly {
		return
	}
	if s.folder != nil {
		s.folder.releasePages()
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
	_ = s.db.View(func(tx *bolt.Tx) error {
		return dropMapped(s.db.Info().Data, tx.Size())
	})
}
