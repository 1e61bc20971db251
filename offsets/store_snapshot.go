package offsets

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openSnapshot copies the store's file, which another process holds open
// for writing, and opens the copy read-only. bbolt never overwrites a page
// the newest committed transaction can reach: a writer puts new pages in
// free space and commits by writing a meta page last. So a copy taken
// while the newest valid meta page's transaction id stayed the same holds
// that transaction whole; the copy is retried while commits land.
func (s *Store) openSnapshot(timeout time.Duration) (*bolt.DB, error) {
	deadline := time.Now().Add(2 * time.Second)
	for wait := time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 20*time.Millisecond) {
		before, err := newestMeta(s.path)
		if err != nil {
			return nil, err
		}
		data, err := readPrefix(s.path, before.size)
		if err != nil {
			return nil, &StoreError{Path: s.path, Msg: "cannot be read: " + err.Error(), Cause: err}
		}
		after, err := newestMeta(s.path)
		if err != nil {
			return nil, err
		}
		if before.txid != after.txid {
			time.Sleep(wait)
			continue // a commit landed while copying
		}
		f, err := os.CreateTemp("", "kbatch-store-snapshot-*.db")
		if err != nil {
			return nil, &StoreError{Path: s.path, Msg: "cannot be copied: " + err.Error(), Cause: err}
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = os.Remove(f.Name())
			return nil, &StoreError{Path: s.path, Msg: "cannot be copied: " + werr.Error(), Cause: werr}
		}
		db, err := s.boltOpen(f.Name(), true, timeout)
		if err == nil {
			err = s.checkMeta(db)
			if err != nil {
				_ = db.Close()
			}
		}
		if err != nil {
			_ = os.Remove(f.Name())
			return nil, err
		}
		s.snapshot, s.snapshotAt = f.Name(), time.Now()
		return db, nil
	}
	return nil, &StoreError{Path: s.path, Kind: ErrLocked,
		Msg: "is in use by another kbatch process and changed too often to copy; try again"}
}

// readPrefix reads the first n bytes of the file (fewer if it is shorter).
func readPrefix(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:m], nil
}

// metaInfo is what the snapshot needs of a meta page: its transaction id
// and the file size its pages use (high page id times page size).
type metaInfo struct {
	txid uint64
	size int64
}

// newestMeta reads the newest valid meta page of a bbolt file. Meta pages
// are the first two pages; each is a 16-byte page header, then magic,
// version, page size, flags (4 bytes each), the root bucket (16),
// freelist, high page id and txid (8 each) and an FNV-64a checksum of the
// meta before it, in the machine's byte order (little endian on every
// platform kbatch is built for).
func newestMeta(path string) (metaInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return metaInfo{}, &StoreError{Path: path, Msg: "cannot be read: " + err.Error(), Cause: err}
	}
	defer f.Close()
	var newest metaInfo
	valid := false
	pageSize := int64(0)
	for i := range int64(2) {
		var buf [80]byte
		if _, err := f.ReadAt(buf[:], i*pageSize); err != nil && !errors.Is(err, io.EOF) {
			return metaInfo{}, &StoreError{Path: path, Msg: "cannot be read: " + err.Error(), Cause: err}
		}
		le := binary.LittleEndian
		if le.Uint32(buf[16:]) != 0xED0CDAED {
			if i == 0 {
				return metaInfo{}, &StoreError{Path: path, Kind: ErrCorrupt, Msg: "is not a bbolt file"}
			}
			continue
		}
		if i == 0 {
			pageSize = int64(le.Uint32(buf[24:]))
		}
		h := fnv.New64a()
		_, _ = h.Write(buf[16:72])
		if h.Sum64() != le.Uint64(buf[72:]) {
			continue // torn or damaged: bbolt ignores it too
		}
		m := metaInfo{txid: le.Uint64(buf[64:]), size: int64(le.Uint64(buf[56:])) * int64(le.Uint32(buf[24:]))}
		if !valid || m.txid > newest.txid {
			newest, valid = m, true
		}
		if pageSize == 0 {
			break
		}
	}
	if !valid {
		return metaInfo{}, &StoreError{Path: path, Kind: ErrCorrupt, Msg: "has no valid meta page"}
	}
	return newest, nil
}
