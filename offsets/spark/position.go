package spark

import (
	"errors"
	"fmt"
	"io/fs"
)

// Position is where a Spark query's Kafka source will carry on: the next
// offset of every partition it has read.
type Position struct {
	// Source is the source ordinal the offsets belong to (-1 for a named v2
	// source).
	Source int
	// Offsets are the next offsets to read. A partition missing here is new
	// to the query; Spark would start it at its log start offset.
	Offsets Offsets
	// Origin says which file the offsets came from and why, for the user:
	// "offsets/7 (committed batch 7)" or
	// "sources/0/0 (initial offsets, nothing committed yet)".
	Origin string
	// InFlight are the end offsets of the batch after the committed one
	// (offsets/<Committed+1>), if Spark had planned it when the file was
	// read: a batch that started and did not commit, which Spark re-runs
	// over the same range on restart. nil when there is none.
	InFlight Offsets
}

// CommittedOffsets returns the offsets the query last committed for one Kafka
// source: the source's line of offsets/<Committed>. When nothing is committed
// yet they are the source's initial offsets, sources/<i>/0, where batch 0
// starts. The values are next offsets: seek to them exactly.
//
// source is the source ordinal (the line of the offset log, the i of
// sources/<i>/), or -1 to pick the query's one Kafka source; with -1 an
// error wraps ErrNoKafkaSource when there is none and ErrSeveralKafkaSources
// when there are several. Every error names the file it is about.
func (c *Checkpoint) CommittedOffsets(source int) (Position, error) {
	if source < -1 {
		return Position{}, fmt.Errorf("spark checkpoint %s: invalid source index %d", c.Dir, source)
	}
	if c.Committed < 0 {
		return c.initialPosition(source)
	}
	id := c.Committed
	path := c.path("offsets", id)
	log, err := c.OffsetLog(id)
	if errors.Is(err, fs.ErrNotExist) {
		return Position{}, fmt.Errorf("spark checkpoint %s: missing although commits/%d exists (the offset log was purged or damaged)", path, id)
	}
	if err != nil {
		return Position{}, err
	}
	src, err := pickSource(log, source)
	if err != nil {
		return Position{}, fmt.Errorf("spark checkpoint %s: %w", path, err)
	}
	pos := Position{Source: src.Index, Offsets: src.Kafka, Origin: fmt.Sprintf("offsets/%d (committed batch %d)", id, id)}
	if src.Void {
		// The source had no offset yet: like Spark, it resumes from the
		// offsets it fetched first.
		if pos.Offsets, err = c.initialOffsets(src.dir()); err != nil {
			return Position{}, err
		}
		pos.Origin = fmt.Sprintf("sources/%s/0 (initial offsets; committed batch %d has no offset for source %s)", src.dir(), id, src.label())
	}
	if pos.InFlight, err = c.inFlight(id+1, src); err != nil {
		return Position{}, err
	}
	return pos, nil
}

// initialPosition is CommittedOffsets for a query that committed nothing.
// The offset log, if there is one, says which source is Kafka; without one,
// the sources/ directories do.
func (c *Checkpoint) initialPosition(source int) (Position, error) {
	var src SourceOffset
	switch {
	case len(c.Batches) > 0:
		id := c.Batches[len(c.Batches)-1]
		if c.Batches[0] == 0 {
			id = 0
		}
		log, err := c.OffsetLog(id)
		if err != nil {
			return Position{}, err
		}
		if src, err = pickSource(log, source); err != nil {
			return Position{}, fmt.Errorf("spark checkpoint %s: %w", c.path("offsets", id), err)
		}
	case source >= 0:
		src = SourceOffset{Index: source}
	default:
		found := c.kafkaSourceDirs()
		switch len(found) {
		case 0:
			return Position{}, fmt.Errorf("spark checkpoint %s: %w: nothing committed yet, no offset log, and no sources/<i>/0 holds Kafka offsets", c.Dir, ErrNoKafkaSource)
		case 1:
			src = found[0]
		default:
			return Position{}, fmt.Errorf("spark checkpoint %s: %w: nothing committed yet and sources/ has %s; pass a source index to choose one", c.Dir, ErrSeveralKafkaSources, describeSources(found))
		}
	}
	initial, err := c.initialOffsets(src.dir())
	if errors.Is(err, fs.ErrNotExist) {
		return Position{}, fmt.Errorf("spark checkpoint %s: nothing committed yet and sources/%s/0 does not exist (the query has not fetched its initial offsets)", c.Dir, src.dir())
	}
	if err != nil {
		return Position{}, err
	}
	pos := Position{
		Source:  src.Index,
		Offsets: initial,
		Origin:  fmt.Sprintf("sources/%s/0 (initial offsets, nothing committed yet)", src.dir()),
	}
	if pos.InFlight, err = c.inFlight(0, src); err != nil {
		return Position{}, err
	}
	return pos, nil
}

// inFlight reads src's end offsets in offsets/<id>, the batch after the
// committed one. A missing file or a source without Kafka offsets there is
// no in-flight batch (nil, nil).
func (c *Checkpoint) inFlight(id int64, src SourceOffset) (Offsets, error) {
	log, err := c.OffsetLog(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, ok := sameSource(log, src)
	if !ok {
		return nil, nil
	}
	return s.Kafka, nil
}
