package consumer

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// fetcher reads a stream's partitions with Fetch requests of its own: one
// goroutine per leader broker sends one request for every partition it
// leads that is open, not paused and below its read-ahead, and hands the
// answer to the loop partition by partition.
//
// Opening a reader costs no request: where it starts was resolved from
// the stream's bounds (one ListOffsets per broker and kind). sarama's
// PartitionConsumer, which this replaces, asked every partition's log
// start and high watermark again and refreshed the topic's metadata for
// each partition it started, and a partition waiting for the loop held up
// every other partition of its broker.
type fetcher struct {
	client    *kafka.Client
	out       chan<- []chunk
	stop      chan struct{}
	stopOnce  sync.Once
	fetch     kafka.FetchOptions
	partBytes int32 // a partition's first fetch size
	fastBytes int32 // the size it is raised to when its records do not compress much
	growBytes int32 // the largest an empty answer grows it to
	maxBytes  int32 // the largest a partial batch grows it to
	// budget bounds the bytes forwarded to the loop and not yet in a
	// batch plus the answer sizes asked for by fetches in flight. It is
	// shared out among the broker loops with a backlog (backlogged of
	// them), see share.
	budget     int64
	backlogged atomic.Int32
	// expansion is how many times its size on the wire an answer takes
	// in memory once decoded (decompressed, as messages), in hundredths;
	// answerSize divides the room by it.
	expansion atomic.Int64

	// log is the debug log (Config.Log), nil when off. It is set before
	// the first reader opens and never changes.
	log *slog.Logger

	mu         sync.Mutex
	brokers    map[int32]*brokerFetcher
	lost       []*reader // readers waiting for their leader
	wakeRouter chan struct{}
}

// maxAnswerBytes caps one fetch answer (Kafka's fetch.max.bytes).
const maxAnswerBytes = 16 << 20

// liveMinBytes is the fetch's minimum answer while every partition of a
// broker is at its high watermark. With the minimum at 1 byte a broker
// answers as soon as any producer's batch lands: at 5,000 records/s over
// 50 partitions that was 84 fetches a second of about one record per
// partition, each a request of 50 partitions to encode and an answer to
// decode, most of the TUI's CPU time. Waiting for 64 KiB, or the client's
// MaxWait (100 ms) when less arrives, keeps live records at most that
// much later; a backlog still fetches with a minimum of 1 byte.
const liveMinBytes = 64 << 10

// minAnswerBytes is the smallest answer size asked for, however much the
// records expand (a broker returns at least one record batch anyway).
const minAnswerBytes = 256 << 10

// answerSize is the answer size to ask for with room bytes of read-ahead
// left: room shrunk by how much answers have expanded once decoded, so
// that compressible records (a fetch of 1 MiB can hold 20 MiB of them)
// stay within the read-ahead in memory, not only on the wire.
//
// Before any answer told how much records expand, it asks for the smallest
// answer: the first answers of a topic whose records compress twentyfold
// would otherwise take twenty times the read-ahead.
func (f *fetcher) answerSize(room int64) int64 {
	e := f.expansion.Load()
	if e == 0 {
		return min(minAnswerBytes, room)
	}
	ask := min(room, maxAnswerBytes)
	if e > 100 {
		ask = ask * 100 / e
	}
	return max(ask, min(minAnswerBytes, room))
}

// observe learns the expansion from an answer asked with ask that took
// decoded bytes in memory: a larger expansion is taken at once, a smaller
// one slowly (a full answer says more than one that was not).
func (f *fetcher) observe(ask, decoded int64) {
	if ask <= 0 || decoded <= 0 {
		return
	}
	seen := min(decoded*100/ask, 64*100)
	old := f.expansion.Load()
	f.expansion.Store(max(seen, old*9/10, 100))
}

// newFetcher makes the fetcher of a stream over partitions partitions
// whose read-ahead is budget bytes. A partition's fetch size starts at the
// client's Consumer.Fetch.Default; with few partitions sharing the budget
// it is raised, up to four times that, once an answer shows the records
// take little more memory than their bytes on the wire: then bigger
// fetches mean fewer round trips for about the same memory. Compressible
// records (a fetch of 1 MiB can hold 20 MiB of them) keep the default.
func newFetcher(client *kafka.Client, out chan<- []chunk, budget int64, partitions int) *fetcher {
	def, largest := client.FetchSizes()
	part := int32(min(max(budget/int64(2*max(partitions, 1)), int64(def)), 4*int64(def)))
	f := &fetcher{
		client:     client,
		out:        out,
		stop:       make(chan struct{}),
		fetch:      client.FetchOptions(),
		partBytes:  def,
		fastBytes:  part,
		growBytes:  4 * def,
		maxBytes:   largest,
		budget:     max(budget, 1),
		brokers:    map[int32]*brokerFetcher{},
		wakeRouter: make(chan struct{}, 1),
	}
	f.fastBytes = min(f.fastBytes, f.maxBytes)
	f.growBytes = min(f.growBytes, f.maxBytes)
	go f.route()
	return f
}

func (f *fetcher) committed() bool {
	return f.fetch.Committed()
}

// open starts reading p, of the topic whose id is id (zero: none known),
// at offset. Records come to the loop as chunks carrying gen. maxHeld and
// maxHeldBytes bound what the reader forwards before the loop puts it in a
// batch.
func (f *fetcher) open(p offsets.Partition, id kafka.TopicID, gen uint64, offset, maxHeld, maxHeldBytes int64) *reader {
	r := &reader{p: p, gen: gen, f: f, pos: offset, size: f.partBytes, replica: -1, lastEpoch: -1, maxHeld: maxHeld, maxHeldBytes: maxHeldBytes}
	r.hwm.Store(-1)
	r.setID(id)
	f.lose(r)
	return r
}

// close stops every fetch. It does not wait for the fetcher's goroutines:
// one may be inside a call to a broker that does not answer, which only
// the network timeout ends, and quitting must not wait for that (docs/design.md
// §2.9). Each goroutine ends when its call returns, sending nothing more
// and touching nothing the loop reads.
func (f *fetcher) close() {
	f.stopOnce.Do(func() { close(f.stop) })
}

// send hands chunks to the loop, which takes them all before it decides
// whether to cut a batch; false when the fetcher is stopping.
func (f *fetcher) send(cs ...chunk) bool {
	if len(cs) == 0 {
		return true
	}
	select {
	case f.out <- cs:
		return true
	case <-f.stop:
		return false
	}
}

// lose hands r to the router, which finds its leader.
func (f *fetcher) lose(r *reader) {
	r.home.Store(nil)
	f.mu.Lock()
	f.lost = append(f.lost, r)
	f.mu.Unlock()
	select {
	case f.wakeRouter <- struct{}{}:
	default:
	}
}

// failedAll counts a failed fetch of readers that failed together (a
// broker down), sends the loop their reports in one piece, so that it
// records them in one store transaction, and hands them to the router,
// which retries each after its back-off. False when stopping.
func (f *fetcher) failedAll(rs []*reader, err error, quiet bool) bool {
	var out []chunk
	for _, r := range rs {
		if c, report := r.fail(err, quiet); report {
			out = append(out, c)
		}
	}
	if !f.send(out...) {
		return false
	}
	for _, r := range rs {
		f.lose(r)
	}
	return true
}

// share is the part of the budget broker loop bf may fill: the budget
// split evenly among the loops whose partitions have records to read,
// counting bf. Loops whose partitions are all at their high watermark
// take none from the others; each of them gets a share as if it were one
// more such loop, for the records a long poll brings. The shares add up
// to the budget while the loops' backlogs stay; when a loop gets a
// backlog the others' shares shrink, and they fetch again once they hold
// less than their new share, so memory stays within twice the budget at
// worst while the shares shift, plus, for each partition with records to
// read that holds none, one small answer (or one record batch) fetched
// past a spent share (brokerFetcher.eligible).
func (f *fetcher) share(bf *brokerFetcher) int64 {
	k := int64(f.backlogged.Load())
	if !bf.backlog.Load() {
		k++
	}
	return f.budget / max(k, 1)
}

// wakeAll tells every broker loop to look at its readers again.
func (f *fetcher) wakeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, bf := range f.brokers {
		bf.signal()
	}
}

// route gives readers without a broker to their leader's fetch loop:
// new readers at once, failed ones after their back-off, refreshing the
// topic's metadata first.
func (f *fetcher) route() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		f.mu.Lock()
		lost := f.lost
		f.lost = nil
		f.mu.Unlock()
		now := time.Now()
		var later []*reader
		noLeader, lastErr := map[bool][]*reader{}, map[bool]error{}
		refreshed := map[string]bool{}
		for _, r := range lost {
			if r.isClosed() {
				continue
			}
			if now.Before(r.retryAt) {
				later = append(later, r)
				continue
			}
			if r.failures > 0 && !refreshed[r.p.Topic] {
				refreshed[r.p.Topic] = true
				_ = f.client.RefreshMetadata(r.p.Topic)
			}
			leader, epoch, err := f.client.LeaderEpoch(r.p)
			if err != nil {
				quiet := errors.Is(err, kafka.ErrLeaderNotAvailable)
				noLeader[quiet] = append(noLeader[quiet], r)
				lastErr[quiet] = err
				continue
			}
			// A new leader, or the same after a failed fetch, may hold
			// another history than the one read (an unclean election
			// truncated it): the next fetch checks (KIP-320).
			if r.lastEpoch >= 0 && (r.failures > 0 || epoch != r.epoch) {
				r.verify = true
			}
			r.epoch = epoch
			// A preferred read replica (KIP-392) serves the partition
			// until a fetch from it fails; then, or when the metadata no
			// longer names it, the leader does again.
			if r.replica >= 0 && (r.failures > 0 || r.replica == leader.ID || !f.client.KnowsBroker(r.replica)) {
				logReplica(f.log, r.p, leader.ID, r.replica, "back to the leader")
				r.replica = -1
			}
			if r.replica >= 0 {
				f.brokerFetcher(r.replica).add(r)
				continue
			}
			f.brokerFetcher(leader.ID).add(r)
		}
		for _, quiet := range []bool{false, true} {
			rs := noLeader[quiet]
			if len(rs) == 0 {
				continue
			}
			err := fmt.Errorf("no leader: %w", lastErr[quiet])
			if errors.Is(lastErr[quiet], kafka.ErrUnknownTopicOrPartition) {
				// A topic deleted (and maybe to be created again, see
				// onRecreated), or a partition count gone down.
				err = fmt.Errorf("the cluster does not have it now (deleted?): %w", lastErr[quiet])
			}
			if !f.failedAll(rs, err, quiet) {
				return
			}
		}
		wait := time.Hour
		if len(later) > 0 {
			f.mu.Lock()
			f.lost = append(f.lost, later...)
			f.mu.Unlock()
			for _, r := range later {
				wait = min(wait, time.Until(r.retryAt))
			}
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-f.stop:
			return
		case <-f.wakeRouter:
		case <-timer.C:
		}
	}
}

// brokerFetcher returns the fetch loop of broker id, started on first use.
func (f *fetcher) brokerFetcher(id int32) *brokerFetcher {
	f.mu.Lock()
	defer f.mu.Unlock()
	bf := f.brokers[id]
	if bf == nil {
		bf = &brokerFetcher{f: f, id: id, wake: make(chan struct{}, 1)}
		f.brokers[id] = bf
		go bf.run()
	}
	return bf
}
