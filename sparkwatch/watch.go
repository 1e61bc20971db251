package sparkwatch

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/offsets/spark/objstore"
	"github.com/kbatch-dev/kbatch/record"
)

// SampleReader reads a few records of exact ranges for kbatch spark's
// records pane: the records of each range in offset order, nothing outside
// the ranges. Ranges may lie partly below the log start or beyond the end;
// what exists is read. The records are the reader's own copies, sharing no
// bytes with a fetch answer (consumer.Batch.Samples): the screen keeps
// them as they are. ReplaySampler is the one kbatch uses.
type SampleReader interface {
	Sample(ctx context.Context, ranges []offsets.Range) ([]*record.Record, error)
}

// Config configures a watch of a Spark Structured Streaming
// checkpoint (kbatch spark).
type Config struct {
	// Dir is the query's checkpointLocation: a folder or an object-store
	// URL (package objstore). It is only ever read.
	Dir string
	// Source is the ordinal of the Kafka source, or -1 for the query's
	// only one.
	Source int
	// Client reaches the cluster for log bounds (lag) and samples; nil
	// shows the batches from the files alone. The caller owns it; it must
	// outlive the watch.
	Client  *kafka.Client
	Brokers []string
	// Interval is how often the folder is polled; default 1s.
	Interval time.Duration
	// BoundsInterval is how often log starts and high watermarks are
	// fetched; default 3s.
	BoundsInterval time.Duration
	// Last is how many of the batches already in the checkpoint are shown
	// at start, newest last; 0 shows none. Negative is invalid.
	Last int
	// Samples is how many records per partition are read for each new
	// batch (and the newest at start); 0 reads none. Sampler reads them;
	// nil reads them from Client with package replay (ReplaySampler).
	Samples int
	Sampler SampleReader
	// Once ends the watch after the batches present at start
	// (consumer.Ended.Reason "once"). MaxBatches ends it after that many batches
	// were seen committed while watching (reason "batches"); batches
	// committed before the start do not count. 0: no limit.
	Once       bool
	MaxBatches int
	// Events is the capacity of the event channel; default 64.
	Events int
}

func (c *Config) defaults() error {
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.BoundsInterval == 0 {
		c.BoundsInterval = 3 * time.Second
	}
	if c.Events == 0 {
		c.Events = 64
	}
	switch {
	case c.Interval < 0:
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --interval %s: must be positive", c.Interval)}
	case c.Source < -1:
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --source %d: want a source index, 0 or more", c.Source)}
	case c.Last < 0:
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --last %d: must be 0 or more", c.Last)}
	case c.Samples < 0:
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --samples %d: must be 0 or more", c.Samples)}
	case c.MaxBatches < 0:
		return &offsets.UsageError{Msg: fmt.Sprintf("invalid --batches %d: must be 0 or more", c.MaxBatches)}
	}
	if c.Sampler == nil && c.Client != nil {
		c.Sampler = ReplaySampler{Client: c.Client}
	}
	return nil
}

// Watch follows a Spark Structured Streaming query through its
// checkpoint folder and reports its Kafka batches with the stream's event
// types: *consumer.Started (every partition the query reads, at the newest batch's
// end), a *consumer.BatchEvent per Spark batch (planned while Spark runs it, acked
// once commits/N exists; the batch id is the Spark batch id), *consumer.Progress
// with lag to the high watermark, *consumer.Notice for files it cannot read and
// batches it cannot show, and *consumer.Ended. The folder is only read.
//
// Its methods may be called from any goroutine. It has no controls: the
// batches are Spark's, so kbatch can neither pause, seek nor ack them (a
// screen shows it read-only).
type Watch struct {
	cfg     Config
	store   objstore.Store
	loc     string
	queryID string
	source  int
	events  chan consumer.Event
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started *consumer.Started
}

// Start reads the checkpoint, checks that its topics exist on the
// cluster (when there is one), and starts polling. Errors here are about
// the checkpoint (unreadable, from a newer Spark: its file and version are
// named; no Kafka source, or several without Source: wrapping
// spark.ErrNoKafkaSource / spark.ErrSeveralKafkaSources), the cluster, or
// a checkpoint topic the cluster lacks (wrapping kafka.ErrUnknownTopic). After
// Start, problems arrive as *consumer.Notice events and the watch keeps going.
func Start(ctx context.Context, cfg Config) (*Watch, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	store, err := objstore.Open(ctx, cfg.Dir)
	if err != nil {
		return nil, err
	}
	w, err := start(ctx, cfg, store)
	if err != nil {
		_ = store.Close()
	}
	return w, err
}

func start(ctx context.Context, cfg Config, store objstore.Store) (*Watch, error) {
	cp, err := spark.OpenStore(store)
	if err != nil {
		return nil, err
	}
	pos, err := cp.CommittedOffsets(cfg.Source)
	if err != nil {
		return nil, err
	}
	w := &Watch{cfg: cfg, store: store, loc: store.Location(), queryID: cp.ID, source: pos.Source}
	if w.source < 0 {
		w.source = cfg.Source // a named v2 source: found again by content
	}
	next := pos.Offsets
	if n := len(cp.Batches); n > 0 {
		if next, err = w.endOffsets(cp, cp.Batches[n-1]); err != nil {
			return nil, err
		}
	}
	for _, o := range []spark.Offsets{next, pos.Offsets} {
		if err := checkSparkTopics(o); err != nil {
			return nil, fmt.Errorf("spark checkpoint %s: %w", cp.Dir, err)
		}
	}
	parts := sortedPartitions(next, pos.Offsets)
	topics := topicsOf(parts)
	bounds := map[offsets.Partition]offsets.Bounds{}
	if cfg.Client != nil {
		if _, err := kafka.TopicPartitions(cfg.Client, topics); err != nil {
			return nil, fmt.Errorf("the checkpoint's topics: %w (is this the query's cluster?)", err)
		}
		if bounds, err = kafka.ListBounds(cfg.Client, parts); err != nil {
			return nil, fmt.Errorf("reading log starts and high watermarks: %w", err)
		}
	}
	brokers := cfg.Brokers
	if brokers == nil {
		brokers = []string{}
	}
	st := &consumer.Started{Stream: "spark:" + path.Base(filepath.ToSlash(cp.Dir)), Brokers: brokers, Topics: topics}
	for _, s := range sparkStatuses(parts, next, pos.Offsets, bounds, nil) {
		st.Starts = append(st.Starts, offsets.Start{Partition: s.Partition, NextOffset: s.NextOffset, Source: s.Source, Bounds: s.Bounds})
	}
	w.started = st
	w.events = make(chan consumer.Event, cfg.Events)
	ctx, w.cancel = context.WithCancel(ctx)
	l := &sparkLoop{w: w, ctx: ctx, cfg: cfg, queryID: cp.ID, parts: parts, next: next, stored: pos.Offsets, committed: cp.Committed,
		bounds: bounds, lastSeen: -1, stuck: -1, running: map[int64]*consumer.Batch{}, rates: sparkRates{window: sparkRateWindow},
		boundsDone: make(chan boundsResult, 1), first: cp}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer store.Close()
		l.run()
	}()
	return w, nil
}

// endOffsets reads the watched source's line of offsets/<id>: where batch
// id ends.
func (w *Watch) endOffsets(cp *spark.Checkpoint, id int64) (spark.Offsets, error) {
	log, err := cp.OffsetLog(id)
	if err != nil {
		return nil, err
	}
	var found []spark.SourceOffset
	for _, s := range log.Sources {
		if (w.source >= 0 && s.Index == w.source) || (w.source < 0 && s.Kafka != nil) {
			found = append(found, s)
		}
	}
	path := logPath(cp, "offsets", id)
	switch {
	case len(found) != 1:
		return nil, fmt.Errorf("spark checkpoint %s: %w: cannot tell which line is the Kafka source", path, spark.ErrNoKafkaSource)
	case found[0].Void:
		return spark.Offsets{}, nil
	case found[0].Kafka == nil:
		return nil, fmt.Errorf("spark checkpoint %s: %w: source %d's offset is not Kafka offset JSON", path, spark.ErrNoKafkaSource, w.source)
	}
	return found[0].Kafka, nil
}

// Events is the watch's event channel, closed after *consumer.Ended. Its reader
// must keep reading until then, also after Close.
func (w *Watch) Events() <-chan consumer.Event { return w.events }

// Started returns the start event, which is also the first on Events.
func (w *Watch) Started() *consumer.Started { return w.started }

// Checkpoint is the checkpoint watched: the folder, cleaned, or the URL
// without its query.
func (w *Watch) Checkpoint() string {
	if w.loc == "" {
		return filepath.Clean(w.cfg.Dir)
	}
	return w.loc
}

// Requests is how many requests the watch has sent to the object store so
// far (0 for a folder).
func (w *Watch) Requests() int64 { return w.store.Requests() }

// Close stops polling and waits for the watch to end; the reader of
// Events gets *consumer.Ended (reason "closed") and the channel closes.
func (w *Watch) Close() error {
	w.cancel()
	w.wg.Wait()
	return nil
}
