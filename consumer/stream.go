package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Stream is a running direct stream. Its methods may be called from any
// goroutine; the work happens in one loop goroutine, which owns all state.
type Stream struct {
	cfg Config
	// ctx ends when the stream is closed; the broker calls made for a
	// command (Seek) stop retrying then.
	ctx     context.Context
	events  chan Event
	cmds    chan command
	done    chan struct{}
	cancel  context.CancelFunc
	started *Started
	wg      sync.WaitGroup
}

// command is a request to the loop; reply gets its outcome.
type command struct {
	kind   commandKind
	p      offsets.Partition
	offset int64
	id     uint64
	reply  chan error
	// bounds and note come with a seek of SeekTargets: the bounds it was
	// resolved against, and why it moved elsewhere than asked.
	bounds offsets.Bounds
	note   string
	// targets are the moves of a cmdSeekAll.
	targets []SeekTarget
}

type commandKind int

const (
	cmdPauseAll commandKind = iota
	cmdResumeAll
	cmdPause
	cmdResume
	cmdSeek
	cmdSeekAll
	cmdAck
	cmdCut
)

// Start resolves where every partition begins (explicit → stored → reset),
// records it, starts reading and returns. Errors here are usage errors
// (unknown topic or partition, bad spec, strict offsets) or failures to
// reach the cluster or the store; after Start, problems arrive as events.
//
// The first event on Events is the same *Started that Start returns.
func Start(ctx context.Context, cfg Config) (*Stream, *Started, error) {
	if err := cfg.defaults(); err != nil {
		return nil, nil, err
	}
	if cfg.Log != nil {
		if cfg.Store != nil {
			cfg.Store = loggedStore{Store: cfg.Store, l: cfg.Log}
		}
		cfg.Processor = loggedProcessor{p: cfg.Processor, l: cfg.Log}
	}
	plan, err := planStart(cfg)
	if err != nil {
		return nil, nil, err
	}
	starts, pending := plan.starts, plan.pending
	logStarts(cfg.Log, starts, pending)
	ctx, cancel := context.WithCancel(ctx)
	s := &Stream{
		cfg:    cfg,
		ctx:    ctx,
		events: make(chan Event, cfg.Events),
		cmds:   make(chan command),
		done:   make(chan struct{}),
		cancel: cancel,
	}
	s.started = &Started{Stream: cfg.Name, Brokers: cfg.Brokers, Topics: cfg.Topics, Starts: starts, Redelivering: pending}
	l, err := newLoop(ctx, s, starts, plan.bounds, pending, plan.ids)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if cfg.Store != nil {
		if err := persistStarts(cfg, starts, pending); err != nil {
			l.shutdown()
			cancel()
			return nil, nil, err
		}
	}
	s.events <- s.started
	for _, n := range plan.notices {
		if cfg.Store != nil && n.Code != offsets.CodeDropped { // DropPending recorded it
			_ = cfg.Store.AddEvent(cfg.Name, n)
		}
		s.events <- &Notice{n}
	}
	if cfg.Store != nil && len(plan.recreated) > 0 {
		// Only now, with its event stored and the stream started, is a
		// recreated topic's new id stored: a start that failed reports
		// the recreation again next time.
		ids := make(map[string]string, len(plan.recreated))
		for t := range plan.recreated {
			ids[t] = plan.ids[t]
		}
		if err := cfg.Store.EnsureStreamOn(cfg.Name, plan.clusterID, cfg.Brokers, cfg.Topics, ids); err != nil {
			l.shutdown()
			cancel()
			return nil, nil, err
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		l.run()
	}()
	return s, s.started, nil
}

// startPlan is where a stream starts, decided before anything is read.
type startPlan struct {
	bounds map[offsets.Partition]offsets.Bounds
	starts []offsets.Start
	// pending is the planned batch re-delivered first; nil when none.
	pending *offsets.Batch
	// notices are the events of the start (data loss, a stream taken
	// over, a planned batch dropped), in the order they are reported.
	notices []offsets.Event
	// ids are the topics' ids (KIP-516) the stream reads them under;
	// a topic the cluster gives no id for is missing.
	ids map[string]string
	// recreated are the topics whose id is not the one stored: their new
	// ids are stored once the start's events are (Start).
	recreated map[string]bool
	clusterID string
}

// planStart asks the cluster for the partitions and their bounds, reads
// the stored positions and planned batch, and resolves where each
// partition starts (offsets.ResolveStarts). A planned batch that cannot
// be re-delivered as it was is dropped here (recorded in the store);
// with FailOnDataLoss, data loss at the start is a *DataLossError.
func planStart(cfg Config) (startPlan, error) {
	// The ids first: a topic created again after this is seen as such
	// while running (loop.onRecreated), and its bounds are the new ones.
	ids, _ := topicIDs(cfg.Client, cfg.Topics) // none when unknown: no check
	parts, err := kafka.TopicPartitions(cfg.Client, cfg.Topics)
	if err != nil {
		return startPlan{}, err
	}
	in := offsets.StartInput{
		Explicit:     cfg.Explicit,
		StoredSource: offsets.SourceStored,
		Reset:        cfg.Reset,
		Strict:       cfg.Strict,
		Now:          time.Now(),
	}
	var pending *offsets.Batch
	var info offsets.StreamInfo
	var notices []offsets.Event
	var recreated map[string]bool
	var clusterID string
	if cfg.Store != nil {
		changed, gone, cluster, err := takeStream(cfg, ids)
		if err != nil {
			return startPlan{}, err
		}
		notices, recreated, clusterID = changed, gone, cluster
		if info, _, err = cfg.Store.Stream(cfg.Name); err != nil {
			return startPlan{}, err
		}
		in.Stored = info.Next
		if pending, err = cfg.Store.Pending(cfg.Name); err != nil {
			return startPlan{}, err
		}
	}
	// The bounds once the stream is taken (its first read waits for
	// another writer of it to let go of a folder store's file): the
	// positions it stored meanwhile lie below the high watermark read now,
	// never above one read before.
	bounds, err := kafka.ListBounds(cfg.Client, parts)
	if err != nil {
		return startPlan{}, fmt.Errorf("reading log starts and high watermarks: %w", err)
	}
	in.Partitions = bounds
	if cfg.Imported != nil {
		in.Stored, in.StoredSource = cfg.Imported, offsets.SourceImport
	}
	in.ReadTopics = make(map[string]bool)
	for p := range in.Stored {
		in.ReadTopics[p.Topic] = true
	}
	redeliver, dropWhy := usablePending(pending, bounds, recreated, info.Moved, info.Seeks, cfg.Explicit, cfg.Imported != nil)
	if redeliver != nil {
		// The batch is read again from its ranges' starts: those are the
		// positions to check against the log start (a range retention
		// passed is data loss, reported once, here).
		stored := maps.Clone(in.Stored)
		if stored == nil {
			stored = map[offsets.Partition]int64{}
		}
		for _, r := range redeliver.Ranges {
			stored[r.Partition] = r.From
		}
		in.Stored = stored
	}
	if lookups := offsets.TimeLookups(bounds, cfg.Explicit); len(lookups) > 0 {
		if in.TimeOffsets, err = kafka.ListOffsetsForTimes(cfg.Client, lookups); err != nil {
			return startPlan{}, fmt.Errorf("looking up offsets by time: %w", err)
		}
	}
	starts, resolved, err := offsets.ResolveStarts(in)
	if err != nil {
		return startPlan{}, err
	}
	notices = append(notices, resolved...)
	atStake := explainRecreated(notices, starts)
	if err := failOnDataLoss(cfg, notices, atStake); err != nil {
		return startPlan{}, err
	}
	if pending != nil && redeliver == nil {
		n := droppedEvent(pending, dropWhy)
		if err := cfg.Store.DropPending(cfg.Name, pending.ID, n); err != nil {
			return startPlan{}, err
		}
		notices = append([]offsets.Event{n}, notices...)
	}
	markMoved(starts, info, redeliver)
	return startPlan{bounds: bounds, starts: starts, pending: redeliver, notices: notices, ids: ids, recreated: recreated, clusterID: clusterID}, nil
}

// failOnDataLoss is --fail-on-data-loss at the start: the first data loss
// or out-of-range start among notices, or a topic recreated whose stored
// positions are used (recreated), recorded as stopping the stream,
// becomes a *DataLossError; nil without the flag or without such a
// notice.
func failOnDataLoss(cfg Config, notices []offsets.Event, recreated map[string]bool) error {
	if !cfg.FailOnDataLoss {
		return nil
	}
	for _, n := range notices {
		if n.Code == offsets.CodeDataLoss || n.Code == offsets.CodeOutOfRange || (n.Code == offsets.CodeRecreated && recreated[n.Topic]) {
			n = stopping(n)
			if cfg.Store != nil {
				if err := cfg.Store.AddEvent(cfg.Name, n); err != nil {
					return err
				}
			}
			return &DataLossError{Event: n}
		}
	}
	return nil
}

// Events is the stream's event channel. It is closed after *Ended.
func (s *Stream) Events() <-chan Event { return s.events }

// Started returns the start event.
func (s *Stream) Started() *Started { return s.started }

// Close stops the stream cleanly: a batch being processed is finished and
// acked, nothing half-written is left; a batch waiting for a manual ack stays
// planned and is re-delivered on the next start. It waits for the loop to
// end. Events still buffered may be read after Close; the channel is closed.
func (s *Stream) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// Done is closed when the loop has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// ErrEnded is returned by commands sent after the stream ended.
var ErrEnded = errors.New("the stream has ended")

func (s *Stream) send(c command) error {
	c.reply = make(chan error, 1)
	select {
	case s.cmds <- c:
	case <-s.done:
		return ErrEnded
	}
	select {
	case err := <-c.reply:
		return err
	case <-s.done:
		return ErrEnded
	}
}

// PauseAll stops fetching and cutting batches until ResumeAll.
func (s *Stream) PauseAll() error { return s.send(command{kind: cmdPauseAll}) }

// ResumeAll undoes PauseAll.
func (s *Stream) ResumeAll() error { return s.send(command{kind: cmdResumeAll}) }

// Pause stops fetching one partition; records already read still go into
// the next batch.
func (s *Stream) Pause(p offsets.Partition) error { return s.send(command{kind: cmdPause, p: p}) }

// Resume undoes Pause.
func (s *Stream) Resume(p offsets.Partition) error { return s.send(command{kind: cmdResume, p: p}) }

// Ack acks the batch waiting for a manual ack; id must be that batch's.
func (s *Stream) Ack(id uint64) error { return s.send(command{kind: cmdAck, id: id}) }

// CutNow cuts a batch from what has been read so far without waiting for
// the interval (the TUI's "next batch" in manual-ack mode).
func (s *Stream) CutNow() error { return s.send(command{kind: cmdCut}) }

// Seek moves one partition to the offset spec resolves to (an offset,
// earliest, latest, -N or @time). Records of that partition read but not
// yet in a batch are dropped; its next range starts at the new offset and
// is marked as a jump; the move is recorded as a "seek" event and stored.
// An offset outside [log start, high watermark] is refused.
func (s *Stream) Seek(p offsets.Partition, spec offsets.Spec) (int64, error) {
	bounds, err := kafka.ListBoundsContext(s.ctx, s.cfg.Client, []offsets.Partition{p})
	if err != nil {
		return 0, err
	}
	b, ok := bounds[p]
	if !ok {
		return 0, &offsets.UsageError{Msg: fmt.Sprintf("unknown partition %s", p)}
	}
	tOff := int64(-1)
	if spec.Kind == offsets.SpecTime {
		m, err := kafka.ListOffsetsForTimes(s.cfg.Client, map[offsets.Partition]time.Time{p: spec.Time})
		if err != nil {
			return 0, err
		}
		tOff = m[p]
	}
	target := spec.Resolve(b, tOff)
	if target < b.LogStart || target > b.HighWatermark {
		return 0, &offsets.UsageError{Msg: fmt.Sprintf("cannot seek %s to %d: the partition holds offsets %d to %d (log start to high watermark)", p, target, b.LogStart, b.HighWatermark)}
	}
	return target, s.send(command{kind: cmdSeek, p: p, offset: target})
}

// takeStream checks the stored stream against the cluster and topics of
// this run, then records them. Another cluster or other topics under a
// derived name is a usage error (the stored offsets belong elsewhere); an
// explicit name takes the stream over, and the returned event says what
// changed. A topic whose id (KIP-516) is not the one stored was deleted
// and created again since (or, rarely, had its id changed: KAFKA-12835):
// recreated names it, with an event that says so. Its stored positions
// are kept: only the user can tell whether they still mean anything, and
// reading the topic again from its start would deliver twice whatever a
// run acked after the topic was created again while it ran. Its new id is
// not stored here but by Start, once the start's events are: a start that
// fails reports the recreation again next time.
func takeStream(cfg Config, ids map[string]string) (events []offsets.Event, recreated map[string]bool, clusterID string, err error) {
	clusterID, _ = kafka.ClusterID(cfg.Client, cfg.Topics) // "" when unknown: no check
	prev, existed, err := cfg.Store.Stream(cfg.Name)
	if err != nil {
		return nil, nil, "", err
	}
	var changed []string
	if existed {
		changed = offsets.StreamChanges(prev, clusterID, cfg.Topics)
	}
	if len(changed) > 0 && !cfg.NameExplicit {
		return nil, nil, "", &offsets.UsageError{Msg: fmt.Sprintf(
			"stream %s in the store was made for another cluster or other topics (%s), and its offsets belong there; "+
				"pass --name %s to take it over here, or --name NEW to start a new stream", cfg.Name, strings.Join(changed, "; "), cfg.Name)}
	}
	keep := ids // the ids stored now: not those of recreated topics
	for _, t := range cfg.Topics {
		was, now := prev.TopicIDs[t], ids[t]
		if was == "" || now == "" || was == now {
			continue
		}
		if recreated == nil {
			recreated = map[string]bool{}
			keep = maps.Clone(ids)
		}
		recreated[t] = true
		delete(keep, t)
		e := offsets.NewEvent(time.Now(), offsets.CodeRecreated, offsets.Partition{Topic: t, Partition: -1},
			fmt.Sprintf("topic %s has another id than when this stream last ran (%s, was %s): it was deleted and created again, "+
				"or its id was changed; reading resumes at the stored positions, so records of the new topic below them are not read "+
				"(-o %s=earliest reads it from its start)", t, now, was, t))
		events = append(events, e)
	}
	if err := cfg.Store.EnsureStreamOn(cfg.Name, clusterID, cfg.Brokers, cfg.Topics, keep); err != nil {
		return nil, nil, "", err
	}
	if len(changed) > 0 {
		e := offsets.NewEvent(time.Now(), offsets.CodeStreamChanged, offsets.Partition{},
			fmt.Sprintf("stream %s taken over (--name): %s", cfg.Name, strings.Join(changed, "; ")))
		e.Partition = -1
		events = append([]offsets.Event{e}, events...)
	}
	return events, recreated, clusterID, nil
}
