package offsets

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A store kept as a folder holds one file per stream, each a store of its
// own (the layout of store_layout.go) with that one stream in it:
//
//	FOLDER/
//	  orders-1c168adb00d208e4.db    the stream "orders"
//	  a_b-c14cddc033f64b9d.db       the stream "a/b"
//
// bbolt locks a whole file, so a lock per stream needs a file per stream:
// two kbatch processes write two streams at once, and a second writer of
// one stream is refused when it first reads or writes that stream
// (ErrLocked). A file's name is the stream's name cut to what a file name
// may hold safely, then 16 hex digits of its SHA-256, so no two streams
// share a file; the file itself holds the name, and a file whose stream
// is not the one its name says is refused.
//
// A writable Store holds each stream file it read or wrote open, with its
// lock, until Close; it reads the other streams (Streams) from files it
// opens read-only and closes again at once, or from a copy when another
// process writes them, so it never keeps another writer out. A read-only
// Store keeps the files it opened until Close.

// maxFileStem bounds the readable part of a stream file's name.
const maxFileStem = 40

// folder is the part of a Store that is one file per stream.
type folder struct {
	dir string
	opt OpenOptions

	mu    sync.Mutex
	files map[string]*Store // by stream name
	// copiedAt is when the newest copy of a stream file another process
	// was writing was read (OpenOptions.Snapshot); zero when none was.
	copiedAt time.Time
}

// streamFileName is the name of the file that holds stream name in a
// folder store.
func streamFileName(name string) string {
	stem := make([]byte, 0, maxFileStem)
	for i := 0; i < len(name) && len(stem) < maxFileStem; i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && len(stem) > 0
		if !ok {
			c = '_'
		}
		stem = append(stem, c)
	}
	sum := sha256.Sum256([]byte(name))
	return string(stem) + "-" + hex.EncodeToString(sum[:8]) + ".db"
}

// isStreamFile reports whether a folder entry's name is one a stream file
// has: temporary files (".NAME.*.partial") are not.
func isStreamFile(name string) bool {
	return strings.HasSuffix(name, ".db") && !strings.HasPrefix(name, ".")
}

// OpenFolder opens the store kept as one file per stream in the folder dir
// (created, 0700, by the first write). Two processes may hold one folder
// store each and write different streams at once; the second to read or
// write a stream another holds gets ErrLocked then.
//
// from names the store file kept before streams had files of their own
// ("" for none). While dir does not exist and from does, a writable open
// moves from's streams into dir first (moveStreams): every stream with its
// next offsets, batches, events, seeks and jump marks, checked as a
// writable Open checks a file, in a folder that takes the name dir whole
// or not at all; from is then renamed FROM.moved, for going back to an
// older kbatch. A read-only open reads from as it is, and moves nothing.
// Once dir exists, from is not read.
//
// opt is as for Open; with ReadOnly, dir (or from) must exist.
func OpenFolder(dir, from string, opt OpenOptions) (*Store, error) {
	if dir == "" {
		return nil, errors.New("store: no folder name given; pass --store FILE")
	}
	info, err := os.Stat(dir)
	if target, lerr := os.Readlink(dir); errors.Is(err, fs.ErrNotExist) && lerr == nil {
		return nil, &StoreError{Path: dir, Kind: ErrForeign, Cause: err, Msg: "is a link to " + QuoteName(target) +
			", which does not exist: make that folder, or remove the link (kbatch makes the folder)"}
	}
	if err == nil && info.IsDir() && from != "" && fileExists(from) {
		if err := checkNotLeftBehind(dir, from); err != nil {
			return nil, err
		}
	}
	switch {
	case err == nil && !info.IsDir():
		return nil, &StoreError{Path: dir, Kind: ErrForeign, Msg: "is not a folder; kbatch keeps a file per stream there: move it away or pass --store FILE"}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, &StoreError{Path: dir, Msg: "cannot be read: " + err.Error(), Cause: err}
	case err != nil && from != "" && fileExists(from):
		if opt.ReadOnly {
			return Open(from, opt)
		}
		if err := moveStreams(from, dir, opt.Timeout, nil); err != nil {
			return nil, err
		}
	case err != nil && opt.ReadOnly:
		return nil, &StoreError{Path: dir, Msg: "does not exist", Cause: err}
	}
	return &Store{path: dir, readOnly: opt.ReadOnly, maxBatches: maxBatches, maxRanges: maxRanges, maxEvents: maxEvents,
		releaseEvery: releaseEvery, folder: &folder{dir: dir, opt: opt, files: map[string]*Store{}}}, nil
}

// checkNotLeftBehind refuses the folder store dir when it holds no stream
// file while the old store file from, beside it, holds streams: a move
// makes dir with every stream of from in it, so such a folder was made
// by hand (or is a link to an empty folder), and taking it as the store
// would start each stream of from anew, per --reset, without a word.
func checkNotLeftBehind(dir, from string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &StoreError{Path: dir, Msg: "cannot be read: " + err.Error(), Cause: err}
	}
	for _, e := range entries {
		if isStreamFile(e.Name()) {
			return nil
		}
	}
	old, err := Open(from, OpenOptions{ReadOnly: true, Snapshot: true})
	if err != nil {
		return nil // from is not read once dir exists; a damaged one stays unread
	}
	infos, err := old.Streams()
	_ = old.Close()
	if err != nil || len(infos) == 0 {
		return nil
	}
	return &StoreError{Path: dir, Kind: ErrForeign, Msg: fmt.Sprintf(
		"holds no stream, and %s beside it holds %d that were not moved there: remove the empty folder "+
			"(kbatch then moves them into one it makes), or pass --store %s to go on with that file",
		from, len(infos), from)}
}

// fileExists reports whether path names something (a file, or anything
// Open will then refuse for what it is).
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// file returns the Store of stream's file, opening it the first time: in
// a writable folder store writable (and kept, with its lock, until
// Close), created when create is set; in a read-only one read-only. It is
// nil, with no error, when the stream has no file and create is not set.
func (f *folder) file(stream string, create bool) (*Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st := f.files[stream]; st != nil {
		return st, nil
	}
	path := filepath.Join(f.dir, streamFileName(stream))
	if !create && !fileExists(path) {
		return nil, nil
	}
	if create {
		if err := os.MkdirAll(f.dir, 0o700); err != nil {
			return nil, (&Store{path: f.dir}).createError(err)
		}
	}
	st, err := Open(path, f.opt)
	if errors.Is(err, ErrLocked) {
		return nil, &StoreError{Path: f.dir, Kind: ErrLocked, Cause: err, Msg: "stream " + QuoteName(stream) +
			" is in use by another kbatch process; stop it, or pass --name to use another stream"}
	}
	if err != nil {
		return nil, err
	}
	if err := st.holdsOnly(stream); err != nil {
		_ = st.Close()
		return nil, err
	}
	f.noteCopy(st)
	f.files[stream] = st
	return st, nil
}

// holdsOnly checks that the store holds no stream but stream (or none
// yet), as the file of stream in a folder store must.
func (s *Store) holdsOnly(stream string) (err error) {
	defer s.recoverCorrupt(&err)
	return s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStreams).ForEachBucket(func(k []byte) error {
			if string(k) != stream {
				return &StoreError{Path: s.path, Kind: ErrCorrupt, Msg: fmt.Sprintf(
					"holds the stream %s, not %s as its name says: it was renamed or copied outside kbatch; move it away",
					QuoteName(string(k)), QuoteName(stream))}
			}
			return nil
		})
	})
}

// noteCopy records when st, just opened, was read from a copy.
func (f *folder) noteCopy(st *Store) {
	if at, ok := st.Snapshot(); ok && at.After(f.copiedAt) {
		f.copiedAt = at
	}
}

// snapshotAt is Store.Snapshot of a folder store: whether any stream was
// read from a copy, and when the newest copy was taken.
func (f *folder) snapshotAt() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.copiedAt, !f.copiedAt.IsZero()
}

// streams is Store.Streams of a folder store: the streams of every
// stream file, ordered by name. A writable store reads the files it does
// not hold read-only, from a copy when another process writes them, and
// closes them again.
func (f *folder) streams() ([]StreamInfo, error) {
	entries, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &StoreError{Path: f.dir, Msg: "cannot be read: " + err.Error(), Cause: err}
	}
	var out []StreamInfo
	for _, e := range entries {
		if !isStreamFile(e.Name()) {
			continue
		}
		infos, err := f.fileStreams(e.Name())
		if err != nil {
			return nil, err
		}
		for _, info := range infos {
			if streamFileName(info.Name) != e.Name() {
				return nil, &StoreError{Path: filepath.Join(f.dir, e.Name()), Kind: ErrCorrupt, Msg: fmt.Sprintf(
					"holds the stream %s, whose file is %s: it was renamed or copied outside kbatch; move it away",
					QuoteName(info.Name), streamFileName(info.Name))}
			}
		}
		out = append(out, infos...)
	}
	slices.SortFunc(out, func(a, b StreamInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// fileStreams reads the streams of the stream file name.
func (f *folder) fileStreams(name string) ([]StreamInfo, error) {
	f.mu.Lock()
	for stream, st := range f.files {
		if streamFileName(stream) == name {
			f.mu.Unlock()
			return st.Streams()
		}
	}
	f.mu.Unlock()
	opt := f.opt
	if !opt.ReadOnly {
		opt = OpenOptions{ReadOnly: true, Snapshot: true}
	}
	st, err := Open(filepath.Join(f.dir, name), opt)
	if err != nil {
		return nil, err
	}
	infos, err := st.Streams()
	f.mu.Lock()
	f.noteCopy(st)
	// A read-only store keeps the file as its stream's only when it is
	// that stream's file by name: a copy kept under another name is never
	// read for the stream.
	keep := opt.ReadOnly && f.opt.ReadOnly && err == nil && len(infos) == 1 && f.files[infos[0].Name] == nil &&
		streamFileName(infos[0].Name) == name
	if keep {
		f.files[infos[0].Name] = st
	}
	f.mu.Unlock()
	if !keep {
		_ = st.Close()
	}
	return infos, err
}

// releasePages is Store.releasePages for each stream file held.
func (f *folder) releasePages() {
	f.mu.Lock()
	files := make([]*Store, 0, len(f.files))
	for _, st := range f.files {
		files = append(files, st)
	}
	f.mu.Unlock()
	for _, st := range files {
		st.releasePages()
	}
}

// close closes every stream file held.
func (f *folder) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for stream, st := range f.files {
		if err := st.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(f.files, stream)
	}
	return errors.Join(errs...)
}
