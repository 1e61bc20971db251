package spark

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"time"
)

// maxFileSize caps how much of one checkpoint file is read. Real offset logs
// are kilobytes (a topic of 10 000 partitions is about 200 KiB); anything
// this big is not a checkpoint file.
const maxFileSize = 16 << 20

// Checkpoint is a Spark Structured Streaming checkpoint as Open found it:
// the query id and which offset and commit log files existed.
//
// Open takes a snapshot of the listings; the methods read files on demand and
// never modify the Checkpoint, so they may be called concurrently. A running
// query keeps adding batches and purging old ones (it keeps
// spark.sql.streaming.minBatchesToRetain, default 100), so a file listed here
// can be gone when read: that is an error naming the file, and Open again
// gives a fresh snapshot.
type Checkpoint struct {
	// Dir is the checkpoint's location, as given to Open but cleaned: a
	// folder, or an object-store URL (Store.Location).
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

	store Store
	// times are the modification times of the listed offsets/ and commits/
	// files, by log and batch id.
	times map[string]map[int64]time.Time
}

// Open reads the checkpoint folder dir: see OpenStore.
func Open(dir string) (*Checkpoint, error) {
	s, err := NewDirStore(dir)
	if err != nil {
		return nil, err
	}
	return OpenStore(s)
}

// OpenStore reads the checkpoint in s: the query id from metadata and the
// listings of offsets/ and commits/, whose last commit file it parses (so a
// commit log from a newer Spark is refused here). File names that are not a
// batch number are ignored, as Spark ignores them: checksum files (.0.crc),
// temporary files (.0.<uuid>.tmp) and anything else. A missing commits/
// directory is fine (Spark 2.1 had none). It reads only; it creates
// nothing. Against an object store it makes four requests: metadata, the
// listings of offsets/ and commits/ (one page each up to 1000 files, and
// Spark keeps about 100), and the last commit file.
func OpenStore(s Store) (*Checkpoint, error) {
	c := &Checkpoint{Dir: s.Location(), Committed: -1, store: s, times: map[string]map[int64]time.Time{}}
	meta, err := c.readFile("metadata")
	hasMeta := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if hasMeta {
		if c.ID, err = parseStreamMetadata(meta); err != nil {
			return nil, fmt.Errorf("spark checkpoint %s: %w", s.Path("metadata"), err)
		}
	}

	var hasOffsetDir bool
	if c.Batches, hasOffsetDir, err = c.listBatchIDs("offsets"); err != nil {
		return nil, err
	}
	if !hasMeta && !hasOffsetDir {
		return nil, fmt.Errorf("spark checkpoint %s: not a Spark checkpoint (no metadata file and no offsets/ directory)", c.Dir)
	}
	if c.Commits, _, err = c.listBatchIDs("commits"); err != nil {
		return nil, err
	}
	if n := len(c.Commits); n > 0 {
		last := c.Commits[n-1]
		b, err := c.readFile(c.name("commits", last))
		if err != nil {
			return nil, err
		}
		if _, err := ParseCommitLog(b); err != nil {
			return nil, fmt.Errorf("spark checkpoint %s: %w", c.path("commits", last), err)
		}
		c.Committed = last
	}
	return c, nil
}

// Store is where the checkpoint's files are read from.
func (c *Checkpoint) Store() Store { return c.store }

// FileTime is when offsets/<id> or commits/<id> (log "offsets" or
// "commits") was written, as listed by Open; false when it was not listed
// or the listing had no time.
func (c *Checkpoint) FileTime(log string, id int64) (time.Time, bool) {
	t, ok := c.times[log][id]
	return t, ok && !t.IsZero()
}

// Exists says whether offsets/<id> or commits/<id> exists now (not as
// listed by Open). An error other than "does not exist" counts as
// existing.
func (c *Checkpoint) Exists(log string, id int64) bool {
	_, err := c.store.Stat(c.name(log, id))
	return !errors.Is(err, fs.ErrNotExist)
}

// OffsetLog reads and parses offsets/<id>. It reads the file even when id is
// not in Batches, so batches written after Open can be read.
func (c *Checkpoint) OffsetLog(id int64) (OffsetLog, error) {
	path := c.path("offsets", id)
	b, err := c.readFile(c.name("offsets", id))
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
	name := "sources/" + dir + "/0"
	path := c.store.Path(name)
	b, err := c.readFile(name)
	if err != nil {
		return nil, err
	}
	o, err := ParseInitialOffsets(b)
	if err != nil {
		return nil, fmt.Errorf("spark checkpoint %s: %w", path, err)
	}
	return o, nil
}

// name is the file of batch id in the log directory log, "offsets/7".
func (c *Checkpoint) name(log string, id int64) string {
	return log + "/" + strconv.FormatInt(id, 10)
}

// path is the file of batch id in the log directory log, for messages.
func (c *Checkpoint) path(log string, id int64) string {
	return c.store.Path(c.name(log, id))
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

// listBatchIDs lists the batch files of a log directory, ascending, and
// keeps their modification times. exists is false, with no error, when the
// directory does not exist.
func (c *Checkpoint) listBatchIDs(log string) (ids []int64, exists bool, err error) {
	entries, err := c.store.ReadDir(log)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	times := map[int64]time.Time{}
	for _, e := range entries {
		if e.Dir {
			continue
		}
		if id, ok := batchID(e.Name); ok {
			ids = append(ids, id)
			times[id] = e.ModTime
		}
	}
	slices.Sort(ids)
	c.times[log] = times
	return ids, true, nil
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

// readFile reads checkpoint file name, of at most maxFileSize bytes. A
// missing file gives an error wrapping fs.ErrNotExist.
func (c *Checkpoint) readFile(name string) ([]byte, error) {
	return c.store.ReadFile(name, maxFileSize)
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
