package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Options tune Run. The zero value is usable.
type Options struct {
	// Concurrency is how many partitions are read at once; 0 means 8.
	Concurrency int
	// FetchBytes is the size asked of each fetch; 0 means 2 MiB. A batch
	// larger than that is still read: the fetch grows to take it.
	FetchBytes int32
	// BufferBytes bounds the records read and not yet written, as they
	// take memory decoded (decompressed); readers wait while it is
	// reached, so memory holds it plus one fetch answer per partition
	// read at once. 0 means 16 MiB.
	BufferBytes int64
	// Progress, when set, gets a progress line redrawn in place ('\r') at
	// most ten times a second and erased at the end. Give it a terminal
	// only.
	Progress io.Writer
	// ProgressWidth is the terminal's width; the line is cut to fit. 0
	// means 80 columns.
	ProgressWidth int
}

// Report is the outcome of a Run, complete or not.
type Report struct {
	// Partitions follow the order of the tasks given to Run.
	Partitions []PartitionReport
	// Committed is set when the read skipped aborted transactions; the end
	// of each partition is then its last stable offset.
	Committed bool
	Records   int64
	Bytes     int64
	Elapsed   time.Duration
}

// PartitionReport is what happened to one task.
type PartitionReport struct {
	Task
	// Position is the next offset the read reached; Read.Until when the
	// partition was read to the end.
	Position int64
	Records  int64
	Bytes    int64
	// Missing lists requested offsets that no longer exist: below the log
	// start when planned, or deleted by retention during the read.
	Missing []offsets.Range
}

// Complete reports whether the partition was read to Read.Until.
func (p PartitionReport) Complete() bool { return p.Position >= p.Read.Until }

// Empty is the number of offsets read past that held no record for the
// reader: transaction markers, compacted records and, when reading
// committed, aborted ones. Offsets deleted during the read are not counted.
func (p PartitionReport) Empty() int64 {
	n := p.Position - p.Read.From - p.Records
	for _, m := range p.Missing {
		lo, hi := max(m.From, p.Read.From), min(m.Until, p.Position)
		if hi > lo {
			n -= hi - lo
		}
	}
	return max(n, 0)
}

// MissingOffsets is the number of requested offsets that no longer exist.
func (r *Report) MissingOffsets() int64 {
	var n int64
	for _, p := range r.Partitions {
		for _, m := range p.Missing {
			n += m.Span()
		}
	}
	return n
}

// Run reads the tasks, Options.Concurrency partitions at a time, and hands
// the records to sink one Write at a time: each task's records in offset
// order, the tasks of one partition one after the other in the order
// given, different partitions interleaved. When all tasks were read it closes the sink; when
// anything failed, or ctx ended, it aborts it. Run owns sink from the call
// on. The client is only used, not closed; Run never commits offsets or
// joins a group.
//
// The error is the first failure (reading, writing, closing, ctx's), else a
// *PartialError when requested offsets no longer existed, else nil. The
// report is filled in either case.
func Run(ctx context.Context, client *kafka.Client, tasks []Task, sink Sink, opts Options) (*Report, error) {
	start := time.Now()
	opts = opts.withDefaults()
	rd := newReader(client, opts.FetchBytes, newBuffered(opts.BufferBytes))
	rep, total := newReport(tasks, rd.committed())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := startReaders(ctx, rd, tasks, opts.Concurrency)

	var bar *progressBar
	var tick <-chan time.Time
	if opts.Progress != nil {
		bar = &progressBar{w: opts.Progress, width: opts.ProgressWidth, total: total, start: start}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	var firstErr error
	var covered int64
	for open := true; open; {
		select {
		case c, ok := <-chunks:
			if !ok {
				open = false
				break
			}
			n, err := rep.take(c, rd.buffer, sink, firstErr != nil)
			covered += n
			if err != nil && firstErr == nil {
				firstErr = err
				cancel()
			}
		case now := <-tick:
			bar.draw(now, rep.Records, covered)
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err() // the caller's ctx ended
	}
	if bar != nil {
		bar.clear()
	}
	err := rep.finish(sink, firstErr)
	rep.Elapsed = time.Since(start)
	return rep, err
}

// withDefaults fills in the zero values of o.
func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.FetchBytes <= 0 {
		o.FetchBytes = 2 << 20
	}
	if o.BufferBytes <= 0 {
		o.BufferBytes = 16 << 20
	}
	if o.ProgressWidth <= 0 {
		o.ProgressWidth = 80
	}
	return o
}

// newReport is the report of tasks before anything is read, and the
// offsets they span.
func newReport(tasks []Task, committed bool) (*Report, int64) {
	rep := &Report{Partitions: make([]PartitionReport, len(tasks)), Committed: committed}
	var total int64
	for i, t := range tasks {
		pr := PartitionReport{Task: t, Position: t.Read.From}
		if m := t.Missing(); m.Span() > 0 {
			pr.Missing = append(pr.Missing, m)
		}
		rep.Partitions[i] = pr
		total += t.Read.Span()
	}
	return rep, total
}

// take applies one chunk of a reader to the report, writing its records
// to sink, and returns how many offsets it covered and the error that
// ends the run, if any: a reader's (not a cancel's), or the sink's. While
// draining after an error, records are dropped and their memory given
// back.
func (rep *Report) take(c chunk, buf *buffered, sink Sink, draining bool) (int64, error) {
	if c.done {
		if c.err != nil && !errors.Is(c.err, context.Canceled) {
			return 0, c.err
		}
		return 0, nil
	}
	if draining {
		buf.release(c.mem)
		return 0, nil
	}
	if len(c.msgs) > 0 {
		err := sink.Write(c.msgs)
		buf.release(c.mem)
		if err != nil {
			return 0, err
		}
	}
	pr := &rep.Partitions[c.task]
	if c.missing != nil {
		pr.Missing = append(pr.Missing, *c.missing)
	}
	covered := c.next - pr.Position
	pr.Position = c.next
	pr.Records += int64(len(c.msgs))
	pr.Bytes += c.bytes
	rep.Records += int64(len(c.msgs))
	rep.Bytes += c.bytes
	return covered, nil
}

// finish ends the sink after the readers stopped: Abort after an error
// (a cancel reads "replay interrupted") or a partition short of its end,
// else Close, whose error is the run's; a complete run that found
// offsets deleted returns a *PartialError.
func (rep *Report) finish(sink Sink, err error) error {
	if err != nil {
		sink.Abort()
		if errors.Is(err, context.Canceled) {
			return errors.New("replay interrupted")
		}
		return err
	}
	for _, p := range rep.Partitions {
		if !p.Complete() { // cannot happen without an error; refuse to close
			sink.Abort()
			return fmt.Errorf("%s stopped at offset %d, before %d", p.Read.Partition, p.Position, p.Read.Until)
		}
	}
	if err := sink.Close(); err != nil {
		return err
	}
	if rep.MissingOffsets() > 0 {
		return newPartialError(rep)
	}
	return nil
}

// startReaders reads tasks on up to conc goroutines and returns the
// channel their chunks come on, closed after the last task's done chunk.
// The caller must drain it. Tasks of one partition are read one after the
// other in task order, so a partition's records come out in RANGE order;
// partitions are read concurrently.
func startReaders(ctx context.Context, rd *reader, tasks []Task, conc int) <-chan chunk {
	lanes := partitionLanes(tasks)
	conc = max(min(conc, len(lanes)), 1)
	chunks := make(chan chunk, conc)
	work := make(chan []int)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lane := range work {
				for _, i := range lane {
					err := rd.read(ctx, i, tasks[i], func(c chunk) error {
						chunks <- c // drained until closed
						return ctx.Err()
					})
					chunks <- chunk{task: i, done: true, err: err}
				}
			}
		}()
	}
	go func() {
		defer close(work)
		for _, lane := range lanes {
			select {
			case work <- lane:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(chunks)
	}()
	return chunks
}

// partitionLanes groups task indices by partition, in order of first
// appearance, each lane in task order.
func partitionLanes(tasks []Task) [][]int {
	idx := map[offsets.Partition]int{}
	var lanes [][]int
	for i, t := range tasks {
		l, ok := idx[t.Read.Partition]
		if !ok {
			l = len(lanes)
			idx[t.Read.Partition] = l
			lanes = append(lanes, nil)
		}
		lanes[l] = append(lanes[l], i)
	}
	return lanes
}
