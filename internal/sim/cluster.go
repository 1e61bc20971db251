package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Brokers is the cluster's size.
const Brokers = 3

// Topic is the one topic of every history.
const Topic = "sim"

// cluster is a history's kfake cluster, its set-up clients and the oracle:
// every record produced and every deletion, as the broker acknowledged
// them.
type cluster struct {
	fake  *kfake.Cluster
	addrs []string
	cl    *kgo.Client
	txn   *kgo.Client
	adm   *kadm.Client
	r     *rand.Rand
	// textKeys keeps header keys valid UTF-8.
	textKeys bool

	// down is the node whose requests are dropped or stalled (-1: none);
	// stall says which.
	down  atomic.Int32
	stall atomic.Bool
	up    chan struct{}
	upMu  sync.Mutex

	mu      sync.Mutex
	parts   int32
	records map[int32]map[int64]*Rec
	// unsettled are the offsets of transactional records the producer was
	// told committed whose transaction marker has not been read back yet
	// (settle).
	unsettled map[int32][]int64
	// deletes are DeleteRecords calls in order.
	deletes []deletion
}

// Rec is a produced record as the oracle knows it.
type Rec struct {
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []kgo.RecordHeader
	Timestamp time.Time
	// Aborted is true for records of an aborted transaction: they are
	// delivered only with --isolation uncommitted.
	Aborted bool
}

type deletion struct {
	at     time.Time
	part   int32
	before int64
}

var errDown = errors.New("sim: broker down")

func newCluster(seed uint64, h History, textHeaderKeys bool) (*cluster, error) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(Brokers), kfake.BrokerConfigs(map[string]string{"message.max.bytes": "4194304"}))
	if err != nil {
		return nil, err
	}
	c := &cluster{fake: fake, addrs: fake.ListenAddrs(), records: map[int32]map[int64]*Rec{},
		r: rand.New(rand.NewPCG(seed, 7)), up: make(chan struct{}), textKeys: textHeaderKeys}
	c.down.Store(-1)
	fake.Control(c.control)
	opts := []kgo.Opt{kgo.SeedBrokers(c.addrs...), kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchMaxBytes(3 << 20), kgo.MaxBufferedRecords(1 << 16), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.ProducerBatchCompression(codec(h.Codec))}
	if c.cl, err = kgo.NewClient(opts...); err != nil {
		fake.Close()
		return nil, err
	}
	if c.txn, err = kgo.NewClient(append(opts, kgo.TransactionalID(fmt.Sprintf("sim-%d", seed)))...); err != nil {
		c.cl.Close()
		fake.Close()
		return nil, err
	}
	c.adm = kadm.NewClient(c.cl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.adm.CreateTopic(ctx, h.Partitions, 1, map[string]*string{"max.message.bytes": kadm.StringPtr("4194304")}, Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("create topic: %w", err)
	}
	c.parts = h.Partitions
	// Busy partitions are led by brokers 0 and 1, idle ones by broker 2:
	// one broker leads only idle partitions.
	busy := map[int32]bool{}
	for _, p := range h.Busy {
		busy[p] = true
	}
	for p := int32(0); p < h.Partitions; p++ {
		node := int32(2)
		if busy[p] {
			node = p % 2
		}
		if err := fake.MoveTopicPartition(Topic, p, node); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

func (c *cluster) close() {
	c.setDown(-1, false)
	c.txn.Close()
	c.cl.Close()
	c.fake.Close()
}

// control drops (closes the connection of) or stalls every request a
// down broker receives.
func (c *cluster) control(kmsg.Request) (kmsg.Response, error, bool) {
	down := c.down.Load()
	if down < 0 || c.fake.CurrentNode() != down {
		return nil, nil, false
	}
	c.fake.KeepControl()
	if c.stall.Load() {
		c.upMu.Lock()
		up := c.up
		c.upMu.Unlock()
		c.fake.SleepControl(func() { <-up })
		return nil, nil, false
	}
	return nil, errDown, true
}

// setDown takes node down (node -1: every broker up).
func (c *cluster) setDown(node int32, stall bool) {
	c.upMu.Lock()
	defer c.upMu.Unlock()
	if node < 0 {
		if c.down.Load() >= 0 {
			c.down.Store(-1)
			close(c.up)
			c.up = make(chan struct{})
		}
		return
	}
	c.stall.Store(stall)
	c.down.Store(node)
}

func (c *cluster) partitions() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parts
}

func ctxT(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// produce writes n records to part and records them in the oracle. A
// record the broker did not take (a partition just added and not yet in
// the producer's metadata, a broker that was down) is sent again; a
// transaction that failed is aborted, and its records that got offsets
// are known as aborted.
func (c *cluster) produce(part int32, n int, size, txn string) error {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = c.record(part, size)
	}
	var err error
	for i := 0; i < 50 && len(recs) > 0; i++ {
		if i > 0 {
			c.cl.ForceMetadataRefresh()
			c.txn.ForceMetadataRefresh()
			time.Sleep(20 * time.Millisecond)
		}
		recs, err = c.produceOnce(part, recs, txn)
	}
	return err
}

// produceOnce sends recs and returns those to send again.
func (c *cluster) produceOnce(part int32, recs []*kgo.Record, txn string) ([]*kgo.Record, error) {
	for _, r := range recs {
		r.Offset, r.Timestamp = 0, time.Time{}
	}
	ctx, cancel := ctxT(30 * time.Second)
	defer cancel()
	cl := c.cl
	if txn != "" {
		cl = c.txn
		if err := cl.BeginTransaction(); err != nil {
			return recs, err
		}
	}
	res := cl.ProduceSync(ctx, recs...)
	err := res.FirstErr()
	aborted := txn == "abort"
	if txn != "" {
		if err != nil {
			_ = cl.AbortBufferedRecords(ctx)
			aborted = true
		}
		if eerr := cl.EndTransaction(ctx, kgo.TransactionEndTry(!aborted)); eerr != nil && err == nil {
			err = fmt.Errorf("end transaction: %w", eerr)
		}
	}
	var again []*kgo.Record
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.records[part]
	if m == nil {
		m = map[int64]*Rec{}
		c.records[part] = m
	}
	for _, r := range res {
		if r.Err != nil {
			again = append(again, r.Record)
			continue
		}
		m[r.Record.Offset] = &Rec{Offset: r.Record.Offset, Key: r.Record.Key, Value: r.Record.Value,
			Headers: r.Record.Headers, Timestamp: r.Record.Timestamp, Aborted: aborted}
		if txn != "" && !aborted {
			// The producer's word is not the transaction's outcome: a
			// commit that failed, or a client that aborted in its stead
			// (an epoch bump fence-aborts what was written), leaves these
			// records aborted in the log. settle reads the marker.
			if c.unsettled == nil {
				c.unsettled = map[int32][]int64{}
			}
			c.unsettled[part] = append(c.unsettled[part], r.Record.Offset)
		}
	}
	if txn != "" && err != nil && txn == "commit" {
		// The transaction did not commit: all of it goes again.
		again = nil
		for _, r := range res {
			again = append(again, r.Record)
		}
	}
	if err != nil {
		return again, fmt.Errorf("produce: %w", err)
	}
	return nil, nil
}

// settle reads back the transaction marker that ends each unsettled
// transactional record (the first control record of its producer id at a
// later offset) and marks the record aborted when that marker is an abort:
// the log, not the producer's report, is what a read_committed reader
// gets. It returns the records found aborted. A record whose marker is not
// in the log yet (its transaction is still open) stays unsettled.
func (c *cluster) settle() []string {
	c.mu.Lock()
	todo := c.unsettled
	c.unsettled = nil
	c.mu.Unlock()
	var flipped []string
	for part, offs := range todo {
		left, ab := c.settlePart(part, offs)
		if ab > 0 {
			flipped = append(flipped, fmt.Sprintf("p%d: %d records of a transaction the producer was told committed are aborted in the log", part, ab))
		}
		if len(left) > 0 {
			c.mu.Lock()
			if c.unsettled == nil {
				c.unsettled = map[int32][]int64{}
			}
			c.unsettled[part] = append(c.unsettled[part], left...)
			c.mu.Unlock()
		}
	}
	return flipped
}

// settlePart settles offs of part; it returns the offsets still unsettled
// and how many turned out aborted.
func (c *cluster) settlePart(part int32, offs []int64) (left []int64, aborted int) {
	ls, hw, err := c.bounds(part)
	if err != nil {
		return offs, 0
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	var pending []int64
	for _, o := range offs {
		if o >= ls { // below the log start the record is gone anyway
			pending = append(pending, o)
		}
	}
	if len(pending) == 0 || hw <= pending[0] {
		return pending, 0
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...), kgo.KeepControlRecords(),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.FetchMaxWait(50*time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{Topic: {part: kgo.NewOffset().At(pending[0])}}))
	if err != nil {
		return pending, 0
	}
	defer cl.Close()
	want := map[int64]bool{}
	for _, o := range pending {
		want[o] = true
	}
	waiting := map[int64][]int64{} // producer id → offsets read, marker not yet
	fate := map[int64]bool{}       // offset → aborted
	ctx, cancel := ctxT(10 * time.Second)
	defer cancel()
	for last := int64(-1); last < hw-1 && ctx.Err() == nil; {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			last = max(last, r.Offset)
			switch {
			case r.Attrs.IsControl():
				abort := len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:4]) == 0
				for _, o := range waiting[r.ProducerID] {
					fate[o] = abort
				}
				delete(waiting, r.ProducerID)
			case want[r.Offset]:
				waiting[r.ProducerID] = append(waiting[r.ProducerID], r.Offset)
			}
		})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range pending {
		ab, ok := fate[o]
		switch {
		case !ok:
			left = append(left, o)
		case ab:
			if rc := c.records[part][o]; rc != nil && !rc.Aborted {
				rc.Aborted = true
				aborted++
			}
		}
	}
	return left, aborted
}

// record makes one record: null, empty, text or binary keys; text (with
// controls and bidi overrides) or binary values; headers with binary keys.
func (c *cluster) record(part int32, size string) *kgo.Record {
	r := c.r
	rec := &kgo.Record{Topic: Topic, Partition: part}
	switch r.IntN(5) {
	case 0: // null key
	case 1:
		rec.Key = []byte{}
	case 2:
		rec.Key = c.bytes(r.IntN(20), true)
	default:
		rec.Key = []byte(fmt.Sprintf("k%d", r.IntN(1000)))
	}
	n := 0
	switch size {
	case "small":
		n = r.IntN(120)
	case "mixed":
		n = r.IntN(4000)
	case "large":
		n = 10_000 + r.IntN(200_000)
	case "huge":
		n = 1 << 20
	}
	switch r.IntN(8) {
	case 0:
		rec.Value = nil
	case 1, 2:
		rec.Value = c.bytes(n, true)
	default:
		rec.Value = c.text(n)
	}
	for i := r.IntN(4) - 1; i > 0; i-- {
		h := kgo.RecordHeader{Key: string(c.bytes(r.IntN(8), r.IntN(2) == 0 && !c.textKeys)), Value: c.bytes(r.IntN(16), r.IntN(2) == 0)}
		if r.IntN(5) == 0 {
			h.Value = nil
		}
		rec.Headers = append(rec.Headers, h)
	}
	return rec
}

// bytes returns n bytes: binary (any byte, often invalid UTF-8) or text.
func (c *cluster) bytes(n int, binary bool) []byte {
	if !binary {
		return c.text(n)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(c.r.UintN(256))
	}
	return b
}

var textRunes = []rune("abcdefghijklmnopqrstuvwxyz0123456789 {}\":,\\é€日本\u0000\u001b\u009b\u202e\u2028\x7f\n\t")

func (c *cluster) text(n int) []byte {
	b := make([]byte, 0, n)
	for len(b) < n {
		if c.r.IntN(8) > 0 {
			b = append(b, byte('a'+c.r.IntN(26)))
			continue
		}
		b = append(b, string(textRunes[c.r.IntN(len(textRunes))])...)
	}
	return b
}

// bounds returns part's log start and high watermark; a leader that just
// moved is asked again.
func (c *cluster) bounds(part int32) (ls, hw int64, err error) {
	for i := 0; i < 50; i++ {
		if ls, hw, err = c.boundsOnce(part); err == nil {
			return ls, hw, nil
		}
		c.cl.ForceMetadataRefresh()
		time.Sleep(20 * time.Millisecond)
	}
	return ls, hw, err
}

func (c *cluster) boundsOnce(part int32) (int64, int64, error) {
	ctx, cancel := ctxT(10 * time.Second)
	defer cancel()
	starts, err := c.adm.ListStartOffsets(ctx, Topic)
	if err != nil {
		return 0, 0, err
	}
	ends, err := c.adm.ListEndOffsets(ctx, Topic)
	if err != nil {
		return 0, 0, err
	}
	s, ok1 := starts.Lookup(Topic, part)
	e, ok2 := ends.Lookup(Topic, part)
	if !ok1 || !ok2 || s.Err != nil || e.Err != nil {
		return 0, 0, fmt.Errorf("bounds of %d: %v %v", part, s.Err, e.Err)
	}
	return s.Offset, e.Offset, nil
}

// deleteRecords moves part's log start to frac of the way to its high
// watermark.
func (c *cluster) deleteRecords(part int32, frac float64) error {
	ls, hw, err := c.bounds(part)
	if err != nil {
		return err
	}
	before := ls + int64(frac*float64(hw-ls))
	if before <= ls {
		return nil
	}
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: Topic, Partition: part, At: before})
	ctx, cancel := ctxT(10 * time.Second)
	defer cancel()
	at := time.Now()
	resp, err := c.adm.DeleteRecords(ctx, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	c.mu.Lock()
	c.deletes = append(c.deletes, deletion{at: at, part: part, before: before})
	c.mu.Unlock()
	return nil
}

// addPartitions grows the topic by n partitions.
func (c *cluster) addPartitions(n int) error {
	ctx, cancel := ctxT(10 * time.Second)
	defer cancel()
	resp, err := c.adm.CreatePartitions(ctx, n, Topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("add partitions: %w", err)
	}
	c.mu.Lock()
	c.parts += int32(n)
	c.mu.Unlock()
	return nil
}

// logStart is part's log start as the oracle knows it at t: the highest
// DeleteRecords offset sent before t.
func (c *cluster) logStartAt(part int32, t time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ls int64
	for _, d := range c.deletes {
		if d.part == part && d.at.Before(t) && d.before > ls {
			ls = d.before
		}
	}
	return ls
}

// deletedBy returns when offset o of part was deleted (zero: never).
func (c *cluster) deletedAt(part int32, o int64) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.deletes {
		if d.part == part && o < d.before {
			return d.at
		}
	}
	return time.Time{}
}

// sortedOffsets returns part's produced offsets in order.
func (c *cluster) sortedOffsets(part int32) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int64, 0, len(c.records[part]))
	for o := range c.records[part] {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (c *cluster) rec(part int32, o int64) *Rec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.records[part][o]
}

// codec is the producer compression a history's Codec names.
func codec(name string) kgo.CompressionCodec {
	switch name {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}
