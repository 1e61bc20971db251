package offsets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editedStore fills a store with three streams (batches acked, one
// pending, events, a seek kept past a pending batch, a partition moved by
// offsets set, a topic id, a start choice) and returns what a start reads
// of it before and after its last transaction.
func editedStore(t *testing.T, path string) (prev, last string) {
	t.Helper()
	s := mustOpen(t, path)
	for i, name := range []string{"events", "orders", "audit"} {
		must(t, s.EnsureStreamOn(name, "cluster-1", []string{"k:9092"}, []string{"events"}, map[string]string{"events": "id-1"}))
		for id := uint64(1); id <= uint64(4+i); id++ {
			must(t, s.Plan(name, testBatch(id, 3+i, int64(id-1)*10)))
			must(t, s.Ack(name, id, testNow))
		}
		must(t, s.SetNext(name, map[Partition]int64{ev(1): 1017}, NewEvent(testNow, CodeSet, ev(1), "offsets set")))
		must(t, s.SetStartChoice(name, "resume"))
	}
	// A wide stream: its next offsets fill two leaf pages under a
	// branch page, and its batch of 150 ranges takes overflow pages.
	must(t, s.EnsureStream("wide", []string{"k:9092"}, []string{"events"}))
	must(t, s.Plan("wide", testBatch(1, 150, 0)))
	must(t, s.Ack("wide", 1, testNow))
	must(t, s.Plan("orders", testBatch(6, 4, 50)))
	must(t, s.Seek("orders", ev(2), 7, 6, NewEvent(testNow, CodeSeek, ev(2), "seek")))
	must(t, s.Plan("audit", testBatch(7, 5, 60)))
	_ = s.Close()
	return statesAroundAck(t, path, "audit", 7)
}

// editStride samples the bytes TestEditedStoreBytes edits past the meta
// pages and page headers (all of which it edits): every editStride-th
// byte, about 6,400 opens. KBATCH_STORE_EDITS=all edits every byte
// (30,000 opens, about 70 s without -race), and with
// KBATCH_STORE_EDITS_RO=1 each file is opened read-only (offsets show)
// instead; both passed on the final code.
const editStride = 5

// TestEditedStoreBytes edits the store's bytes one at a time (XOR 0xFF,
// +1 or -1 by turns, on every page bbolt uses: meta pages, the freelist, branch and
// leaf pages, with inline buckets) and opens each edited file as a watch
// does (writable), then reads what a start reads. Each must either read
// exactly the positions of the file as written (or, for an edit of a meta
// page, of the transaction before, which bbolt's other meta page names: a
// crash's re-delivery), or refuse with one line — never a panic, never
// other positions.
func TestEditedStoreBytes(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	prev, want := editedStore(t, clean)
	orig := readBytes(t, clean)
	pageSize := 4096
	path := filepath.Join(dir, "edited.db")
	same, refused := 0, 0
	used, types := usedBytes(orig, pageSize)
	for _, typ := range []string{"meta", "freelist", "branch", "leaf", "overflow"} {
		if types[typ] == 0 {
			t.Fatalf("the store has no %s page: the edits would not cover that page type", typ)
		}
	}
	t.Logf("pages: %v", types)
	stride := editStride
	if os.Getenv("KBATCH_STORE_EDITS") == "all" {
		stride = 1
	}
	for i := range orig {
		if !used[i] || (i >= 2*pageSize && i%pageSize >= boltPageHeader && i%stride != 0) {
			continue
		}
		b := append([]byte(nil), orig...)
		switch i % 3 { // three kinds of edit, in turn
		case 0:
			b[i] ^= 0xFF
		case 1:
			b[i]++
		case 2:
			b[i]-- // a schema "2" read as "1", an offset one lower
		}
		writeBytes(t, path, b)
		got, err := openAndStart(path)
		if err != nil {
			refused++
			if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
				t.Errorf("byte %d (page %d): refused with %q; want one line without a panic", i, i/pageSize, msg)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrForeign) && !errors.Is(err, ErrSchema) {
				t.Errorf("byte %d (page %d): refused with %v, not a store error", i, i/pageSize, err)
			}
			continue
		}
		if got == want || (i < 2*pageSize && got == prev) {
			same++
			continue
		}
		t.Errorf("byte %d (page %d): a start reads other positions:\n%s", i, i/pageSize, lineDiff(got, want))
	}
	t.Logf("%d bytes of %d edited: %d read the same positions, %d refused", same+refused, len(orig), same, refused)
}

// A freelist that lies is refused before bbolt reads it: a long count
// past the file (bbolt reads that many ids through its memory map; a
// short count past the page is TestOpenRefusesAnOverlongFreelist), or an
// id naming a page the tree uses or outside the file (bbolt would hand
// that page to the next write and overwrite live positions with other
// data).
func TestDamagedFreelistIsRefused(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	editedStore(t, clean)
	orig := readBytes(t, clean)
	w := &pageWalker{f: bytes.NewReader(orig), size: int64(len(orig)), seen: map[uint64]bool{}}
	root, freelist, err := w.meta()
	if err != nil || freelist == boltNoFreelist {
		t.Fatalf("the store written for the test has no freelist page (%v)", err)
	}
	at := int(freelist * w.pageSize)
	le := binary.LittleEndian
	list := func(b []byte, ids ...uint64) {
		le.PutUint16(b[at+10:], uint16(len(ids)))
		for i, id := range ids {
			le.PutUint64(b[at+boltPageHeader+8*i:], id)
		}
	}
	for name, edit := range map[string]func(b []byte){
		"a count past the page":           func(b []byte) { le.PutUint16(b[at+10:], 0xFF00) },
		"a long count past the file":      func(b []byte) { le.PutUint16(b[at+10:], 0xFFFF); le.PutUint64(b[at+boltPageHeader:], 1<<40) },
		"the root page listed as free":    func(b []byte) { list(b, root) },
		"the freelist listing itself":     func(b []byte) { list(b, freelist) },
		"a page past the high-water mark": func(b []byte) { list(b, w.hwm+3) },
		"a meta page listed as free":      func(b []byte) { list(b, 1) },
	} {
		b := append([]byte(nil), orig...)
		edit(b)
		path := filepath.Join(dir, "edited.db")
		writeBytes(t, path, b)
		_, err := openAndStart(path)
		if err == nil || !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: opened with %v; want one line saying the store is damaged", name, err)
		}
	}
}

// openAndStart opens path writable (read-only with KBATCH_STORE_EDITS_RO
// set) and reads what a start reads of each stream; an error is what the
// user would see.
func openAndStart(path string) (string, error) {
	s, err := Open(path, OpenOptions{ReadOnly: os.Getenv("KBATCH_STORE_EDITS_RO") != ""})
	if err != nil {
		return "", err
	}
	defer s.Close()
	return startOf(s)
}

// startOf reads what a start reads of each stream of s; an error is what
// the user would see.
func startOf(s *Store) (string, error) {
	streams, err := s.Streams()
	if err != nil {
		return "", err
	}
	for _, st := range streams {
		if _, _, err := s.Stream(st.Name); err != nil {
			return "", err
		}
		if _, err := s.Pending(st.Name); err != nil {
			return "", err
		}
	}
	return startState(s), nil
}

// usedBytes marks the bytes of the bbolt file b that a reader may look
// at: the header and meta of the two meta pages; the header, elements and
// data of every branch, leaf or freelist page the newest meta page leads
// to (its overflow pages included). The rest is free space.
//
// types counts the pages by type: meta, freelist, branch, leaf, and
// overflow (the pages a branch, leaf or freelist page spans past its
// first).
func usedBytes(b []byte, pageSize int) (used []bool, types map[string]int) {
	used = make([]bool, len(b))
	types = map[string]int{}
	w := &pageWalker{f: bytes.NewReader(b), size: int64(len(b)), seen: map[uint64]bool{}}
	if err := w.run(); err != nil {
		panic("the store written for the test does not walk: " + err.Error())
	}
	for p := 0; p*pageSize < len(b); p++ {
		if p >= 2 && !w.seen[uint64(p)] {
			continue // free
		}
		at := p * pageSize
		end := boltPageHeader + boltMetaSize
		page := b[at:]
		le := binary.LittleEndian
		flags, count := le.Uint16(page[8:]), int(le.Uint16(page[10:]))
		overflow := int(le.Uint32(page[12:]))
		switch {
		case p < 2:
			types["meta"]++
		case flags == boltFreelistPage:
			types["freelist"]++
		case flags == boltBranchPage:
			types["branch"]++
		case flags == boltLeafPage:
			types["leaf"]++
		}
		if p >= 2 && overflow > 0 && flags&(boltFreelistPage|boltBranchPage|boltLeafPage) != 0 {
			types["overflow"] += overflow
		}
		if p >= 2 {
			end = boltPageHeader
			switch flags {
			case boltFreelistPage:
				if count == boltFreelistNoSize {
					count = int(le.Uint64(page[boltPageHeader:])) + 1
				}
				end = boltPageHeader + 8*count
			case boltBranchPage, boltLeafPage:
				for e := range count {
					el := boltPageHeader + e*boltElementSize
					if el+boltElementSize > len(page) {
						break
					}
					stop := el + boltElementSize
					if flags == boltBranchPage {
						stop = max(stop, el+int(le.Uint32(page[el:]))+int(le.Uint32(page[el+4:])))
					} else {
						stop = max(stop, el+int(le.Uint32(page[el+4:]))+int(le.Uint32(page[el+8:]))+int(le.Uint32(page[el+12:])))
					}
					end = max(end, stop)
				}
			}
		}
		end = min(end, (overflow+1)*pageSize, len(b)-at)
		for i := at; i < at+end; i++ {
			used[i] = true
		}
		p += overflow
	}
	return used, types
}

// lineDiff shows the lines of got and want that differ.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var out strings.Builder
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			out.WriteString("got  " + gl + "\nwant " + wl + "\n")
		}
	}
	return out.String()
}
