package offsets

import (
	"encoding/binary"
	"hash/fnv"
	"os"
)

// boltMetaPage is the type flag of a meta page.
const boltMetaPage = 0x04

// repairMeta makes both meta pages valid when one is damaged and the other
// is not. bbolt keeps two meta pages and reads the valid one with the
// higher transaction id, so a damaged one (a torn write, a stray byte)
// loses nothing; but its check (tx.Check) asserts that pages 0 and 1 are
// meta pages and panics on one that is not. repairMeta writes the meta
// page bbolt reads (its header id fixed) over the damaged one, which is
// what bbolt's next commit would write there. It runs after preflight
// checked the tree that meta page leads to, under the writer's lock. It
// returns which page it repaired, -1 for none.
func repairMeta(path string) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return -1, err
	}
	w := &pageWalker{f: f, size: fi.Size(), seen: map[uint64]bool{}}
	best, err := w.newestMeta()
	if err != nil {
		return -1, err
	}
	ps := int64(w.pageSize)
	damaged := -1
	for slot := range int64(2) {
		page := make([]byte, boltPageHeader+boltMetaSize)
		if _, err := f.ReadAt(page, slot*ps); err != nil {
			return -1, err
		}
		le := binary.LittleEndian
		if le.Uint64(page[0:]) == uint64(slot) && le.Uint16(page[8:]) == boltMetaPage && validMeta(page[boltPageHeader:], uint64(ps)) {
			continue
		}
		if damaged >= 0 {
			return -1, w.fail("both meta pages are damaged")
		}
		damaged = int(slot)
	}
	if damaged < 0 {
		return -1, nil
	}
	page := make([]byte, boltPageHeader, boltPageHeader+boltMetaSize)
	binary.LittleEndian.PutUint64(page[0:], uint64(damaged))
	binary.LittleEndian.PutUint16(page[8:], boltMetaPage)
	page = append(page, best...)
	if _, err := f.WriteAt(page, int64(damaged)*ps); err != nil {
		return -1, err
	}
	return damaged, f.Sync()
}

// validMeta reports whether m (a meta page's 64 bytes) has bbolt's magic,
// version and checksum, and the page size ps.
func validMeta(m []byte, ps uint64) bool {
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(m[:56])
	return le.Uint32(m[0:]) == boltMagic && le.Uint32(m[4:]) == boltVersion && h.Sum64() == le.Uint64(m[56:]) &&
		uint64(le.Uint32(m[8:])) == ps
}
