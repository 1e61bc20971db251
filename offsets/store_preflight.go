package offsets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// preflight walks the page tree of a bbolt file with bounds on everything
// it reads, before bbolt's own tx.Check runs on it. tx.Check trusts page
// headers: a damaged overflow count makes it loop billions of times (and
// fill a map as it goes), a page reached twice makes it recurse forever.
// preflight refuses such a file first, so the check that follows ends.
//
// It reads the file with ReadAt (nothing is mapped, so a damaged offset
// cannot fault), one page span at a time. What it checks, for the newest
// valid meta page and every page reachable from its root bucket and the
// freelist: the page id is below the high-water mark, the page and its
// overflow pages lie inside the file, each page is reached once, its type
// is a branch or leaf page, and its elements, keys and values lie inside
// the page; the freelist's ids lie inside its page and name only pages
// that are free. Nesting is bounded too (maxPreflightDepth).
//
// The layout it reads is bbolt's on-disk format (go.etcd.io/bbolt
// internal/common: page.go, meta.go), unchanged since bbolt 1.3.
func preflight(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return preflightAt(f, fi.Size())
}

// preflightAt is preflight over a file of size bytes read through r.
func preflightAt(r io.ReaderAt, size int64) error {
	w := &pageWalker{f: r, size: size, seen: map[uint64]bool{}}
	return w.run()
}

// Layout constants of bbolt's format.
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	boltPageHeader     = 16 // id u64, flags u16, count u16, overflow u32
	boltElementSize    = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	boltMetaSize       = 64 // magic, version, pageSize, flags u32; root, seq, freelist, pgid, txid, checksum u64
	boltBranchPage     = 0x01
	boltLeafPage       = 0x02
	boltFreelistPage   = 0x10
	boltBucketLeaf     = 0x01
	boltNoFreelist     = ^uint64(0)
	boltBucketHeader   = 16 // root u64, sequence u64
	maxPreflightDepth  = 64
	minBoltPageSize    = 512
	maxBoltPageSize    = 1 << 20
	boltFreelistNoSize = 0xFFFF
)

var errPreflight = errors.New("damaged page tree")

type pageWalker struct {
	f        io.ReaderAt
	size     int64
	pageSize uint64
	hwm      uint64 // pages below it are in use or free
	seen     map[uint64]bool
	// bufs[d] holds the page read at depth d (bufs[0] also the
	// freelist): a page is dropped before another at its depth is read,
	// so the walk reuses one buffer per depth rather than allocating the
	// whole file again.
	bufs [maxPreflightDepth + 2][]byte
}

func (w *pageWalker) fail(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errPreflight, fmt.Sprintf(format, args...))
}

func (w *pageWalker) run() error {
	root, freelist, err := w.meta()
	if err != nil {
		return err
	}
	var free []uint64
	if freelist != boltNoFreelist {
		p, err := w.span(freelist, boltFreelistPage, 0)
		if err != nil {
			return err
		}
		if free, err = w.freeIDs(p, freelist); err != nil {
			return err
		}
	}
	if err := w.walk(root, 0); err != nil {
		return err
	}
	return w.checkFree(free)
}

// freeIDs reads the page ids the freelist page p (id) lists, after
// checking that they lie inside its span: bbolt reads as many ids as the
// page's count says (with the count 0xFFFF, as many as its first element
// says) through its memory map, so a count past the span faults there.
func (w *pageWalker) freeIDs(p []byte, id uint64) ([]uint64, error) {
	le := binary.LittleEndian
	count, first := uint64(le.Uint16(p[10:])), uint64(0)
	room := uint64(len(p)-boltPageHeader) / 8
	if count == boltFreelistNoSize {
		if room == 0 {
			return nil, w.fail("freelist page %d has no room for its count", id)
		}
		count, first = le.Uint64(p[boltPageHeader:]), 1
	}
	if count > room-first {
		return nil, w.fail("freelist page %d lists %d pages, more than fit in it", id, count)
	}
	ids := make([]uint64, count)
	for i := range ids {
		ids[i] = le.Uint64(p[boltPageHeader+8*(first+uint64(i)):])
	}
	return ids, nil
}

// checkFree checks the free page ids against the walked tree: each lies
// inside the high-water mark, is listed once and is not a page the tree
// uses. bbolt hands free pages to the next write, so a live page listed
// as free would be overwritten with other data.
func (w *pageWalker) checkFree(ids []uint64) error {
	listed := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		switch {
		case id < 2 || id >= w.hwm:
			return w.fail("the freelist lists page %d, outside the file (high-water mark %d)", id, w.hwm)
		case listed[id]:
			return w.fail("the freelist lists page %d twice", id)
		case w.seen[id]:
			return w.fail("the freelist lists page %d, which is in use", id)
		}
		listed[id] = true
	}
	return nil
}

// meta reads both meta pages and takes the valid one with the higher
// transaction id, as bbolt does.
func (w *pageWalker) meta() (root, freelist uint64, err error) {
	best, err := w.newestMeta()
	if err != nil {
		return 0, 0, err
	}
	le := binary.LittleEndian
	w.hwm = le.Uint64(best[40:])
	if w.hwm < 2 || w.hwm > uint64(w.size)/w.pageSize {
		return 0, 0, w.fail("high-water mark %d pages for a file of %d bytes", w.hwm, w.size)
	}
	return le.Uint64(best[16:]), le.Uint64(best[32:]), nil
}

// newestMeta is the valid meta page (its 64 bytes) with the higher
// transaction id; it sets w.pageSize.
func (w *pageWalker) newestMeta() ([]byte, error) {
	var best []byte
	var bestTx uint64
	// Meta 1 is one page after meta 0, at the page size meta 0 names; when
	// meta 0 is damaged (a torn write), at one of the usual page sizes.
	offsets := []int64{0, 4096, int64(os.Getpagesize()), 8192, 16384, 65536}
	for i, off := range offsets {
		if i > 0 && w.pageSize != 0 {
			off = int64(w.pageSize)
		}
		if i > 1 && w.pageSize != 0 {
			break
		}
		m := make([]byte, boltMetaSize)
		if _, err := w.f.ReadAt(m, off+boltPageHeader); err != nil {
			continue
		}
		le := binary.LittleEndian
		h := fnv.New64a()
		h.Write(m[:56])
		if le.Uint32(m[0:]) != boltMagic || le.Uint32(m[4:]) != boltVersion || h.Sum64() != le.Uint64(m[56:]) {
			continue
		}
		ps := uint64(le.Uint32(m[8:]))
		if ps < minBoltPageSize || ps > maxBoltPageSize || ps&(ps-1) != 0 {
			continue
		}
		if off != 0 && uint64(off) != ps {
			continue // not where this meta's page size puts meta 1
		}
		if w.pageSize == 0 {
			w.pageSize = ps
		}
		if tx := le.Uint64(m[48:]); best == nil || tx > bestTx {
			best, bestTx = m, tx
		}
	}
	if best == nil {
		return nil, w.fail("no valid meta page")
	}
	return best, nil
}

// span reads page id and its overflow pages, after checking its header
// against the file: its own id, the wanted type, and the span inside the
// high-water mark. Each page may be read once.
func (w *pageWalker) span(id uint64, flags uint16, depth int) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, w.fail("page %d is outside the file (high-water mark %d)", id, w.hwm)
	}
	if w.seen[id] {
		return nil, w.fail("page %d is reached twice", id)
	}
	w.seen[id] = true
	hdr := make([]byte, boltPageHeader)
	if _, err := w.f.ReadAt(hdr, int64(id*w.pageSize)); err != nil {
		return nil, w.fail("page %d cannot be read: %v", id, err)
	}
	le := binary.LittleEndian
	overflow := uint64(le.Uint32(hdr[12:]))
	switch {
	case le.Uint64(hdr[0:]) != id:
		return nil, w.fail("page %d says it is page %d", id, le.Uint64(hdr[0:]))
	case le.Uint16(hdr[8:]) != flags && !(flags == boltBranchPage && le.Uint16(hdr[8:]) == boltLeafPage):
		return nil, w.fail("page %d has type %#x", id, le.Uint16(hdr[8:]))
	case id+overflow >= w.hwm:
		return nil, w.fail("page %d claims %d overflow pages, past the high-water mark %d", id, overflow, w.hwm)
	}
	for i := uint64(1); i <= overflow; i++ {
		if w.seen[id+i] {
			return nil, w.fail("page %d overlaps page %d", id, id+i)
		}
		w.seen[id+i] = true
	}
	n := int((overflow + 1) * w.pageSize)
	if cap(w.bufs[depth]) < n {
		w.bufs[depth] = make([]byte, n)
	}
	b := w.bufs[depth][:n]
	if _, err := w.f.ReadAt(b, int64(id*w.pageSize)); err != nil {
		return nil, w.fail("page %d cannot be read: %v", id, err)
	}
	return b, nil
}

// walk checks the branch or leaf page id and what it leads to: child
// pages, and the root pages of the buckets it holds.
func (w *pageWalker) walk(id uint64, depth int) error {
	if depth > maxPreflightDepth {
		return w.fail("pages nested deeper than %d", maxPreflightDepth)
	}
	p, err := w.span(id, boltBranchPage, depth) // a branch or a leaf page
	if err != nil {
		return err
	}
	return w.elements(p, id, depth)
}

// elements checks the elements of the page p (a page span, or an inline
// bucket's page) and walks the pages they point to.
func (w *pageWalker) elements(p []byte, id uint64, depth int) error {
	le := binary.LittleEndian
	flags, count := le.Uint16(p[8:]), uint64(le.Uint16(p[10:]))
	if boltPageHeader+count*boltElementSize > uint64(len(p)) {
		return w.fail("page %d: %d elements do not fit", id, count)
	}
	var prev []byte
	for i := range count {
		at := boltPageHeader + i*boltElementSize
		e := p[at : at+boltElementSize]
		switch flags {
		case boltBranchPage:
			pos, ksize := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:]))
			if at+pos+ksize > uint64(len(p)) {
				return w.fail("page %d: element %d's key is outside the page", id, i)
			}
			if err := w.after(prev, p[at+pos:at+pos+ksize], id, i); err != nil {
				return err
			}
			prev = p[at+pos : at+pos+ksize]
			if err := w.walk(le.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
		case boltLeafPage:
			eflags, pos := le.Uint32(e[0:]), uint64(le.Uint32(e[4:]))
			ksize, vsize := uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
			if at+pos+ksize+vsize > uint64(len(p)) {
				return w.fail("page %d: element %d is outside the page", id, i)
			}
			if err := w.after(prev, p[at+pos:at+pos+ksize], id, i); err != nil {
				return err
			}
			prev = p[at+pos : at+pos+ksize]
			if eflags&boltBucketLeaf == 0 {
				continue
			}
			v := p[at+pos+ksize : at+pos+ksize+vsize]
			if len(v) < boltBucketHeader {
				return w.fail("page %d: element %d is a bucket without a header", id, i)
			}
			if root := le.Uint64(v); root != 0 {
				if err := w.walk(root, depth+1); err != nil {
					return err
				}
				continue
			}
			inline := v[boltBucketHeader:]
			if len(inline) < boltPageHeader || le.Uint16(inline[8:]) != boltLeafPage {
				return w.fail("page %d: element %d is an inline bucket without a leaf page", id, i)
			}
			if depth+1 > maxPreflightDepth {
				return w.fail("pages nested deeper than %d", maxPreflightDepth)
			}
			if err := w.elements(inline, id, depth+1); err != nil {
				return err
			}
		default:
			return w.fail("page %d has type %#x", id, flags)
		}
	}
	return nil
}

// after checks that key, element i of page id, sorts after prev, the key
// of the element before it (nil for the first): an element whose position
// was changed reads another element's key and value, each intact, and
// would hide the entry it held. bbolt's own check sees that only in a
// writable open; this walk runs for every open.
func (w *pageWalker) after(prev, key []byte, id, i uint64) error {
	if i > 0 && bytes.Compare(prev, key) >= 0 {
		return w.fail("page %d: element %d's key does not sort after the one before", id, i)
	}
	return nil
}
