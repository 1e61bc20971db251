package offsets

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kbatch-dev/kbatch/atomicfile"

	bolt "go.etcd.io/bbolt"
)

// movedSuffix ends the name the store file from takes once its streams
// live in a folder (OpenFolder): kept for going back to an older kbatch.
const movedSuffix = ".moved"

// moveStreams moves the streams of the store file from into the folder
// dir, which does not exist yet, one file per stream:
//
//  1. from is opened as a writable Open opens a file: every check (page
//     walk, bbolt's check, every value decoded and its seal checked), a
//     schema 1 file sealed; a damaged file is refused here, and nothing
//     is written. Its lock is held until the folder is in place, so no
//     other kbatch writes it meanwhile, and no two move it at once.
//  2. Temporary folders a move that never finished left beside dir are
//     removed (under that lock, none is running).
//  3. Each stream is copied, its buckets and their sequences byte for
//     byte (a seal covers the stream's name, not the file), into a new
//     file in a temporary folder beside dir; each file is checked as a
//     writable Open checks one before it takes its name.
//  4. The temporary folder is renamed dir, whole: a crash before leaves
//     from as it was and the next open moves again; after, dir is used.
//  5. from is renamed FROM.moved (movedName). A crash before that leaves it under its
//     name, beside dir, and it is not read again.
//
// stop, when not nil, is called after each step with its name, and an
// error it returns ends the move there as a crash would: tests go through
// every point a kill can land on.
func moveStreams(from, dir string, timeout time.Duration, stop func(step string) error) error {
	if stop == nil {
		stop = func(string) error { return nil }
	}
	old, err := Open(from, OpenOptions{Timeout: timeout, mustExist: true})
	if err != nil && fileExists(dir) {
		// Another kbatch moved the streams, and renamed from, while this
		// one waited for its lock: the folder is the store now.
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = old.Close() }()
	if fileExists(dir) {
		return nil // another kbatch moved them while this one waited for the lock
	}
	for _, left := range atomicfile.FolderLeftovers(dir) {
		if err := os.RemoveAll(left); err != nil {
			return old.moveError(err)
		}
	}
	if err := stop("checked"); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return old.moveError(err)
	}
	tmp, err := atomicfile.CreateFolder(dir)
	if err != nil {
		return old.moveError(err)
	}
	var names []string
	if err := old.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStreams).ForEachBucket(func(k []byte) error {
			names = append(names, string(k))
			return nil
		})
	}); err != nil {
		return old.moveError(err)
	}
	for _, name := range names {
		if err := old.copyStream(name, filepath.Join(tmp.TempName(), streamFileName(name)), timeout); err != nil {
			return err
		}
		if err := stop("stream " + name); err != nil {
			return err
		}
	}
	if err := tmp.CommitNew(); err != nil {
		return old.moveError(err)
	}
	if err := stop("folder"); err != nil {
		return err
	}
	_ = old.Close()
	// The streams are in dir now; a file that cannot be renamed is left
	// where it is, unread.
	_ = atomicfile.Rename(from, movedName(from))
	return nil
}

// movedName is the name the store file from takes after a move: FROM.moved,
// or when that is taken (the file of an earlier move, whose folder was
// removed since) FROM.moved.2, .3 and on, so no earlier file is replaced.
func movedName(from string) string {
	name := from + movedSuffix
	for n := 2; fileExists(name); n++ {
		name = fmt.Sprintf("%s%s.%d", from, movedSuffix, n)
	}
	return name
}

// moveError is the error of a move of the store's streams into a folder
// that failed on err.
func (s *Store) moveError(err error) error {
	return &StoreError{Path: s.path, Cause: err, Msg: "cannot be moved to one file per stream: " + err.Error() +
		"; it is left as it was: pass --store with its name to go on with it as one file"}
}

// copyStream writes stream name, as this store holds it, into a new
// store file at path holding that one stream, and checks it.
func (s *Store) copyStream(name, path string, timeout time.Duration) error {
	f, err := atomicfile.Create(path, 0o600)
	if err != nil {
		return s.moveError(err)
	}
	defer f.Abort()
	dst := &Store{path: path}
	db, err := dst.boltOpen(f.TempName(), false, timeout)
	if err != nil {
		return err
	}
	// One transaction makes the file and its stream, and a second one
	// writes the count again: bbolt's two meta pages then both name the
	// whole stream, so a torn meta page falls back to it, never to a file
	// without it (which would start the stream per --reset).
	err = db.Update(func(tx *bolt.Tx) error {
		if err := dst.initMetaTx(tx); err != nil {
			return err
		}
		return s.db.View(func(src *bolt.Tx) error {
			to, err := tx.Bucket(bucketStreams).CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			if err := copyBucket(to, src.Bucket(bucketStreams).Bucket([]byte(name))); err != nil {
				return err
			}
			return putStreamCount(tx, 1)
		})
	})
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error { return putStreamCount(tx, 1) })
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s.moveError(err)
	}
	check, err := Open(f.TempName(), OpenOptions{Timeout: timeout, mustExist: true})
	if err != nil {
		return s.moveError(err)
	}
	if err := check.Close(); err != nil {
		return s.moveError(err)
	}
	if err := f.CommitNew(); err != nil {
		return s.moveError(err)
	}
	return nil
}

// copyBucket copies the keys, values, nested buckets and sequence of src
// into the empty bucket dst.
func copyBucket(dst, src *bolt.Bucket) error {
	if err := dst.SetSequence(src.Sequence()); err != nil {
		return err
	}
	return src.ForEach(func(k, v []byte) error {
		if v != nil {
			return dst.Put(k, v)
		}
		sub, err := dst.CreateBucket(k)
		if err != nil {
			return err
		}
		return copyBucket(sub, src.Bucket(k))
	})
}
