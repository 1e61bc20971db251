package sparkwatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// sampleTimeout bounds the reading of one batch's samples, so a slow
// cluster delays new batches on screen by at most this much.
const sampleTimeout = 5 * time.Second

// maxMalformedPolls is how many polls in a row a batch file may be
// malformed (a partial copy, say) before the batch is skipped for good.
const maxMalformedPolls = 3

type boundsResult struct {
	bounds map[offsets.Partition]offsets.Bounds
	err    error
}

// sparkLoop owns a Watch's state; everything below runs on its one
// goroutine, except the bounds fetch, which reports on boundsDone.
type sparkLoop struct {
	w   *Watch
	ctx context.Context
	cfg Config

	parts  []offsets.Partition
	next   spark.Offsets // where the newest batch seen ends
	stored spark.Offsets // where the last committed batch ends
	bounds map[offsets.Partition]offsets.Bounds
	// committed is the checkpoint's last committed batch as last read.
	committed int64
	// lastSeen is the newest batch reported (or skipped for good).
	lastSeen int64
	// running are batches reported as planned, waiting for commits/N.
	running map[int64]*consumer.Batch
	rates   sparkRates

	fetching   bool
	boundsDone chan boundsResult

	// problem and boundsErr are the last notices of their kind, not
	// repeated while the same trouble lasts.
	problem, boundsErr, sampleErr string
	// stuck is the batch that could not be read on the last stuckPolls
	// polls.
	stuck      int64
	stuckPolls int

	// queryID is the metadata id last read: a new one means the
	// checkpoint was deleted and a new query started in its place.
	queryID string
	// first is the checkpoint as read by Start: the first poll reports
	// from it, so the batches shown at start are those of the query the
	// start event describes.
	first *spark.Checkpoint

	acked   int   // batches reported committed
	records int64 // their records
	fresh   int   // batches seen committed while watching (MaxBatches)
}

func (l *sparkLoop) run() {
	reason := "closed"
	defer func() {
		// The reader drains Events until it closes (see Events).
		l.w.events <- &consumer.Ended{Reason: reason, Batches: l.acked, Records: l.records}
		close(l.w.events)
	}()
	if !l.emit(l.w.started) {
		return
	}
	l.poll(true)
	l.first = nil
	l.progress()
	if l.cfg.Once {
		reason = "once"
		return
	}
	poll := time.NewTicker(l.cfg.Interval)
	defer poll.Stop()
	var boundsTick <-chan time.Time
	if l.cfg.Client != nil {
		t := time.NewTicker(l.cfg.BoundsInterval)
		defer t.Stop()
		boundsTick = t.C
	}
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-poll.C:
			l.poll(false)
			l.progress()
			if l.cfg.MaxBatches > 0 && l.fresh >= l.cfg.MaxBatches {
				reason = "batches"
				return
			}
		case <-boundsTick:
			l.fetchBounds()
		case r := <-l.boundsDone:
			l.fetching = false
			l.applyBounds(r)
		}
	}
}

// emit sends e unless the watch is closing.
func (l *sparkLoop) emit(e consumer.Event) bool {
	select {
	case l.w.events <- e:
		return true
	case <-l.ctx.Done():
		return false
	}
}

func (l *sparkLoop) notice(e offsets.Event) { l.emit(&consumer.Notice{Event: e}) }

// trouble reports a checkpoint problem once while it lasts.
func (l *sparkLoop) trouble(err error) {
	if msg := err.Error(); msg != l.problem {
		l.problem = msg
		l.notice(offsets.NewEvent(time.Now(), CodeSparkUnreadable, offsets.Partition{Partition: -1}, msg+"; kbatch keeps polling"))
	}
}

// poll lists the checkpoint again and reports what changed: new batches
// (at start, the newest cfg.Last of those present) and batches Spark has
// committed since.
func (l *sparkLoop) poll(initial bool) {
	cp := l.first
	if cp == nil {
		var err error
		if cp, err = spark.OpenStore(l.w.store); err != nil {
			l.trouble(err)
			return
		}
	}
	if cp.ID != "" && l.queryID != "" && cp.ID != l.queryID {
		l.recreated(cp)
		initial = false // the new query's batches are all shown, also at the first poll
	}
	if cp.ID != "" {
		l.queryID = cp.ID
	}
	var ids []int64
	for _, id := range cp.Batches {
		if id > l.lastSeen {
			ids = append(ids, id)
		}
	}
	if initial && len(ids) > l.cfg.Last {
		l.lastSeen = ids[len(ids)-l.cfg.Last-1] // older ones are not shown
		ids = ids[len(ids)-l.cfg.Last:]
	}
	ok := true
	for i, id := range ids {
		if ok = l.readBatch(cp, id, initial, !initial || i == len(ids)-1); !ok {
			break // retried on the next poll
		}
	}
	if cp.Committed != l.committed {
		pos, err := cp.CommittedOffsets(l.w.source)
		if err != nil {
			l.trouble(err)
			return
		}
		l.stored, l.committed = pos.Offsets, cp.Committed
		l.parts = sortedPartitions(l.next, l.stored)
	}
	running := make([]int64, 0, len(l.running))
	for id := range l.running {
		running = append(running, id)
	}
	slices.Sort(running)
	for _, id := range running {
		if id <= cp.Committed {
			l.commit(cp, id)
		}
	}
	if ok {
		l.problem = ""
	}
}

// readBatch reports Spark batch id. It returns false when the batch should
// be read again on the next poll (a file that could not be read, maybe
// still being copied in). A batch whose start was purged is skipped with a
// notice, and so is one whose files stay malformed, or from a newer Spark,
// for maxMalformedPolls polls.
func (l *sparkLoop) readBatch(cp *spark.Checkpoint, id int64, initial, sample bool) bool {
	br, err := cp.Batch(id, l.w.source)
	if err == nil {
		if err = checkSparkTopics(br.Start); err == nil {
			err = checkSparkTopics(br.End)
		}
		if err != nil {
			err = fmt.Errorf("spark checkpoint %s: %w", logPath(cp, "offsets", id), err)
		}
	}
	if err != nil {
		if !exists(cp, "offsets", id) {
			l.lastSeen = id // purged since the listing
			return true
		}
		if id > 0 && !exists(cp, "offsets", id-1) {
			l.lastSeen = id
			if initial && len(cp.Batches) > 1 && id == cp.Batches[0] {
				// The oldest batch Spark keeps always starts in a purged
				// file: that is retention, not news, and is not said at
				// every start (it still is when it is the only batch, or
				// nothing would explain the empty screen).
				return true
			}
			l.notice(offsets.NewEvent(time.Now(), CodeSparkPurged, offsets.Partition{Partition: -1}, fmt.Sprintf(
				"spark batch %d is not shown: offsets/%d, where it starts, was purged by Spark (it keeps the last spark.sql.streaming.minBatchesToRetain batches, default 100)",
				id, id-1)))
			return true
		}
		l.trouble(err)
		if l.stuck != id {
			l.stuck, l.stuckPolls = id, 0
		}
		l.stuckPolls++
		var uv *spark.UnsupportedVersionError
		if (errors.Is(err, spark.ErrMalformed) || errors.As(err, &uv)) && l.stuckPolls >= maxMalformedPolls {
			// Not a file being copied in: Spark could not read it either.
			l.lastSeen = id
			l.notice(offsets.NewEvent(time.Now(), CodeSparkUnreadable, offsets.Partition{Partition: -1},
				fmt.Sprintf("spark batch %d is not shown: %s", id, err)))
			return true
		}
		return false
	}
	b, notices := sparkBatch(br, l.batchTime(br.Log, cp, id), l.bounds)
	if br.Committed {
		b.Duration, b.AckedAt = took(cp, id)
	}
	if sample {
		b.Samples = l.sample(b)
	}
	for _, n := range notices {
		l.notice(n)
	}
	if !l.emit(&consumer.BatchEvent{Batch: b}) {
		return false
	}
	l.rates.add(b, time.Now())
	l.lastSeen = id
	l.next = br.End
	l.parts = sortedPartitions(l.next, l.stored)
	if br.Committed {
		l.acked++
		l.records += b.Records
		if !initial {
			l.fresh++
		}
	} else {
		l.running[id] = b
	}
	return true
}

// commit reports running batch id as committed.
func (l *sparkLoop) commit(cp *spark.Checkpoint, id int64) {
	b := *l.running[id]
	delete(l.running, id)
	b.State = offsets.StateAcked
	b.Duration, b.AckedAt = took(cp, id)
	if l.emit(&consumer.BatchEvent{Batch: &b}) {
		l.acked++
		l.records += b.Records
		l.fresh++
	}
}

// batchTime is when Spark planned batch id: batchTimestampMs of its offset
// log, else the file's modification time, else now.
func (l *sparkLoop) batchTime(log spark.OffsetLog, cp *spark.Checkpoint, id int64) time.Time {
	if t, ok := log.BatchTime(); ok {
		return t
	}
	if t, ok := cp.FileTime("offsets", id); ok {
		return t
	}
	return time.Now()
}

// took is how long Spark ran batch id, from writing offsets/id to writing
// commits/id, and when it committed, as the checkpoint's listing says; zero
// when it does not.
func took(cp *spark.Checkpoint, id int64) (time.Duration, time.Time) {
	c, ok := cp.FileTime("commits", id)
	if !ok {
		return 0, time.Time{}
	}
	o, ok := cp.FileTime("offsets", id)
	if !ok {
		return 0, c
	}
	return max(0, c.Sub(o)), c
}

func logPath(cp *spark.Checkpoint, log string, id int64) string {
	return cp.Store().Path(log + "/" + strconv.FormatInt(id, 10))
}

func exists(cp *spark.Checkpoint, log string, id int64) bool {
	return cp.Exists(log, id)
}

// recreated reports that the checkpoint now belongs to another query (its
// metadata id changed: it was deleted and a query started afresh in the
// same place) and starts over with the new query's batches.
func (l *sparkLoop) recreated(cp *spark.Checkpoint) {
	l.notice(offsets.NewEvent(time.Now(), CodeSparkRecreated, offsets.Partition{Partition: -1}, fmt.Sprintf(
		"spark checkpoint %s was recreated: its query id changed from %s to %s; showing the new query's batches from batch 0",
		cp.Dir, l.queryID, cp.ID)))
	l.lastSeen = -1
	l.committed = -1
	clear(l.running)
	l.stuck, l.stuckPolls = -1, 0
}
