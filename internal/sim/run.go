package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// StreamName is the stream's name in the store.
const StreamName = "sim"

// Options tune Run.
type Options struct {
	// Dir holds the store file; it must exist.
	Dir string
	// TextHeaderKeys makes every header key valid UTF-8 (to look past
	// binary header keys written raw, when that is a known bug).
	TextHeaderKeys bool
	// StrictAborted fails a history when a read_committed batch holds a
	// record of an aborted transaction. Off by default: kfake itself
	// leaves out the aborted transactions of the last partition of an
	// answer that reaches the request's MaxBytes.
	StrictAborted bool
	// Deadline bounds how long a run that must end (--until-end,
	// --batches with data) may go without acking anything new before the
	// history fails as a liveness violation; default 30s. A liveness
	// check, not a speed assertion: a slow run that keeps moving passes.
	Deadline time.Duration
	// fake, when set (tests), is called with the fake cluster before the
	// first operation: faults a history cannot draw.
	fake func(*kfake.Cluster)
}

// Result is what a history did and what it broke.
type Result struct {
	History    History
	Log        []string
	Violations []string
	// Dump is a goroutine dump taken when a liveness check failed.
	Dump string
}

// Failed reports whether any invariant was violated.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// Report is the failing history for a person: seed, operations, what
// happened and what broke.
func (r *Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "history %s", r.History)
	b.WriteString("what happened:\n")
	for _, l := range r.Log {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	b.WriteString("violations:\n")
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  - %s\n", v)
		if _, s := Suspect(v); s != "" {
			fmt.Fprintf(&b, "    (looks like %s)\n", s)
		}
	}
	if r.Dump != "" {
		b.WriteString("goroutines of the stream when the deadline passed:\n")
		b.WriteString(r.Dump)
	}
	fmt.Fprintf(&b, "replay: KBATCH_SIM_SEED=%d go test ./internal/sim -run 'TestSim$' -v\n", r.History.Seed)
	return b.String()
}

// delivery is one call of the Processor: a batch and its records.
type delivery struct {
	run         int
	batch       offsets.Batch
	at          time.Time
	uncommitted bool
	recs        []*record.Record
}

// runRec is one run of the stream (one process).
type runRec struct {
	idx     int
	flags   Flags
	startAt time.Time
	before  offsets.StreamInfo
	hadInfo bool
	pending *offsets.Batch
	started *consumer.Started
	ended   *consumer.Ended
	crashed bool

	mu      sync.Mutex
	events  []consumer.Event
	waiting uint64
	// front is the furthest acked end per partition and moved the last
	// time it grew: the liveness check waits while the run moves.
	front map[int32]int64
	moved time.Time
}

// advance records an acked batch; it returns whether it moved the run's
// acked front (a batch re-delivered again and again does not).
func (rec *runRec) advance(b *consumer.Batch) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.front == nil {
		rec.front = map[int32]int64{}
	}
	for _, rg := range b.Ranges {
		if f, ok := rec.front[rg.Partition.Partition]; !ok || rg.Until > f {
			rec.front[rg.Partition.Partition] = rg.Until
			rec.moved = time.Now()
		}
	}
}

// lastMove is when the acked front last grew, or the run's start.
func (rec *runRec) lastMove() time.Time {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.moved.IsZero() {
		return rec.startAt
	}
	return rec.moved
}

// setFact is an offsets set done while stopped.
type setFact struct {
	at   time.Time
	part int32
	off  int64
}

// runner carries out one history.
type runner struct {
	h    History
	opt  Options
	c    *cluster
	path string
	res  *Result

	mu         sync.Mutex
	deliveries []delivery
	runs       []*runRec
	sets       []setFact
	// firstCut is when each planned batch (by id and ranges) was first
	// cut, as the store had it.
	firstCut map[string]time.Time

	cur    *active
	drainR *runRec
}

// active is the running stream.
type active struct {
	rec    *runRec
	s      *consumer.Stream
	store  *killable
	bolt   *offsets.Store
	client *kafka.Client
	cancel context.CancelFunc
	done   chan struct{} // the event collector ended
	auto   bool          // ack manual batches at once
}

func (r *runner) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Log = append(r.res.Log, fmt.Sprintf("%s "+format, append([]any{time.Now().Format("15:04:05.000")}, args...)...))
}

func (r *runner) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := fmt.Sprintf(format, args...)
	kind, _, _ := strings.Cut(v, ":")
	same := 0
	for _, old := range r.res.Violations {
		if old == v {
			return
		}
		if strings.HasPrefix(old, kind+":") {
			same++
		}
	}
	if same < 3 && len(r.res.Violations) < 30 {
		r.res.Violations = append(r.res.Violations, v)
	}
}

// Run carries out h against a fresh cluster and store in opt.Dir, then a
// final run with --until-end that must end, and checks every invariant.
func Run(h History, opt Options) *Result {
	if opt.Deadline == 0 {
		opt.Deadline = 30 * time.Second
	}
	res := &Result{History: h}
	c, err := newCluster(h.Seed, h, opt.TextHeaderKeys)
	if err != nil {
		res.Violations = append(res.Violations, "set-up: "+err.Error())
		return res
	}
	defer c.close()
	if opt.fake != nil {
		opt.fake(c.fake)
	}
	r := &runner{h: h, opt: opt, c: c, path: filepath.Join(opt.Dir, "offsets.db"), res: res, firstCut: map[string]time.Time{}}
	for i, op := range h.Ops {
		if err := r.do(i, op); err != nil {
			r.violate("op %d (%s): %v", i, op, err)
			break
		}
		if r.livenessFailed() {
			break
		}
	}
	if r.cur != nil {
		r.stop(false)
	}
	c.setDown(-1, false)
	if !r.livenessFailed() {
		r.drain()
	}
	r.settle() // a transaction left open may have been aborted since
	r.check()
	return res
}

// settle takes the outcome of transactions from the log (cluster.settle).
func (r *runner) settle() {
	for _, s := range r.c.settle() {
		r.logf("  %s (the producer's doing, not a violation)", s)
	}
}

func (r *runner) livenessFailed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.res.Violations {
		if strings.HasPrefix(v, "liveness") {
			return true
		}
	}
	return false
}

func (r *runner) part(p int32) int32 {
	n := r.c.partitions()
	return ((p % n) + n) % n
}

func (r *runner) do(i int, op Op) error {
	r.logf("op %d: %s", i, op)
	c := r.c
	switch op.Kind {
	case OpProduce:
		// The set-up client failing is not kbatch's doing: the records
		// it could not write are not in the oracle, and the history
		// goes on.
		if err := c.produce(r.part(op.Part), op.N, op.Size, op.Txn); err != nil {
			r.logf("  the producer failed (not a violation): %v", err)
		}
		if op.Txn != "" {
			r.settle()
		}
	case OpStart:
		if r.cur != nil {
			r.stop(false)
		}
		return r.start(op.Flags)
	case OpStop:
		if r.cur != nil {
			r.stop(false)
		}
	case OpCrash:
		if r.cur != nil {
			r.crash(op.Crash)
		}
	case OpSeek:
		if r.cur != nil {
			r.seek(op)
		}
	case OpPause, OpResume:
		if r.cur == nil {
			return nil
		}
		var err error
		p := offsets.Partition{Topic: Topic, Partition: r.part(op.Part)}
		switch {
		case op.Kind == OpPause && op.Part < 0:
			err = r.cur.s.PauseAll()
		case op.Kind == OpPause:
			err = r.cur.s.Pause(p)
		case op.Part < 0:
			err = r.cur.s.ResumeAll()
		default:
			err = r.cur.s.Resume(p)
		}
		if err != nil {
			r.logf("  %v", err)
		}
	case OpAck:
		if r.cur == nil {
			return nil
		}
		r.cur.rec.mu.Lock()
		id := r.cur.rec.waiting
		r.cur.rec.mu.Unlock()
		if id == 0 {
			r.logf("  nothing waits for an ack")
			return nil
		}
		if err := r.cur.s.Ack(id); err != nil {
			r.logf("  ack %d: %v", id, err)
		}
	case OpRetention:
		return c.deleteRecords(r.part(op.Part), op.Frac)
	case OpAddParts:
		return c.addPartitions(op.N)
	case OpMoveLeader:
		if op.Part < 0 {
			c.fake.ShufflePartitionLeaders()
			return nil
		}
		return c.fake.MoveTopicPartition(Topic, r.part(op.Part), op.Node)
	case OpBrokerDown:
		c.setDown(op.Node, op.Mode == "stall")
		time.Sleep(op.Wait)
		c.setDown(-1, false)
	case OpSet:
		return r.set(op)
	case OpWait:
		time.Sleep(op.Wait)
	}
	return nil
}

// openStore opens the store as kbatch's default store is opened: a
// folder of one file per stream beside r.path, whose streams it moves in
// while the folder does not exist (offsets.OpenFolder). Histories of odd
// seeds write their first run to the single file r.path, so the next
// start moves the stream mid-history, with its pending batch, seeks and
// jump marks, and the invariants are checked across the move.
func (r *runner) openStore(opt offsets.OpenOptions) (*offsets.Store, error) {
	if r.h.Seed%2 == 1 && len(r.runs) == 0 && !opt.ReadOnly {
		return offsets.Open(r.path, opt)
	}
	return offsets.OpenFolder(filepath.Join(filepath.Dir(r.path), "streams"), r.path, opt)
}

// start opens the store and a client, as a new process would, and starts
// the stream with f.
func (r *runner) start(f Flags) error {
	rec := &runRec{idx: len(r.runs), flags: f}
	bolt, err := r.openStore(offsets.OpenOptions{})
	if err != nil {
		return err
	}
	if rec.before, rec.hadInfo, err = bolt.Stream(StreamName); err != nil {
		_ = bolt.Close()
		return err
	}
	if rec.pending, err = bolt.Pending(StreamName); err != nil {
		_ = bolt.Close()
		return err
	}
	if rec.pending != nil {
		k := cutKey(*rec.pending)
		r.mu.Lock()
		if _, ok := r.firstCut[k]; !ok {
			r.firstCut[k] = rec.pending.Time
		}
		r.mu.Unlock()
	}
	cc := kafka.ClientConfig{Brokers: r.c.addrs, ReadCommitted: !f.Uncommitted, DialTimeout: 10 * time.Second}
	client, err := kafka.DialWith(cc, kafka.Tuning{MaxWait: 50 * time.Millisecond})
	if err != nil {
		_ = bolt.Close()
		return err
	}
	var explicit []offsets.Spec
	now := time.Now()
	for _, e := range f.Explicit {
		sp, err := offsets.ParseSpec(Topic+":"+e, now)
		if err != nil {
			_ = client.Close()
			_ = bolt.Close()
			return err
		}
		explicit = append(explicit, sp)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &killable{st: bolt, onKill: cancel}
	a := &active{rec: rec, store: st, bolt: bolt, client: client, cancel: cancel, done: make(chan struct{}),
		auto: f.UntilEnd || f.MaxBatches > 0}
	proc := &processor{r: r, a: a}
	cfg := consumer.Config{
		Client: client, Brokers: r.c.addrs, Topics: []string{Topic}, Name: StreamName,
		Explicit: explicit, Reset: offsets.Reset(f.Reset),
		Interval: f.Interval, MaxPerPartition: f.MaxPerPartition, ManualAck: f.ManualAck,
		UntilEnd: f.UntilEnd, MaxBatches: f.MaxBatches, Samples: 2,
		Store: st, Processor: proc,
		MetadataInterval: 150 * time.Millisecond, IdleDone: 100 * time.Millisecond,
	}
	rec.startAt = time.Now()
	s, started, err := consumer.Start(ctx, cfg)
	if err != nil {
		cancel()
		_ = client.Close()
		_ = bolt.Close()
		var ue *offsets.UsageError
		if errors.As(err, &ue) {
			r.logf("  start refused: %v", err)
			return nil
		}
		return fmt.Errorf("start: %w", err)
	}
	rec.started = started
	a.s = s
	r.mu.Lock()
	r.runs = append(r.runs, rec)
	r.mu.Unlock()
	r.cur = a
	desc := []string{}
	for _, st := range started.Starts {
		desc = append(desc, fmt.Sprintf("p%d=%d(%s)", st.Partition.Partition, st.NextOffset, st.Source))
	}
	red := ""
	if started.Redelivering != nil {
		red = fmt.Sprintf(", re-delivering batch %d %v", started.Redelivering.ID, rangesText(started.Redelivering.Ranges))
	}
	r.logf("  run %d started: %s%s", rec.idx, strings.Join(desc, " "), red)
	go r.collect(a)
	if a.auto {
		r.waitEnd(a)
	}
	return nil
}

// waitEnd waits for a run that ends by itself: --until-end always, and
// --batches N when the data for N batches exists (liveness). A run that
// must end fails when its acked front stands still for the deadline: a
// slow machine makes it slower, not a failure, while a stream that stops
// delivering (or re-delivers one batch forever) still fails.
func (r *runner) waitEnd(a *active) {
	f := a.rec.flags
	must := f.UntilEnd || r.enoughFor(a.rec)
	wait := r.opt.Deadline
	if !must {
		wait = time.Second
	}
	tick := time.NewTicker(wait / 20)
	defer tick.Stop()
	from := time.Now()
	for waiting := true; waiting; {
		select {
		case <-a.s.Done():
			r.stop(false)
			return
		case <-tick.C:
			last := from
			if must {
				last = later(from, a.rec.lastMove())
			}
			waiting = time.Since(last) < wait
		}
	}
	if must {
		what := "--until-end"
		if f.MaxBatches > 0 && !f.UntilEnd {
			what = fmt.Sprintf("--batches %d (a partition holds the records for them)", f.MaxBatches)
		}
		dump := streamGoroutines()
		hint := ""
		a.rec.mu.Lock()
		if red := a.rec.started.Redelivering; red != nil {
			hint = fmt.Sprintf("; batch %d found planned at start was never re-delivered", red.ID)
			for _, ev := range a.rec.events {
				if be, ok := ev.(*consumer.BatchEvent); ok && be.Batch.ID == red.ID {
					hint = ""
				}
			}
		}
		a.rec.mu.Unlock()
		if hint == "" && strings.Contains(dump, "fetchbroker.go:97") {
			hint = "; a broker's fetch loop waits for read-ahead room (fetchbroker.go:97)"
		}
		r.violate("liveness: run %d (%s) did not end, and acked nothing new for %s%s", a.rec.idx, what, wait, hint)
		r.res.Dump = dump
	}
	r.stop(false)
}

// enoughFor reports whether one partition alone holds the records for
// --batches N: N × --max-per-partition deliverable records above its start.
func (r *runner) enoughFor(rec *runRec) bool {
	need := rec.flags.MaxBatches * rec.flags.MaxPerPartition
	if rec.started.Redelivering != nil {
		need = (rec.flags.MaxBatches - 1) * rec.flags.MaxPerPartition
	}
	for _, st := range rec.started.Starts {
		from := st.NextOffset
		// A seek kept for the re-delivered batch moves the partition
		// right after it.
		if red := rec.started.Redelivering; red != nil {
			for _, rg := range red.Ranges {
				if rg.Partition == st.Partition {
					from = rg.Until // the re-delivered batch is the first
				}
			}
			if off, ok := rec.before.Seeks[st.Partition]; ok && hasRange(red, st.Partition.Partition) {
				from = off
			}
		}
		n := 0
		for _, o := range r.c.sortedOffsets(st.Partition.Partition) {
			rc := r.c.rec(st.Partition.Partition, o)
			if o >= from && o >= st.LogStart && o < st.HighWatermark && (!rc.Aborted || rec.flags.Uncommitted) {
				n++
			}
		}
		if n >= need {
			return true
		}
	}
	return false
}

// streamGoroutines returns the goroutines that run kbatch code.
func streamGoroutines() string {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	var out []string
	for _, g := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(g, "kbatch/consumer") {
			out = append(out, g)
		}
	}
	s := strings.Join(out, "\n\n")
	if f, err := os.CreateTemp("", "kbatch-sim-goroutines-*.txt"); err == nil {
		_, _ = f.Write(buf.Bytes())
		_ = f.Close()
		s += "\n(all goroutines: " + f.Name() + ")\n"
	}
	return s
}

// collect reads the stream's events while the process lives.
func (r *runner) collect(a *active) {
	defer close(a.done)
	for ev := range a.s.Events() {
		if a.store.dead() {
			continue // a dead process writes nothing more
		}
		if err := checkEventJSON(ev); err != nil {
			r.violate("json: %v", err)
		}
		a.rec.mu.Lock()
		a.rec.events = append(a.rec.events, ev)
		a.rec.mu.Unlock()
		switch e := ev.(type) {
		case *consumer.BatchEvent:
			b := e.Batch
			r.logf("  run %d: batch %d %s %v records=%d redelivered=%v", a.rec.idx, b.ID, b.State, rangesText(b.Ranges), b.Records, b.Redelivered)
			if b.State == offsets.StatePlanned {
				a.rec.mu.Lock()
				a.rec.waiting = b.ID
				a.rec.mu.Unlock()
				if a.auto {
					go func(id uint64) { _ = a.s.Ack(id) }(b.ID)
				}
			} else {
				a.rec.mu.Lock()
				if a.rec.waiting == b.ID {
					a.rec.waiting = 0
				}
				a.rec.mu.Unlock()
				a.rec.advance(b)
			}
		case *consumer.Notice:
			if e.Code != offsets.CodeBrokerError && e.Code != offsets.CodeReconnected {
				r.logf("  run %d: event %s: %s", a.rec.idx, e.Code, e.Message)
			}
		case *consumer.Ended:
			a.rec.ended = e
			r.logf("  run %d ended: %s %v", a.rec.idx, e.Reason, e.Err)
		}
	}
}

func rangesText(rs []offsets.BatchRange) string {
	var parts []string
	for _, rg := range rs {
		s := fmt.Sprintf("p%d[%d,%d)", rg.Partition.Partition, rg.From, rg.Until)
		if rg.Jump != "" {
			s += "!" + rg.Jump
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// stop ends the current run: cleanly (Close), or after a kill.
func (r *runner) stop(killed bool) {
	a := r.cur
	r.cur = nil
	closed := make(chan struct{})
	go func() {
		_ = a.s.Close()
		close(closed)
	}()
	// A fetch in flight when the stream closes holds Close until the
	// broker answers or sarama's read timeout (30s) passes.
	closeDeadline := r.opt.Deadline + 45*time.Second
	select {
	case <-closed:
	case <-time.After(closeDeadline):
		r.violate("liveness: run %d: Close did not return within %s", a.rec.idx, closeDeadline)
		r.res.Dump = streamGoroutines()
		a.store.kill()
		<-closed
	}
	<-a.done
	a.cancel()
	_ = a.client.Close()
	a.rec.crashed = killed
	r.checkPositions(a)
	_ = a.bolt.Close()
}

// crash kills the process in the given mode.
func (r *runner) crash(mode string) {
	a := r.cur
	switch mode {
	case CrashNow:
		a.store.kill()
	case CrashAfterPlan, CrashInProcess:
		a.store.arm(mode)
		deadline := time.After(time.Second)
	wait:
		for !a.store.dead() {
			select {
			case <-deadline:
				break wait
			case <-a.s.Done():
				break wait
			case <-time.After(5 * time.Millisecond):
			}
		}
		a.store.kill()
	case CrashAtSeek:
		a.store.arm(mode)
		return // the next operation is the seek; the kill follows it
	}
	r.logf("  killed")
	r.stop(true)
}

// seek seeks one partition as the seek form would, or with Part < 0
// every partition as S does (one spec, resolved per partition, the
// targets moved in one command).
func (r *runner) seek(op Op) {
	a := r.cur
	part := r.part(max(op.Part, 0))
	p := offsets.Partition{Topic: Topic, Partition: part}
	ls, hw, err := r.c.bounds(part)
	if err != nil {
		r.logf("  bounds: %v", err)
		return
	}
	var spec offsets.Spec
	switch op.Seek {
	case "offset":
		spec = offsets.Spec{Kind: offsets.SpecOffset, Offset: ls + int64(op.Frac*float64(hw-ls))}
	case "earliest":
		spec = offsets.Spec{Kind: offsets.SpecEarliest}
	case "latest":
		spec = offsets.Spec{Kind: offsets.SpecLatest}
	case "-N":
		spec = offsets.Spec{Kind: offsets.SpecFromEnd, Offset: int64(op.N)}
	case "@time":
		offs := r.c.sortedOffsets(part)
		t := time.Now().Add(-time.Hour)
		if len(offs) > 0 {
			t = r.c.rec(part, offs[int(op.Frac*float64(len(offs)-1))]).Timestamp
		}
		spec = offsets.Spec{Kind: offsets.SpecTime, Time: t}
	}
	if op.Part < 0 {
		r.seekAll(spec)
	} else {
		to, err := a.s.Seek(p, spec)
		r.logf("  seek p%d → %d: %v", part, to, err)
	}
	if a.store.isArmed(CrashAtSeek) || a.store.dead() {
		a.store.kill()
		r.logf("  killed")
		r.stop(true)
	}
}

func (r *runner) seekAll(spec offsets.Spec) {
	parts := make([]offsets.Partition, r.c.partitions())
	for i := range parts {
		parts[i] = offsets.Partition{Topic: Topic, Partition: int32(i)}
	}
	ts, err := r.cur.s.ResolveSeek(parts, spec)
	if err != nil {
		r.logf("  seek all: %v", err)
		return
	}
	n, err := r.cur.s.SeekTargets(ts)
	var sb strings.Builder
	for _, t := range ts[:n] {
		fmt.Fprintf(&sb, " p%d→%d", t.Partition.Partition, t.Offset)
	}
	r.logf("  seek all:%s: %v", sb.String(), err)
}

// set is `kbatch offsets set` while no stream runs.
func (r *runner) set(op Op) error {
	part := r.part(op.Part)
	ls, hw, err := r.c.bounds(part)
	if err != nil {
		return err
	}
	off := ls + int64(op.Frac*float64(hw-ls))
	st, err := r.openStore(offsets.OpenOptions{})
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	if _, ok, err := st.Stream(StreamName); err != nil || !ok {
		return err
	}
	p := offsets.Partition{Topic: Topic, Partition: part}
	at := time.Now()
	e := offsets.NewEvent(at, offsets.CodeSet, p, fmt.Sprintf("%s set to %d", p, off))
	e.To = off
	if err := st.SetNext(StreamName, map[offsets.Partition]int64{p: off}, e); err != nil {
		return err
	}
	r.mu.Lock()
	r.sets = append(r.sets, setFact{at: at, part: part, off: off})
	r.mu.Unlock()
	r.logf("  set p%d=%d", part, off)
	return nil
}

// drain is the last run: it reads to the end with defaults and must end.
func (r *runner) drain() {
	if err := r.start(Flags{MaxPerPartition: 10000, Interval: 30 * time.Millisecond, Reset: "latest", UntilEnd: true}); err != nil {
		r.violate("drain: %v", err)
		return
	}
	if len(r.runs) > 0 {
		r.drainR = r.runs[len(r.runs)-1]
	}
}

// processor is the sink: it keeps every delivery and checks each record's
// JSON line.
type processor struct {
	r *runner
	a *active
}

func (p *processor) Process(_ context.Context, b *consumer.Batch, recs []*record.Record) error {
	a := p.a
	if a.store.dead() {
		return errKilled
	}
	d := delivery{run: a.rec.idx, batch: b.Batch, at: time.Now(), uncommitted: a.rec.flags.Uncommitted}
	d.batch.Ranges = append([]offsets.BatchRange(nil), b.Ranges...)
	inProcess := a.store.isArmed(CrashInProcess)
	if inProcess {
		recs = recs[:len(recs)/2] // the process dies half-way through
	}
	for _, m := range recs {
		if err := checkRecordJSON(m); err != nil {
			p.r.violate("json: %v", err)
		}
		mp := offsets.Partition{Topic: m.Topic, Partition: m.Partition}
		if b.IsAborted(mp, m.Offset) {
			if err := checkAbortedJSON(m); err != nil {
				p.r.violate("json: %v", err)
			}
			if rc := p.r.c.rec(m.Partition, m.Offset); rc != nil && !rc.Aborted {
				p.r.violate("aborted mark: batch %d marks p%d@%d as of an aborted transaction; it was committed", b.ID, m.Partition, m.Offset)
			}
		}
		c := *m
		c.Key, c.Value = clone(m.Key), clone(m.Value)
		c.Headers = nil
		for _, h := range m.Headers {
			c.Headers = append(c.Headers, &record.Header{Key: clone(h.Key), Value: clone(h.Value)})
		}
		d.recs = append(d.recs, &c)
	}
	p.r.mu.Lock()
	p.r.deliveries = append(p.r.deliveries, d)
	p.r.mu.Unlock()
	if inProcess {
		a.store.kill()
		return errKilled
	}
	return nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// cutKey names a batch by id and ranges.
func cutKey(b offsets.Batch) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%d:", b.ID)
	for _, rg := range b.Ranges {
		fmt.Fprintf(&s, "%d[%d,%d)", rg.Partition.Partition, rg.From, rg.Until)
	}
	return s.String()
}

// Suspect names the known bug a violation looks like: a key of the
// simulation's knownBugs and a description of the promise of
// docs/design.md §2 it breaks; "" when it looks new. It is a hint for a
// person and for skipping seeds of a bug known to be open, not a verdict.
func Suspect(v string) (key, text string) {
	switch {
	case strings.HasPrefix(v, "liveness") && strings.Contains(v, "never re-delivered"):
		return "redelivery-past-read-ahead", "a planned batch larger than the read-ahead is never re-delivered"
	case strings.HasPrefix(v, "liveness") && strings.Contains(v, "fetchbroker.go:97"):
		return "brokers-liveness", "liveness across brokers (read-ahead budget)"
	case strings.HasPrefix(v, "json"):
		return "binary-header-keys", "binary header keys written raw"
	case strings.Contains(v, "(new partition)") || strings.Contains(v, "its position was never stored"),
		strings.HasPrefix(v, "stored position") && strings.Contains(v, "start of a run"):
		return "added-partition-stored", "start positions are not stored"
	case strings.Contains(v, "stored as re-delivered"):
		return "dropped-batch-id-reused", "a new batch reusing a dropped planned batch's id is stored as redelivered"
	case strings.HasPrefix(v, "stored position") && strings.Contains(v, "ack of batch"):
		return "set-beats-kept-seek", "a stale seek undoes offsets set (or a seek kept for a pending batch)"
	case strings.Contains(v, "deleted before it was read"):
		return "loss-below-planned-batch", "a data-loss jump dropped when a planned batch is re-delivered"
	case strings.HasPrefix(v, "contiguity"):
		return "loss-at-start-marked", "data loss at start is not marked on the first batch"
	case strings.HasPrefix(v, "skipped") || strings.HasPrefix(v, "never delivered"):
		return "loss-reads-from-log-start", "data loss continues at --reset instead of the log start"
	}
	return "", ""
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
