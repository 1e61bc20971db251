package kafka

import (
	"errors"
	"time"

	"github.com/IBM/sarama"

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
	}
}

// Committed reports whether answers to these options hold only committed
// records (and list the aborted transactions to skip): read_committed on a
// version that has it.
func (o FetchOptions) Committed() bool { return o.ReadCommitted && o.Version >= 4 }

// NewFetchRequest is the one place kbatch builds a Fetch request: the
// stream, replay and the probe (NoRecordsBetween) all send what it builds.
// maxBytes bounds the whole answer (Fetch v3 and later). No fetch session
// is used (SessionID 0, SessionEpoch -1, Fetch v7 and later): every
// request names all its partitions. Add partitions with AddFetchPartition.
func NewFetchRequest(o FetchOptions, maxBytes int32) *sarama.FetchRequest {
	req := &sarama.FetchRequest{Version: o.Version, MinBytes: max(o.MinBytes, 1), MaxWaitTime: int32(o.MaxWait / time.Millisecond)}
	if o.Version >= 3 {
		req.MaxBytes = maxBytes
	}
	if o.Version >= 4 && o.ReadCommitted {
		req.Isolation = sarama.ReadCommitted
	}
	if o.Version >= 7 {
		req.SessionID, req.SessionEpoch = 0, -1 // no fetch session
	}
	return req
}

// AddFetchPartition adds p, read from pos with at most size bytes, to req
// (no leader epoch: -1).
func AddFetchPartition(req *sarama.FetchRequest, p offsets.Partition, pos int64, size int32) {
	req.AddBlock(p.Topic, p.Partition, pos, size, -1)
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
