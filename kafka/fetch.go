package kafka

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/offsets"
)

// FetchOptions are the settings every Fetch request of one reader shares.
type FetchOptions struct {
	// Version is the Fetch request version (FetchVersion).
	Version int16
	// ReadCommitted asks for read_committed isolation (Fetch v4 and
	// later; older versions have only read_uncommitted).
	ReadCommitted bool
	// MinBytes and MaxWait: the broker answers once it has MinBytes or
	// MaxWait passed (a long poll); MinBytes below 1 means 1.
	MinBytes int32
	MaxWait  time.Duration
	// Rack is the client's rack, sent on Fetch v11 and later (KIP-392).
	Rack string
}

// FetchOptionsFor returns the options of conf: the highest Fetch version
// its protocol version allows, its isolation, and its consumer's minimum
// bytes and maximum wait.
func FetchOptionsFor(conf *sarama.Config) FetchOptions {
	return FetchOptions{
		Version:       FetchVersion(conf.Version),
		ReadCommitted: conf.Consumer.IsolationLevel == sarama.ReadCommitted,
		MinBytes:      max(conf.Consumer.Fetch.Min, 1),
		MaxWait:       conf.Consumer.MaxWaitTime,
		Rack:          conf.RackID,
	}
}

// Committed reports whether answers to these options hold only committed
// records (and list the aborted transactions to skip): read_committed on a
// version that has it.
func (o FetchOptions) Committed() bool { return o.ReadCommitted && o.Version >= 4 }

// FetchRequest is a Fetch request under construction: NewFetchRequest,
// then Add for each partition.
type FetchRequest struct{ r *kmsg.FetchRequest }

// NewFetchRequest is the one place kbatch builds a Fetch request: the
// stream, replay and the probe (NoRecordsBetween) all send what it builds.
// maxBytes bounds the whole answer (Fetch v3 and later). No fetch session
// is used (SessionID 0, SessionEpoch -1, Fetch v7 and later): every
// request names all its partitions. Client.Fetch sends a request's
// partitions in an order of its own, changed from one request to the
// next (see shuffle), as a broker gives the room of a full answer to the
// partitions it reads first.
func NewFetchRequest(o FetchOptions, maxBytes int32) *FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = o.Version
	req.MinBytes = max(o.MinBytes, 1)
	req.MaxWaitMillis = int32(o.MaxWait / time.Millisecond)
	if o.Version >= 3 {
		req.MaxBytes = maxBytes
	}
	if o.Version >= 4 && o.ReadCommitted {
		req.IsolationLevel = 1
	}
	req.SessionID, req.SessionEpoch = 0, -1 // no fetch session
	if o.Version >= 11 {
		req.Rack = o.Rack
	}
	return &FetchRequest{r: req}
}

// Add asks for p, read from pos with at most size bytes, without a
// leader epoch (-1: the broker does not check it).
func (f *FetchRequest) Add(p offsets.Partition, pos int64, size int32) {
	f.AddEpoch(p, pos, size, -1)
}

// AddEpoch is Add with p's current leader epoch as the metadata knows it
// (KIP-320, Fetch v9 and later; earlier versions do not carry it). A
// broker whose epoch is newer answers FENCED_LEADER_EPOCH, one whose
// epoch is older UNKNOWN_LEADER_EPOCH: both are Retriable (refresh the
// metadata, ask again), so a fetch is never served by a leader the client
// does not know is current. -1 asks without the check.
func (f *FetchRequest) AddEpoch(p offsets.Partition, pos int64, size, epoch int32) {
	var t *kmsg.FetchRequestTopic
	if n := len(f.r.Topics); n > 0 && f.r.Topics[n-1].Topic == p.Topic {
		t = &f.r.Topics[n-1]
	} else {
		for i := range f.r.Topics {
			if f.r.Topics[i].Topic == p.Topic {
				t = &f.r.Topics[i]
				break
			}
		}
	}
	if t == nil {
		f.r.Topics = append(f.r.Topics, kmsg.NewFetchRequestTopic())
		t = &f.r.Topics[len(f.r.Topics)-1]
		t.Topic = p.Topic
	}
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p.Partition, pos, size, epoch
	for i := range t.Partitions {
		if t.Partitions[i].Partition == p.Partition {
			t.Partitions[i] = rp // as a second Add of one partition did before
			return
		}
	}
	t.Partitions = append(t.Partitions, rp)
}

// shuffle puts the request's topics and partitions in a random order.
func (f *FetchRequest) shuffle() {
	rand.Shuffle(len(f.r.Topics), func(i, j int) { f.r.Topics[i], f.r.Topics[j] = f.r.Topics[j], f.r.Topics[i] })
	for _, t := range f.r.Topics {
		rand.Shuffle(len(t.Partitions), func(i, j int) { t.Partitions[i], t.Partitions[j] = t.Partitions[j], t.Partitions[i] })
	}
}

// FetchResponse is a broker's answer to a FetchRequest.
type FetchResponse struct {
	r     *kmsg.FetchResponse
	index map[offsets.Partition]*kmsg.FetchResponseTopicPartition
}

// NewFetchResponse wraps an answer built by hand (tests of what the
// stream makes of an answer).
func NewFetchResponse(r *kmsg.FetchResponse) *FetchResponse { return &FetchResponse{r: r} }

// Throttle is how long the broker asked the client to wait (a throttled
// answer leaves partitions out).
func (f *FetchResponse) Throttle() time.Duration {
	return time.Duration(f.r.ThrottleMillis) * time.Millisecond
}

// Partition returns the answer's part for p; nil when the answer left p
// out (throttled, or a broker that answered only some partitions).
func (f *FetchResponse) Partition(p offsets.Partition) *PartitionAnswer {
	if f.index == nil {
		f.index = make(map[offsets.Partition]*kmsg.FetchResponseTopicPartition)
		for i := range f.r.Topics {
			t := &f.r.Topics[i]
			for j := range t.Partitions {
				f.index[offsets.Partition{Topic: t.Topic, Partition: t.Partitions[j].Partition}] = &t.Partitions[j]
			}
		}
	}
	blk := f.index[p]
	if blk == nil {
		return nil
	}
	a := &PartitionAnswer{HighWatermark: blk.HighWatermark, LastStable: blk.LastStableOffset, PreferredReplica: -1, raw: blk.RecordBatches}
	if f.r.Version >= 11 {
		a.PreferredReplica = blk.PreferredReadReplica
	}
	if blk.ErrorCode != 0 {
		a.Err = sarama.KError(blk.ErrorCode)
	}
	for _, t := range blk.AbortedTransactions {
		a.aborted = append(a.aborted, AbortedTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset})
	}
	return a
}

// PartitionAnswer is one partition's part of a fetch answer.
type PartitionAnswer struct {
	// Err is the partition's error; nil when none.
	Err error
	// HighWatermark and LastStable are the partition's high watermark
	// and last stable offset as the answer reports them (-1: not told).
	HighWatermark, LastStable int64
	// PreferredReplica is the broker the leader wants the partition
	// fetched from (KIP-392: a replica in the client's rack), -1 when
	// none; such an answer holds no records.
	PreferredReplica int32
	raw              []byte // the record batches (or legacy messages) as they came
	aborted          []AbortedTxn
}

// Decode decodes the records in [pos, until) (see DecodeRecords).
func (a *PartitionAnswer) Decode(p offsets.Partition, pos, until int64, committed bool) (Block, error) {
	return DecodeRecords(a.raw, a.aborted, p, pos, until, committed)
}

// Partial reports whether the answer holds only the start of a record
// batch, cut at the size asked: fetch again with more.
func (a *PartitionAnswer) Partial() bool {
	_, entries := countRecords(a.raw)
	return len(a.raw) > 0 && entries == 0
}

// Summary counts the answer for a log: record batches (or legacy
// messages), records as their headers count them, its bytes as they came
// (compressed), whether it ends in a partial batch, and the aborted
// transactions it lists.
func (a *PartitionAnswer) Summary() (batches, records int, bytes int64, partial bool, aborted int) {
	records, batches = countRecords(a.raw)
	in := a.raw
	for len(in) > 0 {
		size, _, whole := entry(in)
		if !whole {
			partial = true
			break
		}
		in = in[size:]
	}
	return batches, records, int64(len(a.raw)), partial, len(a.aborted)
}

// FetchVersion picks the highest Fetch version the protocol version
// allows, as sarama's consumer does. It is kbatch's one version table.
func FetchVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_7_0_0):
		return 12
	case v.IsAtLeast(sarama.V2_3_0_0):
		return 11
	case v.IsAtLeast(sarama.V2_1_0_0):
		return 10
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 8
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 7
	case v.IsAtLeast(sarama.V1_0_0_0):
		return 6
	case v.IsAtLeast(sarama.V0_11_0_0):
		return 5
	case v.IsAtLeast(sarama.V0_10_1_0):
		return 3
	case v.IsAtLeast(sarama.V0_10_0_0):
		return 2
	case v.IsAtLeast(sarama.V0_9_0_0):
		return 1
	}
	return 0
}

// retriable is kbatch's one list of partition errors that a metadata
// refresh and another try can cure: leadership moving, a broker
// restarting or briefly overloaded. It is the union of the stream's and
// replay's former lists.
var retriable = []error{
	sarama.ErrNotLeaderForPartition, sarama.ErrLeaderNotAvailable,
	sarama.ErrUnknownTopicOrPartition, sarama.ErrReplicaNotAvailable,
	sarama.ErrFencedLeaderEpoch, sarama.ErrUnknownLeaderEpoch,
	sarama.ErrOffsetNotAvailable, sarama.ErrKafkaStorageError,
	sarama.ErrRequestTimedOut, sarama.ErrNetworkException,
	sarama.ErrNotEnoughReplicas, sarama.ErrBrokerNotAvailable,
}

// Retriable reports whether err, a partition's error in an answer, is
// one that a metadata refresh and another try can cure (see retriable).
// Replay retries such errors and fails on others; the stream retries every
// error but reports these only when they persist.
func Retriable(err error) bool {
	for _, e := range retriable {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
