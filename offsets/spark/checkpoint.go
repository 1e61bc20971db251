package spark

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// maxFileSize caps how much of one checkpoint file is read. Real offset logs
// are kilobytes (a topic of 10 000 partitions is about 200 KiB); anything
// this big is not a checkpoint file.
const maxFileSize = 16 << 20

// Checkpoint is a Spark Structured Streaming checkpoint directory as Open
// found it: the query id and which offset and commit log files existed.
//
// Open takes a snapshot of the listings; the methods read files on demand and
// never modify the Checkpoint, so they may be called concurrently. A running
// query keeps adding batches and purging old ones (it keeps
// spark.sql.streaming.minBatchesToRetain, default 100), so a file listed here
// can be gone when read: that is an error naming the file, and Open again
// gives a fresh snapshot.
type Checkpoint struct {
	// Dir is the checkpoint directory, as given to Open but cleaned.
	Dir string
	// ID is the query id from the metadata file ("" if there is none).
	ID string
	// Batches are the batch ids in offsets/, ascending. The lowest is often
	// not 0, because Spark purges old batches.
	Batches []int64
	// Commits are the batch ids in commits/, ascending.
	Commits []int64
	// Committed is the last committed batch, the largest of Commits, or -1
	// when nothing was committed yet (or the checkpoint predates the commit
	// log, Spark 2.1).
	Committed int64

	// realDir is Dir with its symlinks resolved: files are read only when
	// they resolve to a place under it.
	realDir string
}

// Open reads the checkpoint directory dir: the query id from metadata and the
// listings of offsets/ and commits/, whose last commit file it parses (so a
// commit log from a newer Spark is refused here). File names that are not a
// batch number are ignored, as Spark ignores them: checksum files (.0.crc),
// temporary files (.0.<uuid>.tmp) and anything else. A missing commits/
// directory is fine (Spark 2.1 had none). Open reads only; it creates
// nothing.
func Open(dir string) (*Checkpoint, error) {
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fileError(dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("spark checkpoint %s: not a directory", dir)
	}
	c := &Checkpoint{Dir: dir, Committed: -1}
	if c.realDir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, fileError(dir, err)
	}

	metaPath := filepath.Join(dir, "metadata")
	meta, err := c.readFile(metaPath)
	hasMeta := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if hasMeta {
		if c.ID, err = parseStreamMetadata(meta); err != nil {
			return nil, fmt.Errorf("spark checkpoint %s: %w", metaPath, err)
		}
	}

	var hasOffsetDir bool
	if c.Batches, hasOffsetDir, err = listBatchIDs(filepath.Join(dir, "offsets")); err != nil {
		return nil, err
	}
	if !hasMeta && !hasOffsetDir {
		return nil, fmt.Errorf("spark checkpoint %s: not a Spark checkpoint (no metadata file and no offsets/ directory)", dir)
	}
	if c.Commits, _, err = listBatchIDs(filepath.Join(dir, "commits")); err != nil {
		return nil, err
	}
	if n := len(c.Commits); n > 0 {
		last := c.Commits[n-1]
		path := c.path("commits", last)
		b, err := c.readFile(path)
		if err != nil {
			return nil, err
		}
		if _, err := ParseCommitLog(b); err != nil {
			return nil, fmt.Errorf("spark checkpoint %s: %w", path, err)
		}
		c.Committed = last
	}
	return c, nil
}

// OffsetLog reads and parses offsets/<id>. It reads the file even when id is
// not in Batches, so batches written after Open can be read.
func (c *Checkpoint) OffsetLog(id int64) (OffsetLog, error) {
	path := c.path("offsets", id)
	b, err := c.readFile(path)
	if err != nil {
		return OffsetLog{}, err
	}
	log, err := ParseOffsetLog(b)
	if err != nil {
		return OffsetLog{}, fmt.Errorf("spark checkpoint %s: %w", path, err)
	}
	return log, nil
}

// initialOffsets reads sources/<dir>/0, the Kafka initial offsets of a
// source.
func (c *Checkpoint) initialOffsets(dir string) (Offsets, error) {
	path := filepath.Join(c.Dir, "sources", dir, "0")
	b, err := c.readFile(path)
	if err != nil {
		return nil, err
	}
	o, err := ParseInitialOffsets(b)
	if err != nil {
		return nil, fmt.Errorf("spark checkpoint %s: %w", path, err)
	}
	return o, nil
}

// path is the file of batch id in the log directory log.
func (c *Checkpoint) path(log string, id int64) string {
	return filepath.Join(c.Dir, log, strconv.FormatInt(id, 10))
}

// parseStreamMetadata reads the query id from the metadata file,
// {"id":"<uuid>"}.
func parseStreamMetadata(b []byte) (string, error) {
	var md struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &md); err != nil {
		return "", malformed("not a {\"id\":...} JSON object: %v", err)
	}
	return md.ID, nil
}

// listBatchIDs lists the batch files of a log directory, ascending. exists is
// false, with no error, when the directory does not exist.
func listBatchIDs(dir string) (ids []int64, exists bool, err error) {
	entries, err := readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fileError(dir, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if id, ok := batchID(e.Name()); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, true, nil
}

// readDir lists a folder of the checkpoint. Something else at its place (a
// FIFO, whose open would block) is an error and is not opened.
func readDir(dir string) ([]os.DirEntry, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, syscall.ENOTDIR
	}
	return os.ReadDir(dir)
}

// batchID parses a batch file name. Only the canonical decimal form counts,
// since that is the only name Spark reads a batch from.
func batchID(name string) (int64, bool) {
	id, err := strconv.ParseInt(name, 10, 64)
	if err != nil || id < 0 || strconv.FormatInt(id, 10) != name {
		return 0, false
	}
	return id, true
}

// readFile reads a checkpoint file of at most maxFileSize bytes. It reads
// only a regular file that is, once symlinks are resolved, inside the
// checkpoint directory: a FIFO, a device or a socket is refused without
// being opened for reading (the open is non-blocking, and the file is
// checked again on the open descriptor), so nothing blocks. Errors name
// the file and the problem and never quote what the file holds. A missing
// file gives an error wrapping fs.ErrNotExist.
func (c *Checkpoint) readFile(path string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	if rel, err := filepath.Rel(c.realDir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("spark checkpoint %s: a symlink to a file outside the checkpoint; not read", path)
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return nil, fileError(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fileError(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	if fi.Size() > maxFileSize {
		return nil, tooLarge(path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fileError(path, err)
	}
	if len(b) > maxFileSize {
		return nil, tooLarge(path)
	}
	return b, nil
}

func tooLarge(path string) error {
	return fmt.Errorf("spark checkpoint %s: larger than %d MiB, not a checkpoint file", path, maxFileSize>>20)
}

// notRegular says what a file that is not a regular file is.
func notRegular(path string, fi fs.FileInfo) error {
	what := "a special file"
	switch m := fi.Mode(); {
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("spark checkpoint %s: %s, not a regular file; not read", path, what)
}

// fileError renders an I/O error as "spark checkpoint <path>: <reason>",
// without the path a *fs.PathError would repeat. The cause stays wrapped, so
// errors.Is(err, fs.ErrNotExist) still works.
func fileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("spark checkpoint %s: %w", path, err)
}
