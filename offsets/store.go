package offsets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/kbatch-dev/kbatch/atomicfile"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// schemaVersion is the layout this kbatch writes and reads; a file with a
// higher one is refused, never rewritten.
const schemaVersion = sealedSchema

// Caps of the per-stream logs; the oldest entries are pruned in the
// transaction that adds a new one.
const (
	maxBatches = 10_000
	maxEvents  = 10_000
	// maxRanges bounds the batch log by ranges too: a stream over 1000
	// partitions keeps its last 200 batches (about 20 MB of JSON), not
	// 10,000 (a gigabyte). At least minBatchesKept are kept.
	maxRanges      = 200_000
	minBatchesKept = 20
)

// OpenOptions tune Open.
type OpenOptions struct {
	// ReadOnly opens with a shared lock and refuses writes; the file must
	// exist. It still waits for a writer holding the file to let go.
	ReadOnly bool
	// Snapshot, with ReadOnly, reads a consistent copy of the file when
	// another process holds it for writing (a running watch), instead of
	// failing with ErrLocked after Timeout; Store.Snapshot says so.
	Snapshot bool
	// Timeout is how long to wait for another process's lock; 0 means 1s
	// (with Snapshot, 200ms before copying).
	Timeout time.Duration

	// mustExist makes a writable open of a missing file fail, not create
	// it: a move of a store's streams (moveStreams) opens one that another
	// process may have just moved away.
	mustExist bool
}

// Store is kbatch's bbolt file: per stream, the next offsets, the batch
// log and the event log. Its methods are safe for concurrent use; bbolt
// serialises writers, and every method is one transaction. Values returned
// are copies and stay valid after the call.
type Store struct {
	db         *bolt.DB
	path       string
	readOnly   bool
	maxBatches int
	maxRanges  int
	maxEvents  int

	// releaseEvery paces releasePages; not changed while the store is in use.
	releaseEvery time.Duration

	mu         sync.Mutex
	releasedAt time.Time               // the last releasePages
	planned    map[string]plannedBatch // by stream; see Plan and Ack

	// snapshot is the copy read instead of path (OpenOptions.Snapshot),
	// removed by Close, and when it was taken.
	snapshot   string
	snapshotAt time.Time

	// folder is set for a store kept as one file per stream (OpenFolder);
	// db is then nil and each stream's file is a Store of its own.
	folder *folder
}

// Open opens the store at path, creating it (mode 0600, missing parent
// folders 0700) unless opt.ReadOnly. A new file is built under a temporary
// name and linked into place, so a crash never leaves a half-made store.
// An existing empty (0-byte) file is refused (ErrForeign): it is as often a
// truncated store as a new one, and taking it as new would restart every
// stream per --reset. A writable open reads the whole file first (verify)
// and refuses a damaged one (ErrCorrupt) before writing anything.
//
// A store made before values were sealed (schema 1) is sealed by its
// first writable open (store_seal.go); read-only opens read it as it is.
//
// Any other existing file is first opened read-only and checked: a file that
// is not bbolt or is damaged (ErrCorrupt), a bbolt file kbatch did not make
// (ErrForeign), or one with a newer schema (ErrSchema) is refused without a
// byte of it changing. A file another process holds open for writing fails
// after opt.Timeout with ErrLocked. All of these are *StoreError.
func Open(path string, opt OpenOptions) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: no file name given; pass --store FILE")
	}
	if opt.Timeout <= 0 {
		opt.Timeout = time.Second
		if opt.ReadOnly && opt.Snapshot {
			opt.Timeout = 200 * time.Millisecond
		}
	}
	st := &Store{path: path, readOnly: opt.ReadOnly, maxBatches: maxBatches, maxRanges: maxRanges, maxEvents: maxEvents,
		releaseEvery: releaseEvery}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && (opt.ReadOnly || opt.mustExist):
		return nil, &StoreError{Path: path, Msg: "does not exist", Cause: err}
	case errors.Is(err, fs.ErrNotExist):
		if err := st.create(opt.Timeout); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, &StoreError{Path: path, Msg: "cannot be read: " + err.Error(), Cause: err}
	case info.IsDir():
		return nil, &StoreError{Path: path, Kind: ErrForeign, Msg: "is a directory; pass --store with a file name"}
	case !info.Mode().IsRegular():
		// /dev/null, a named pipe, a socket: bbolt needs a file it can map
		// and lock; calling one "empty (0 bytes)" would ask the user to
		// remove it.
		return nil, &StoreError{Path: path, Kind: ErrForeign, Msg: "is " + specialFile(info.Mode()) +
			", not a regular file; pass --store with the name of a file (kbatch creates it)"}
	case info.Size() == 0:
		return nil, &StoreError{Path: path, Kind: ErrForeign, Msg: "is empty (0 bytes): not a kbatch store, or one that was truncated; " +
			"to start anew, remove it (kbatch creates the store) or pass --store with the name of a file that does not exist"}
	}
	db, err := st.openChecked(opt.Timeout)
	if errors.Is(err, ErrLocked) && opt.ReadOnly && opt.Snapshot {
		db, err = st.openSnapshot(opt.Timeout)
	}
	if err != nil {
		return nil, err
	}
	if opt.ReadOnly {
		st.db = db
		return st, nil
	}
	if err := db.Close(); err != nil {
		return nil, &StoreError{Path: path, Msg: "cannot be closed: " + err.Error(), Cause: err}
	}
	if db, err = st.boltOpen(path, false, opt.Timeout); err != nil {
		return nil, err
	}
	// Check again: the file may have been replaced while it was unlocked.
	// Then read all of it, under the writer's lock, before writing a byte.
	if err := st.checkMeta(db); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := st.verify(db); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := st.migrate(db); err != nil {
		_ = db.Close()
		return nil, err
	}
	st.db = db
	st.releasePages() // verify read every page of the file
	return st, nil
}

// Close releases the file and its lock. Calling it again is harmless.
func (s *Store) Close() error {
	if s.folder != nil {
		return s.folder.close()
	}
	err := s.db.Close()
	if s.snapshot != "" {
		_ = os.Remove(s.snapshot)
	}
	if err != nil {
		return fmt.Errorf("store %s: close: %w", s.path, err)
	}
	return nil
}

// Snapshot reports whether the store is a copy of a file another process
// was writing (OpenOptions.Snapshot), and when the copy was taken.
func (s *Store) Snapshot() (time.Time, bool) {
	if s.folder != nil {
		return s.folder.snapshotAt()
	}
	return s.snapshotAt, s.snapshot != ""
}

// Path is the file name the store was opened with; for a store kept as
// one file per stream, its folder.
func (s *Store) Path() string { return s.path }

// boltOpen opens the file and turns bbolt's failures into *StoreError.
func (s *Store) boltOpen(path string, readOnly bool, timeout time.Duration) (db *bolt.DB, err error) {
	defer s.recoverCorrupt(&err)
	// preflight has checked what Open reads (meta pages, the freelist);
	// should a page still lie, a fault in the mapping is an error too.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	// The file exists already (Open looked, create made it): a file gone
	// meanwhile, renamed or removed by another process, is an error, not
	// an empty bbolt file made under its name.
	db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: readOnly, Timeout: timeout, OpenFile: openExisting})
	if err != nil {
		return nil, s.openError(err, readOnly)
	}
	return db, nil
}

// openExisting is os.OpenFile that never creates the file.
func openExisting(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag&^os.O_CREATE, perm)
}

// openError is the *StoreError of bolt.Open failing with err.
func (s *Store) openError(err error, readOnly bool) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return &StoreError{Path: s.path, Kind: ErrLocked, Cause: err,
			Msg: "is in use by another kbatch process; pass --store to use another file"}
	case !readOnly && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)):
		// It was read (the read-only look Open takes first passed): only
		// writing is refused, by the file's mode or a read-only mount.
		return &StoreError{Path: s.path, Kind: ErrReadOnly, Cause: err, Msg: "cannot be written (" + err.Error() +
			"): kbatch stores positions there after each batch; pass --no-store to read without storing them, " +
			"or --store with a file it can write (kbatch offsets show reads this one)"}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrNotExist):
		return &StoreError{Path: s.path, Msg: "cannot be opened: " + err.Error(), Cause: err}
	}
	return &StoreError{Path: s.path, Kind: ErrCorrupt, Cause: err,
		Msg: fmt.Sprintf("is not a bbolt file or is damaged (%v); move it away or pass --store to use another file", err)}
}

// openChecked opens the existing file read-only and checks it is a kbatch
// store this version can read.
func (s *Store) openChecked(timeout time.Duration) (*bolt.DB, error) {
	db, err := s.boltOpen(s.path, true, timeout)
	if err != nil {
		return nil, err
	}
	if err := s.checkMeta(db); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// checkMeta checks that db is a kbatch store this version can read. It
// first walks the file's page tree with bounds (preflight), under the lock
// bbolt holds: a damaged page id read through bbolt's memory map faults
// outside it, which no recover turns into an error, so nothing of the
// file is read through bbolt before the walk passed.
func (s *Store) checkMeta(db *bolt.DB) (err error) {
	if err := preflight(db.Path()); err != nil {
		return s.damaged(err)
	}
	defer s.recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return db.View(func(tx *bolt.Tx) error { return s.checkMetaTx(tx) })
}

func (s *Store) checkMetaTx(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil || string(meta.Get(keyApp)) != "kbatch" {
		return &StoreError{Path: s.path, Kind: ErrForeign,
			Msg: "is a bbolt file but not a kbatch store; pass --store to use another file"}
	}
	v, err := strconv.Atoi(string(meta.Get(keySchema)))
	switch {
	case err != nil || v < 1:
		return &StoreError{Path: s.path, Kind: ErrCorrupt,
			Msg: fmt.Sprintf("has a damaged schema version %q; move it away or pass --store", meta.Get(keySchema))}
	case v > schemaVersion:
		return &StoreError{Path: s.path, Kind: ErrSchema, Msg: fmt.Sprintf(
			"was written by a newer kbatch (schema %d, this one reads %d); upgrade kbatch or pass --store", v, schemaVersion)}
	}
	if tx.Bucket(bucketStreams) == nil {
		return &StoreError{Path: s.path, Kind: ErrCorrupt, Msg: "has no streams bucket; move it away or pass --store"}
	}
	return nil
}

// initMeta writes kbatch's meta bucket into a database that has no buckets
// yet, or checks the one that is there.
func (s *Store) initMeta(db *bolt.DB) error { return db.Update(s.initMetaTx) }

// initMetaTx is initMeta inside a transaction.
func (s *Store) initMetaTx(tx *bolt.Tx) error {
	if tx.Bucket(bucketMeta) != nil {
		return s.checkMetaTx(tx)
	}
	if k, _ := tx.Cursor().First(); k != nil {
		return &StoreError{Path: s.path, Kind: ErrForeign,
			Msg: "is a bbolt file but not a kbatch store; pass --store to use another file"}
	}
	meta, err := tx.CreateBucket(bucketMeta)
	if err != nil {
		return err
	}
	if err := meta.Put(keyApp, []byte("kbatch")); err != nil {
		return err
	}
	if err := meta.Put(keySchema, []byte(strconv.Itoa(schemaVersion))); err != nil {
		return err
	}
	if err := putStreamCount(tx, 0); err != nil {
		return err
	}
	_, err = tx.CreateBucket(bucketStreams)
	return err
}

// create makes a new store at s.path: a temporary file in the same folder
// gets the meta bucket, then takes the final name without replacing
// (atomicfile.File.CommitNew), so a store another process created
// meanwhile is kept, and opened.
func (s *Store) create(timeout time.Duration) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s.createError(err)
	}
	f, err := atomicfile.Create(s.path, 0o600)
	if err != nil {
		return s.createError(err)
	}
	defer f.Abort()
	db, err := s.boltOpen(f.TempName(), false, timeout)
	if err != nil {
		return err
	}
	err = s.initMeta(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s.createError(err)
	}
	if err := f.CommitNew(); err != nil && !errors.Is(err, fs.ErrExist) {
		return s.createError(err)
	}
	return nil
}

// specialFile names what a file that is not regular nor a directory is.
func specialFile(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// createError is the *StoreError of a new store that could not be made:
// in a folder kbatch may not write to (its mode, a read-only file system)
// it says how to go on without one.
func (s *Store) createError(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return &StoreError{Path: s.path, Kind: ErrReadOnly, Cause: err, Msg: "cannot be created (" + err.Error() +
			"): pass --no-store to read without storing positions, or --store with a file in a folder kbatch can write"}
	}
	return &StoreError{Path: s.path, Msg: "cannot be created: " + err.Error(), Cause: err}
}
