package kafka

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// Client is a connection to one cluster: its metadata (brokers, topics,
// partitions, leaders) and at most two connections to each broker it
// talks to: one for every request but Fetch (sarama's), opened when
// first needed, and one for fetches (fetchconn.go). Dial makes one;
// Close releases it. It is safe for concurrent use.
type Client struct {
	sc sarama.Client
	// shared counts the Clients that share sc (Another): the last one
	// closed closes it.
	shared *sharedMeta
	closed bool // guarded by shared.mu
	// retryFor is how long offset lookups go on retrying a partition
	// whose leader fails or is unknown (a leader failover takes the
	// broker session timeout, 9 s by default, or ZooKeeper's 18 s).
	retryFor time.Duration
	// cc is the configuration the client was made from (the one that
	// worked), for the fetch connections (fetchconn.go).
	cc ClientConfig
	fc *fetchConns
	// noTopicIDs is set once a broker answered the fetch client's
	// topic-id request at a Metadata version without ids (a cluster
	// before Kafka 2.8): it is not asked again (topicids.go).
	noTopicIDs atomic.Bool
}

// sharedMeta is the number of Clients sharing one sarama client.
type sharedMeta struct {
	mu    sync.Mutex
	users int
}

// Another is a client of the same cluster, made as this one was
// (credentials included), with fetch connections of its own: for reads
// that must not wait behind this client's long polls, which hold its
// fetch connection to each broker. Every other request goes over this
// client's connections, which carry no fetches (and so no long polls);
// the new client opens its fetch connections at its first Fetch and
// closes them with Close. The two may be closed in either order.
func (c *Client) Another() (*Client, error) {
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if c.closed {
		return nil, sarama.ErrClosedClient
	}
	c.shared.users++
	return &Client{sc: c.sc, shared: c.shared, retryFor: c.retryFor, cc: c.cc, fc: &fetchConns{}}, nil
}

// Close closes the client's fetch connections, and its other
// connections unless a client made by Another still uses them. Closing
// it again does nothing but say so.
func (c *Client) Close() error {
	c.closeFetch()
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if c.closed {
		return sarama.ErrClosedClient
	}
	c.closed = true
	if c.shared.users--; c.shared.users > 0 {
		return nil
	}
	return c.sc.Close()
}

// bootstrap makes the sarama client of conf (whose Metadata.Full is
// off, so that making it connects nowhere) and asks the cluster, through
// one of addrs, for the metadata of every topic, as sarama.NewClient does
// with Metadata.Full on. The connection to that bootstrap address is then
// closed: sarama keeps it apart from its connection to the same broker by
// id, and would hold both open for the client's life while sending every
// later request to brokers by id. It opens again only when every broker
// the metadata named has failed. sarama puts the addresses in a random
// order and asks the first one first; one that cannot be connected to is
// passed over before the metadata is asked, by a client without it, so
// that the connection that answers is the one closed (an address whose
// TLS or SASL fails is left to sarama, which asks the next one and keeps
// that connection open).
func bootstrap(addrs []string, conf *sarama.Config) (sarama.Client, error) {
	addrs = slices.Clone(addrs)
	for len(addrs) > 0 {
		sc, err := sarama.NewClient(addrs, conf)
		if err != nil {
			return nil, err
		}
		// With no broker known yet, the least loaded one is the first
		// seed, which the refresh below asks first.
		seed := sc.LeastLoadedBroker()
		if seed != nil && len(addrs) > 1 {
			if _, err := seed.Connected(); unreachable(err) {
				_ = sc.Close()
				addrs = slices.DeleteFunc(addrs, func(a string) bool { return a == seed.Addr() })
				continue
			}
		}
		err = sc.RefreshMetadata()
		if err != nil && !errors.Is(err, sarama.ErrLeaderNotAvailable) && !errors.Is(err, sarama.ErrReplicaNotAvailable) &&
			!errors.Is(err, sarama.ErrTopicAuthorizationFailed) && !errors.Is(err, sarama.ErrClusterAuthorizationFailed) {
			// As sarama.NewClient: these say part of the cluster is
			// down or hidden, which does not keep the client from
			// starting.
			_ = sc.Close()
			return nil, err
		}
		if seed != nil {
			_ = seed.Close()
		}
		return sc, nil
	}
	return nil, sarama.ErrOutOfBrokers
}

// unreachable reports whether err is a failure to connect (refused, no
// route, timed out), as against a connection that TLS or SASL refused:
// bootstrap passes over such an address before the metadata is asked,
// and leaves the others to the metadata request, which tries the next
// address after them, so that credentials are not tried twice on one
// broker.
func unreachable(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// Topics lists the topics of the cluster's metadata.
func (c *Client) Topics() ([]string, error) { return c.sc.Topics() }

// Partitions lists the partition numbers of topic.
func (c *Client) Partitions(topic string) ([]int32, error) { return c.sc.Partitions(topic) }

// Leader returns p's leader broker, from the metadata as last refreshed.
func (c *Client) Leader(p offsets.Partition) (Broker, error) {
	b, err := c.sc.Leader(p.Topic, p.Partition)
	if err != nil {
		return Broker{ID: -1}, err
	}
	return Broker{ID: b.ID(), Addr: b.Addr()}, nil
}

// LeaderEpoch returns p's leader broker and its leader epoch (KIP-320),
// from the metadata as last refreshed; the epoch is -1 when the cluster
// does not tell it (metadata before v7, Kafka 2.1).
func (c *Client) LeaderEpoch(p offsets.Partition) (Broker, int32, error) {
	b, epoch, err := c.sc.LeaderAndEpoch(p.Topic, p.Partition)
	if err != nil {
		return Broker{ID: -1}, -1, err
	}
	return Broker{ID: b.ID(), Addr: b.Addr()}, epoch, nil
}

// KnowsBroker reports whether the metadata names broker id.
func (c *Client) KnowsBroker(id int32) bool {
	_, err := c.sc.Broker(id)
	return err == nil
}

// RefreshMetadata asks the cluster's metadata again, for topics (all
// topics when none is named).
func (c *Client) RefreshMetadata(topics ...string) error { return c.sc.RefreshMetadata(topics...) }

// Broker is a broker as the metadata names it.
type Broker struct {
	ID   int32
	Addr string
}

// Brokers lists the brokers the metadata names.
func (c *Client) Brokers() []Broker {
	var out []Broker
	for _, b := range c.sc.Brokers() {
		out = append(out, Broker{ID: b.ID(), Addr: b.Addr()})
	}
	return out
}

// Version is the Kafka protocol version the client speaks, as text
// ("2.8.0").
func (c *Client) Version() string { return c.sc.Config().Version.String() }

// ReadCommitted reports whether the client reads with read_committed
// isolation (ClientConfig.ReadCommitted).
func (c *Client) ReadCommitted() bool {
	return c.sc.Config().Consumer.IsolationLevel == sarama.ReadCommitted
}

// FetchOptions are the options of every Fetch of this client: the
// highest version its protocol version allows, its isolation, and the
// minimum bytes and maximum wait of a long poll.
func (c *Client) FetchOptions() FetchOptions { return fetchOptionsFor(c.sc.Config()) }

// FetchSizes are the client's partition fetch size (at least 1 KiB) and
// the largest a partition's fetch may grow to for a record batch larger
// than that: the configured maximum, or the largest answer the client
// accepts.
func (c *Client) FetchSizes() (partition, largest int32) {
	conf := c.sc.Config()
	partition = max(conf.Consumer.Fetch.Default, 1<<10)
	largest = sarama.MaxResponseSize
	if conf.Consumer.Fetch.Max > 0 {
		largest = max(conf.Consumer.Fetch.Max, partition)
	}
	return partition, largest
}

// Fetch sends req to the broker with id broker and returns its answer
// (over the fetch connections, fetchconn.go). After a failure the
// broker's connection is closed, so the next Fetch to it connects again.
func (c *Client) Fetch(broker int32, req *FetchRequest) (*FetchResponse, error) {
	return c.send(broker, req)
}

// FetchLeader is Fetch to p's leader; the error says when there is none.
func (c *Client) FetchLeader(p offsets.Partition, req *FetchRequest) (*FetchResponse, error) {
	b, err := c.sc.Leader(p.Topic, p.Partition)
	if err != nil {
		return nil, &NoLeaderError{Partition: p, Err: err}
	}
	resp, err := c.send(b.ID(), req)
	if err != nil {
		return nil, fmt.Errorf("fetch from broker %s: %w", b.Addr(), err)
	}
	return resp, nil
}

// NoLeaderError is a partition whose leader the metadata does not know.
type NoLeaderError struct {
	Partition offsets.Partition
	Err       error
}

func (e *NoLeaderError) Error() string { return "no leader: " + e.Err.Error() }
func (e *NoLeaderError) Unwrap() error { return e.Err }

// LogStart asks p's leader for the partition's log start offset.
func (c *Client) LogStart(p offsets.Partition) (int64, error) {
	return c.sc.GetOffset(p.Topic, p.Partition, sarama.OffsetOldest)
}

// Compacted reports whether topic's cleanup.policy includes compact, from
// a DescribeConfigs request to the least loaded broker.
func (c *Client) Compacted(topic string) (bool, error) {
	v, _, err := c.topicConfig(topic, "cleanup.policy")
	// Not listed: the default, delete.
	return strings.Contains(v, "compact"), err
}

// MaxMessageBytes is topic's max.message.bytes: the largest record batch
// its brokers take; ok is false when the broker did not list it.
func (c *Client) MaxMessageBytes(topic string) (n int32, ok bool, err error) {
	v, ok, err := c.topicConfig(topic, "max.message.bytes")
	if err != nil || !ok {
		return 0, false, err
	}
	i, err := strconv.ParseInt(v, 10, 32)
	if err != nil || i <= 0 {
		return 0, false, fmt.Errorf("max.message.bytes of %s: %q is not a size", topic, v)
	}
	return int32(i), true, nil
}

// SetProducerMaxMessageBytes sets the largest record (and record batch)
// the client's producers send (sarama's default is 1 MB); call it before
// NewProducer.
func (c *Client) SetProducerMaxMessageBytes(n int32) {
	c.sc.Config().Producer.MaxMessageBytes = int(n)
}

// topicConfig is the value of topic's configuration name (ok: listed),
// from a DescribeConfigs request to the least loaded broker.
func (c *Client) topicConfig(topic, name string) (string, bool, error) {
	answer, err := c.describeTopicConfigs([]string{topic}, []string{name})
	if err != nil {
		var kerr sarama.KError
		if errors.As(err, &kerr) {
			return "", false, kerr
		}
		return "", false, err
	}
	cfg, ok := answer[topic]
	if !ok {
		return "", false, errors.New("no answer for the topic")
	}
	v, ok := cfg[name]
	return v, ok, nil
}

// Partition errors a caller tells apart (errors.Is); Retriable names the
// ones worth another try.
var (
	ErrOffsetOutOfRange         error = sarama.ErrOffsetOutOfRange
	ErrMessageTooLarge          error = sarama.ErrMessageTooLarge
	ErrLeaderNotAvailable       error = sarama.ErrLeaderNotAvailable
	ErrIncompleteResponse       error = sarama.ErrIncompleteResponse
	ErrTopicAuthorizationFailed error = sarama.ErrTopicAuthorizationFailed
	ErrUnknownTopicOrPartition  error = sarama.ErrUnknownTopicOrPartition
)
