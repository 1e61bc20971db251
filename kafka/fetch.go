package kafka

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/offsets"
)

// FetchOptions are the settings every Fetch request of one reader shares.
type FetchOptions struct {
	// Version is the Fetch request version (fetchVersion).
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

// fetchOptionsFor returns the options of conf: the highest Fetch version
// its protocol version allows, its isolation, and its consumer's minimum
// bytes and maximum wait.
func fetchOptionsFor(conf *sarama.Config) FetchOptions {
	return FetchOptions{
		Version:       fetchVersion(conf.Version),
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
type FetchRequest struct {
	r *kmsg.FetchRequest
	// names are the topics of the ids asked for: an answer of Fetch v13
	// and later names its topics by id only.
	names map[TopicID]string
	// unchecked is set when a topic was asked without an id: the request
	// then goes as Fetch v12 at most, by names (see maxVersion).
	unchecked bool
}

// TopicID is a topic's id (KIP-516, Kafka 2.8 and later); the zero id is
// none.
type TopicID [16]byte

// ParseTopicID reads an id as TopicIDs writes it (32 hex digits); the
// zero id for "" or anything else.
func ParseTopicID(s string) TopicID {
	var id TopicID
	if len(s) != 2*len(id) {
		return TopicID{}
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return TopicID{}
	}
	return id
}

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
	f.AddChecked(p, pos, size, epoch, TopicID{})
}

// AddChecked is AddEpoch with the id of the topic p was read under (the
// zero id: none). On Kafka 3.1 and later the request then goes as Fetch
// v13, which names topics by id: a broker whose topic of that name has
// another id (deleted and created again) answers UNKNOWN_TOPIC_ID
// (ErrUnknownTopicID) rather than the new topic's records at the old
// topic's offsets. A request with any topic asked without an id goes by
// names (v12 at most), as do all of them on older brokers.
func (f *FetchRequest) AddChecked(p offsets.Partition, pos int64, size, epoch int32, id TopicID) {
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
	switch {
	case t == nil:
		f.r.Topics = append(f.r.Topics, kmsg.NewFetchRequestTopic())
		t = &f.r.Topics[len(f.r.Topics)-1]
		t.Topic, t.TopicID = p.Topic, id
		if id == (TopicID{}) {
			f.unchecked = true
			break
		}
		if f.names == nil {
			f.names = make(map[TopicID]string, 1)
		}
		f.names[id] = p.Topic
	case t.TopicID != id:
		// Partitions of one topic asked under two ids (not one the
		// stream asks): by name, as before ids.
		t.TopicID = TopicID{}
		f.unchecked = true
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

// maxVersion is the highest Fetch version the request may go as: v13 and
// later name topics by id only, so a request with a topic asked without
// one goes as v12 at most. The client's version table (fetchVersion) and
// the broker's ApiVersions answer bound it further.
func (f *FetchRequest) maxVersion() int16 {
	if f.unchecked || len(f.r.Topics) == 0 {
		return 12
	}
	return 13
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
	names map[TopicID]string // the request's (an answer of v13 names topics by id)
	index map[offsets.Partition]*kmsg.FetchResponseTopicPartition
	// maxBatch is the client's MaxRecordBytes (0: the default).
	maxBatch int64
	// broker is the id of the broker that answered; maxThrottle the
	// client's cap on its throttle (0: MaxThrottle).
	broker      int32
	maxThrottle time.Duration
}

// ReadFetchResponse decodes body, the bytes of a Fetch answer of the
// given version after its header, as a broker's answer (tests of what the
// stream makes of an answer build its bytes by hand).
func ReadFetchResponse(version int16, body []byte) (*FetchResponse, error) {
	r := kmsg.NewPtrFetchResponse()
	r.Version = version
	if err := r.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("fetch answer v%d: %w", version, err)
	}
	return &FetchResponse{r: r}, nil
}

// MaxThrottle is the longest wait before the next fetch that kbatch takes
// from a broker's throttle (KIP-219, a client over its quota): six times
// the longest a Kafka broker asks with its default quota windows (11 s),
// and far below the 24 days a throttle_time_ms can say.
const MaxThrottle = time.Minute

// Throttle is how long the broker asked the client to wait before its next
// fetch (a throttled answer leaves partitions out), at most MaxThrottle.
// A broker that asks for more gets MaxThrottle, and err is a
// *ThrottleError saying what it asked. kbatch waits out the throttle
// itself, where it can say so (the stream, replay): kgo, which sends
// the request, would otherwise hold the next fetch for as long as the
// broker says (fetchconn.go, versioned.ResponseKind).
func (f *FetchResponse) Throttle() (wait time.Duration, err error) {
	wait = time.Duration(f.r.ThrottleMillis) * time.Millisecond
	limit := f.maxThrottle
	if limit <= 0 {
		limit = MaxThrottle
	}
	if wait > limit {
		return limit, &ThrottleError{Broker: f.broker, Asked: wait, Limit: limit}
	}
	return max(wait, 0), nil
}

// ThrottleError is a Fetch answer whose throttle is longer than kbatch
// waits (FetchResponse.Throttle).
type ThrottleError struct {
	Broker       int32
	Asked, Limit time.Duration
}

func (e *ThrottleError) Error() string {
	return fmt.Sprintf("broker %d asked to wait %s before the next fetch (throttle_time_ms %d), longer than a quota of Kafka's asks; kbatch waits at most %s",
		e.Broker, e.Asked, e.Asked.Milliseconds(), e.Limit)
}

// Partition returns the answer's part for p; nil when the answer left p
// out (throttled, or a broker that answered only some partitions).
func (f *FetchResponse) Partition(p offsets.Partition) *PartitionAnswer {
	if f.index == nil {
		f.index = make(map[offsets.Partition]*kmsg.FetchResponseTopicPartition)
		for i := range f.r.Topics {
			t := &f.r.Topics[i]
			name := t.Topic
			if f.r.Version >= 13 {
				name = f.names[t.TopicID]
				if name == "" {
					continue // an id not asked for
				}
			}
			for j := range t.Partitions {
				f.index[offsets.Partition{Topic: name, Partition: t.Partitions[j].Partition}] = &t.Partitions[j]
			}
		}
	}
	blk := f.index[p]
	if blk == nil {
		return nil
	}
	a := &PartitionAnswer{HighWatermark: blk.HighWatermark, LastStable: blk.LastStableOffset, PreferredReplica: -1, raw: blk.RecordBatches, maxBatch: f.maxBatch}
	if f.r.Version >= 11 {
		a.PreferredReplica = blk.PreferredReadReplica
	}
	switch blk.ErrorCode {
	case 0:
	case codeUnknownTopicID, codeInconsistentTopicID:
		a.Err = ErrUnknownTopicID
	default:
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
	maxBatch         int64 // the client's MaxRecordBytes
}

// Decode decodes the records in [pos, until) (see DecodeRecords), each
// record batch within the client's MaxRecordBytes, without a budget.
func (a *PartitionAnswer) Decode(p offsets.Partition, pos, until int64, committed bool) (Block, error) {
	return a.DecodeWithin(p, pos, until, committed, NoBudget)
}

// DecodeWithin is Decode within budget bytes of memory (Limits.Budget):
// the answer's batches past the budget are left for a later fetch. It is
// the one decode of the stream, replay and the broker search, so one
// budget and one cap on a batch hold for all of them. An error is a
// *CorruptBatchError: the Block then holds what the batches before the
// bad one gave (DecodeLimited).
func (a *PartitionAnswer) DecodeWithin(p offsets.Partition, pos, until int64, committed bool, budget int64) (Block, error) {
	return DecodeLimited(a.raw, a.aborted, p, pos, until, committed, Limits{Budget: budget, MaxBatch: a.maxBatch})
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

// fetchVersions is kbatch's one version table: from the newest protocol
// version down, the highest Fetch version each allows, as sarama's
// consumer picks it.
var fetchVersions = []struct {
	protocol sarama.KafkaVersion
	fetch    int16
}{
	{sarama.V2_7_0_0, 12},
	{sarama.V2_3_0_0, 11},
	{sarama.V2_1_0_0, 10},
	{sarama.V2_0_0_0, 8},
	{sarama.V1_1_0_0, 7},
	{sarama.V1_0_0_0, 6},
	{sarama.V0_11_0_0, 5},
	{sarama.V0_10_1_0, 3},
	{sarama.V0_10_0_0, 2},
	{sarama.V0_9_0_0, 1},
}

// fetchVersion picks the highest Fetch version the protocol version v
// allows (fetchVersions).
func fetchVersion(v sarama.KafkaVersion) int16 {
	for _, r := range fetchVersions {
		if v.IsAtLeast(r.protocol) {
			return r.fetch
		}
	}
	return 0
}

// Error codes of Fetch v13 and later that sarama's table does not have.
const (
	codeUnknownTopicID      = 100 // UNKNOWN_TOPIC_ID
	codeInconsistentTopicID = 103 // INCONSISTENT_TOPIC_ID (Kafka 3.1 to 3.4, for the same case)
)

// ErrUnknownTopicID is a partition's error when the broker has no topic of
// the id it was asked under (AddChecked): the topic was deleted, and maybe
// created again under the same name with another id. It is Retriable: the
// stream goes on asking under the old id until its metadata refresh sees
// what became of the topic (a new id: the stream moves to the new topic).
var ErrUnknownTopicID = errors.New("UNKNOWN_TOPIC_ID: the broker has no topic of the id it was read under (deleted, or deleted and created again)")

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
	ErrUnknownTopicID,
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
