package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/kbatch-dev/kbatch/offsets"
)

// DefaultKafkaVersion is the protocol version kbatch speaks unless told
// otherwise (ClientConfig.Version ""): old enough for every broker still
// in use, new enough for ListOffsets by timestamp, headers and
// transactions.
const DefaultKafkaVersion = "2.8.0"

// protocolVersion is the version cc.Version names, DefaultKafkaVersion
// when it is "" or not one ParseVersion takes (Dial refuses those first).
func (cc ClientConfig) protocolVersion() sarama.KafkaVersion {
	if v, err := sarama.ParseKafkaVersion(cc.Version); cc.Version != "" && err == nil {
		return v
	}
	v, _ := sarama.ParseKafkaVersion(DefaultKafkaVersion)
	return v
}

// ParseVersion checks a Kafka protocol version given as text ("2.8.0",
// "3.7") and returns it as ClientConfig.Version takes it.
func ParseVersion(v string) (string, error) {
	kv, err := sarama.ParseKafkaVersion(v)
	if err != nil {
		return "", err
	}
	return kv.String(), nil
}

// SASL holds SASL credentials. Password is a secret: it is never printed
// or stored.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER,
	// AWS_MSK_IAM (OAUTHBEARER with a token signed for MSK) or GSSAPI.
	Mechanism string
	User      string
	Password  string
	// TokenProvider gives the bearer token of OAUTHBEARER and AWS_MSK_IAM.
	TokenProvider *TokenProvider
	// Kerberos configures GSSAPI.
	Kerberos *Kerberos

	// unprepped is set once a SCRAM login succeeded only without SASLprep
	// (see scramNeedsUnprepped): the connections made after it go the
	// same way.
	unprepped bool
}

// Kerberos is how GSSAPI logs in: with Keytab, else CCache, else the SASL
// user name and password; User@Realm is the principal, and the brokers'
// principal is ServiceName/HOST@REALM.
type Kerberos struct {
	ConfigPath  string
	ServiceName string
	Realm       string
	Keytab      string
	CCache      string
	DisableFAST bool
}

// ClientConfig is everything needed to reach a cluster. It is the one place
// kbatch's sarama configuration is built from.
type ClientConfig struct {
	Brokers []string
	// Version is the Kafka protocol version, as ParseVersion returns it;
	// "" means DefaultKafkaVersion. Dial refuses one ParseVersion does not
	// take.
	Version string
	// DialTimeout bounds how long reaching the cluster may take before Dial
	// gives up with a clear error; zero means 10s.
	DialTimeout time.Duration
	TLS         *tls.Config
	SASL        *SASL
	ClientID    string
	// Rack is the client's rack (KIP-392), sent with every Fetch (v11 and
	// later); "" sends none.
	Rack string
	// Isolation is used by fetches and ListOffsets.
	ReadCommitted bool
	// MaxRecordBytes is how many bytes one record batch (and so one
	// record) may take once decompressed; a batch above it is a
	// CorruptBatchError, never allocated. 0: DefaultMaxRecordBytes.
	MaxRecordBytes int64
	// FailFast makes one attempt at each metadata request and bounds
	// every request by DialTimeout, for answers that are worth less than
	// a wait (shell completion).
	FailFast bool

	// maxThrottle is Tuning.MaxThrottle (0: MaxThrottle).
	maxThrottle time.Duration
}

// lookupRetry is how long offset lookups retry partitions whose leader
// fails: longer than a leader failover, so a broker that died just before
// kbatch starts is waited out instead of ending the run.
const lookupRetry = 30 * time.Second

// retryFor is lookupRetry, or nothing with FailFast (one attempt).
func (cc ClientConfig) retryFor() time.Duration {
	if cc.FailFast {
		return 0
	}
	return lookupRetry
}

func (cc ClientConfig) dialTimeout() time.Duration {
	if cc.DialTimeout <= 0 {
		return 10 * time.Second
	}
	return cc.DialTimeout
}

// saramaConfig builds the sarama configuration for cc. Callers may adjust
// consumer or producer sections before use.
func (cc ClientConfig) saramaConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.Version = cc.protocolVersion()
	c.ClientID = "kbatch"
	if cc.ClientID != "" {
		c.ClientID = cc.ClientID
	}
	c.RackID = cc.Rack
	d := cc.dialTimeout()
	c.Net.DialTimeout = d / 2
	c.Net.ReadTimeout = 30 * time.Second
	c.Net.WriteTimeout = 30 * time.Second
	c.Metadata.Retry.Max = 1
	c.Metadata.Retry.Backoff = 250 * time.Millisecond
	c.Metadata.AllowAutoTopicCreation = false
	// bootstrap asks for every topic's metadata itself, on the bootstrap
	// connection it then closes; afterwards the client refreshes the
	// topics it knows of, by name.
	c.Metadata.Full = false
	c.Metadata.RefreshFrequency = 30 * time.Second
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.AutoCommit.Enable = false
	c.Consumer.MaxWaitTime = 100 * time.Millisecond
	c.Consumer.Fetch.Default = 1 << 20
	c.Consumer.Fetch.Max = 0
	c.Consumer.MaxProcessingTime = time.Second
	c.ChannelBufferSize = 256
	if cc.ReadCommitted {
		c.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	if cc.FailFast {
		c.Metadata.Retry.Max = 0
		c.Net.ReadTimeout, c.Net.WriteTimeout = d, d
	}
	if cc.TLS != nil {
		c.Net.TLS.Enable = true
		c.Net.TLS.Config = cc.TLS
	}
	if cc.SASL != nil {
		c.Net.SASL.Enable = true
		c.Net.SASL.Handshake = true
		c.Net.SASL.User = cc.SASL.User
		c.Net.SASL.Password = cc.SASL.Password
		switch strings.ToUpper(cc.SASL.Mechanism) {
		case "SCRAM-SHA-256":
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
			c.Net.SASL.SCRAMClientGeneratorFunc = scramClientFor(cc.SASL.Mechanism, cc.SASL.unprepped)
		case "SCRAM-SHA-512":
			c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			c.Net.SASL.SCRAMClientGeneratorFunc = scramClientFor(cc.SASL.Mechanism, cc.SASL.unprepped)
		case "OAUTHBEARER", "AWS_MSK_IAM":
			c.Net.SASL.Mechanism = sarama.SASLTypeOAuth
			if cc.SASL.TokenProvider != nil {
				c.Net.SASL.TokenProvider = saramaTokens{cc.SASL.TokenProvider}
			}
		case "GSSAPI":
			c.Net.SASL.Mechanism = sarama.SASLTypeGSSAPI
			if k := cc.SASL.Kerberos; k != nil {
				g := &c.Net.SASL.GSSAPI
				g.KerberosConfigPath, g.ServiceName, g.Realm = k.ConfigPath, k.ServiceName, k.Realm
				g.Username, g.Password, g.DisablePAFXFAST = cc.SASL.User, cc.SASL.Password, k.DisableFAST
				switch {
				case k.Keytab != "":
					g.AuthType, g.KeyTabPath = sarama.KRB5_KEYTAB_AUTH, k.Keytab
				case k.CCache != "":
					g.AuthType, g.CCachePath = sarama.KRB5_CCACHE_AUTH, k.CCache
				default:
					g.AuthType = sarama.KRB5_USER_AUTH
				}
			}
		default:
			c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		}
		if c.Net.SASL.Mechanism == sarama.SASLTypeGSSAPI {
			// sarama gets its connections authenticated, by the
			// process's one Kerberos login (sasldial.go); the
			// settings above still say how, for the dialer and the
			// fetch client.
			c.Net.SASL.Enable, c.Net.TLS.Enable = false, false
			c.Net.Proxy.Enable = true
			c.Net.Proxy.Dialer = &saslDialer{conf: c, tls: cc.TLS, mechanism: func() (sasl.Mechanism, error) {
				return saslMechanism(cc, c)
			}}
		}
	}
	return c
}

// ErrUnreachable wraps every failure to reach the cluster at start.
var ErrUnreachable = errors.New("cannot reach the Kafka cluster")

// Dial connects to the cluster and fetches its metadata, failing with an
// error wrapping ErrUnreachable within about DialTimeout when no broker
// answers.
func Dial(cc ClientConfig) (*Client, error) {
	return dial(cc, cc.saramaConfig())
}

// Tuning holds the settings tests and the simulation change from what
// Dial uses; a zero field keeps Dial's.
type Tuning struct {
	// MaxWait is how long a Fetch waits at the broker for data (Dial:
	// 100ms).
	MaxWait time.Duration
	// FetchBytes is the first read-ahead per partition (Dial: 1 MiB).
	FetchBytes int32
	// RequestTimeout bounds each request's write and read (Dial: 30s).
	RequestTimeout time.Duration
	// NoMetadataRetry makes one attempt at each metadata request.
	NoMetadataRetry bool
	// MaxThrottle is the longest throttle of a Fetch answer waited out
	// (Dial: MaxThrottle).
	MaxThrottle time.Duration
}

// DialWith is Dial with the settings of t.
func DialWith(cc ClientConfig, t Tuning) (*Client, error) {
	cc.maxThrottle = t.MaxThrottle
	return dial(cc, cc.tuned(t))
}

// tuned is cc's sarama configuration with the settings of t.
func (cc ClientConfig) tuned(t Tuning) *sarama.Config {
	conf := cc.saramaConfig()
	if t.MaxWait > 0 {
		conf.Consumer.MaxWaitTime = t.MaxWait
	}
	if t.FetchBytes > 0 {
		conf.Consumer.Fetch.Default = t.FetchBytes
	}
	if t.RequestTimeout > 0 {
		conf.Net.ReadTimeout, conf.Net.WriteTimeout = t.RequestTimeout, t.RequestTimeout
	}
	if t.NoMetadataRetry {
		conf.Metadata.Retry.Max = 0
	}
	return conf
}

// dial connects with conf, built from cc by saramaConfig.
func dial(cc ClientConfig, conf *sarama.Config) (*Client, error) {
	if len(cc.Brokers) == 0 {
		return nil, fmt.Errorf("%w: no brokers given (use -b host:port or KBATCH_BROKERS)", ErrUnreachable)
	}
	if cc.Version != "" {
		if _, err := ParseVersion(cc.Version); err != nil {
			return nil, fmt.Errorf("invalid Kafka version %q: %w", cc.Version, err)
		}
	}
	c, cause, err := dialOnce(cc, conf)
	if err != nil && cause != nil && scramNeedsUnprepped(cc, cause) {
		// Kafka holds the credential of the password as typed: try that,
		// and keep it for the connections made from cc after this one.
		cc.SASL.unprepped = true
		conf.Net.SASL.SCRAMClientGeneratorFunc = scramClientFor(cc.SASL.Mechanism, true)
		c, _, err = dialOnce(cc, conf)
	}
	return c, err
}

// dialOnce makes one attempt of dial. On failure it returns the cause
// diagnose found (nil when there was no answer in time) and the error to
// report.
func dialOnce(cc ClientConfig, conf *sarama.Config) (*Client, error, error) {
	type result struct {
		c   sarama.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := bootstrap(cc.Brokers, conf)
		done <- result{c, err}
	}()
	timeout := cc.dialTimeout()
	select {
	case r := <-done:
		if r.err != nil {
			cause := rootCause(cc, conf, r.err)
			return nil, cause, fmt.Errorf("%w at %s: %s", ErrUnreachable, strings.Join(cc.Brokers, ","), describe(cc, conf, cause))
		}
		return &Client{sc: r.c, shared: &sharedMeta{users: 1}, retryFor: cc.retryFor(), cc: cc, fc: &fetchConns{}}, nil, nil
	case <-time.After(timeout + 2*time.Second):
		go func() {
			if r := <-done; r.c != nil {
				_ = r.c.Close()
			}
		}()
		hint := ""
		if cc.TLS != nil {
			hint = " (no TLS handshake answer: a plaintext listener? drop --tls)"
		}
		return nil, nil, fmt.Errorf("%w at %s: no answer within %s%s", ErrUnreachable, strings.Join(cc.Brokers, ","), timeout, hint)
	}
}

// diagnose explains why the client could not start.
func diagnose(cc ClientConfig, conf *sarama.Config, err error) string {
	return describe(cc, conf, rootCause(cc, conf, err))
}

// rootCause finds the real cause of a failure to start: sarama only says
// it ran out of brokers, so one connection to the first broker is opened
// again to learn it: refused, timed out, TLS or SASL.
func rootCause(cc ClientConfig, conf *sarama.Config, err error) error {
	if errors.Is(err, sarama.ErrOutOfBrokers) {
		b := sarama.NewBroker(cc.Brokers[0])
		if oerr := b.Open(conf); oerr == nil {
			if _, cerr := b.Connected(); cerr != nil {
				err = cerr
			} else {
				// TLS and SASL failures can surface on the first request.
				if _, rerr := b.GetMetadata(&sarama.MetadataRequest{Version: 1}); rerr != nil {
					err = rerr
				}
				_ = b.Close()
			}
		}
	}
	return err
}

// describe says what err, the cause of a failure to start, means.
func describe(cc ClientConfig, conf *sarama.Config, err error) string {
	if s := describeSecurityError(cc, err); s != "" {
		return s
	}
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "connection timed out"
	case strings.Contains(msg, "connection refused"):
		return "connection refused (is the address right and the broker up?)"
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "certificate"):
		return "TLS: " + msg
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "TLS handshake failed: the broker does not speak TLS on this port (drop --tls?)"
	case errors.Is(err, io.EOF) || strings.Contains(msg, "connection reset"):
		if cc.TLS != nil {
			return "the broker closed the connection during the TLS handshake"
		}
		return "the broker closed the connection on the first request (a TLS or SASL listener? try --tls or the SASL flags)"
	case errors.Is(err, sarama.ErrOutOfBrokers):
		return "no broker answered (is the address right and the broker up?)"
	}
	return msg
}

// TopicPartitions returns every partition of topics. An unknown topic is an
// error wrapping ErrUnknownTopic that names it.
func TopicPartitions(c *Client, topics []string) ([]offsets.Partition, error) {
	var out []offsets.Partition
	for _, t := range topics {
		ps, err := c.sc.Partitions(t)
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) || (err == nil && len(ps) == 0) {
			return nil, fmt.Errorf("%w: %q does not exist on this cluster", ErrUnknownTopic, t)
		}
		if err != nil {
			return nil, fmt.Errorf("partitions of topic %q: %w", t, err)
		}
		for _, p := range ps {
			out = append(out, offsets.Partition{Topic: t, Partition: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out, nil
}

// ErrUnknownTopic marks a topic that the cluster does not have.
var ErrUnknownTopic = errors.New("unknown topic")

// ListBounds fetches the log start offset and high watermark of every
// partition, with one ListOffsets request per leader broker and kind
// (earliest, latest), not one per partition.
func ListBounds(c *Client, parts []offsets.Partition) (map[offsets.Partition]offsets.Bounds, error) {
	return ListBoundsContext(context.Background(), c, parts)
}

// ListBoundsContext is ListBounds whose waits between retries end when
// ctx is done (a request already sent still runs to its answer or the
// network timeout).
//
// A topic deleted meanwhile (unknown to the cluster for goneAfter, see
// listOffsets) is not waited for: the bounds of every other
// partition come back with a *TopicsGoneError naming it, so a listing of
// every topic can leave it out (DropGone) while a stream of it stops with
// "does not exist".
func ListBoundsContext(ctx context.Context, c *Client, parts []offsets.Partition) (map[offsets.Partition]offsets.Bounds, error) {
	starts, gone, err := listOffsets(ctx, c, parts, func(offsets.Partition) int64 { return sarama.OffsetOldest })
	if err != nil {
		return nil, err
	}
	left := parts
	if len(gone) > 0 {
		left = make([]offsets.Partition, 0, len(parts))
		for _, p := range parts {
			if !gone[p.Topic] {
				left = append(left, p)
			}
		}
	}
	ends, gone2, err := listOffsets(ctx, c, left, func(offsets.Partition) int64 { return sarama.OffsetNewest })
	if err != nil {
		return nil, err
	}
	for t := range gone2 {
		gone[t] = true
	}
	out := make(map[offsets.Partition]offsets.Bounds, len(parts))
	for _, p := range parts {
		if !gone[p.Topic] {
			b := offsets.Bounds{LogStart: starts[p], HighWatermark: ends[p]}
			if b.LogStart < 0 || b.LogStart > b.HighWatermark {
				return nil, &ImpossibleBoundsError{Partition: p, Bounds: b}
			}
			out[p] = b
		}
	}
	if len(gone) > 0 {
		return out, newTopicsGone(gone)
	}
	return out, nil
}

// ImpossibleBoundsError is a broker's answer to ListOffsets that no log
// has: a negative log start or high watermark, or a log start above the
// high watermark. Started there, a stream would read from an offset that
// does not exist (a negative one stored as a position, or a reset to a
// "log start" past the end); so the partition's bounds are an error,
// never used.
type ImpossibleBoundsError struct {
	Partition offsets.Partition
	Bounds    offsets.Bounds
}

func (e *ImpossibleBoundsError) Error() string {
	return fmt.Sprintf("list offsets for %s: the broker answered log start %d and high watermark %d, which no log has "+
		"(offsets are 0 or more, and the log start is at most the high watermark)", e.Partition, e.Bounds.LogStart, e.Bounds.HighWatermark)
}

// TopicsGoneError names topics deleted while their offsets were looked
// up. It wraps ErrUnknownTopic.
type TopicsGoneError struct{ Topics []string } // sorted

func newTopicsGone(gone map[string]bool) *TopicsGoneError {
	e := &TopicsGoneError{}
	for t := range gone {
		e.Topics = append(e.Topics, t)
	}
	sort.Strings(e.Topics)
	return e
}

func (e *TopicsGoneError) Error() string {
	q := make([]string, len(e.Topics))
	for i, t := range e.Topics {
		q[i] = strconv.Quote(t)
	}
	return fmt.Sprintf("%v: %s does not exist on this cluster any more (deleted while kbatch looked up its offsets)", ErrUnknownTopic, strings.Join(q, ", "))
}

func (e *TopicsGoneError) Unwrap() error { return ErrUnknownTopic }

// DropGone is for listings of every topic: when err is a
// *TopicsGoneError, it returns parts without the partitions of the topics
// it names, and no error; otherwise parts and err unchanged.
func DropGone(parts []offsets.Partition, err error) ([]offsets.Partition, error) {
	var gone *TopicsGoneError
	if !errors.As(err, &gone) {
		return parts, err
	}
	kept := make([]offsets.Partition, 0, len(parts))
	for _, p := range parts {
		if _, found := slices.BinarySearch(gone.Topics, p.Topic); !found {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// ListOffsetsForTimes asks, per partition, for the first offset whose
// timestamp is at or after the given time; -1 means no such record.
func ListOffsetsForTimes(c *Client, at map[offsets.Partition]time.Time) (map[offsets.Partition]int64, error) {
	parts := make([]offsets.Partition, 0, len(at))
	for p := range at {
		parts = append(parts, p)
	}
	out, gone, err := listOffsets(context.Background(), c, parts, func(p offsets.Partition) int64 { return at[p].UnixMilli() })
	if err == nil && len(gone) > 0 {
		return nil, newTopicsGone(gone)
	}
	for _, p := range offsets.SortedPartitions(out) {
		if out[p] < -1 {
			return nil, fmt.Errorf("list offsets for %s at %s: the broker answered offset %d, which no record has (an offset is 0 or more, or -1 for none)",
				p, at[p].UTC().Format(time.RFC3339Nano), out[p])
		}
	}
	return out, err
}

// listOffsets groups partitions by leader and sends one request per broker.
// Partitions whose leader fails or is unknown are retried, with metadata
// refreshed, for c.retryFor (waits from 200 ms up to 2 s, ending early when
// ctx is done); then the last error is returned. A topic that the
// cluster says it does not know (UNKNOWN_TOPIC_OR_PARTITION to a metadata
// request for it alone) on every refresh for goneAfter was deleted
// (noteDeleted): its partitions are not retried and it comes back
// in gone. A topic just created may be missing from a broker's metadata
// for a moment, so one answer does not say it; a topic refused for
// another reason (not authorized, say) is retried and reported as such.
func listOffsets(ctx context.Context, c *Client, parts []offsets.Partition, ts func(offsets.Partition) int64) (out map[offsets.Partition]int64, gone map[string]bool, err error) {
	start := time.Now()
	out = make(map[offsets.Partition]int64, len(parts))
	gone = map[string]bool{}
	missing := map[string]time.Time{} // since when the cluster has not known the topic
	pending := parts
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			topics := map[string]bool{}
			for _, p := range pending {
				topics[p.Topic] = true
			}
			names := make([]string, 0, len(topics))
			for t := range topics {
				names = append(names, t)
			}
			c.noteDeleted(names, missing, gone)
			kept := pending[:0:0]
			for _, p := range pending {
				if !gone[p.Topic] {
					kept = append(kept, p)
				}
			}
			if pending = kept; len(pending) == 0 {
				break
			}
		}
		byBroker := map[*sarama.Broker][]offsets.Partition{}
		var lastErr error
		var noLeader offsets.Partition
		var leaderErr error
		for _, p := range pending {
			b, err := c.sc.Leader(p.Topic, p.Partition)
			if err != nil {
				lastErr = fmt.Errorf("leader of %s: %w", p, err)
				leaderErr, noLeader = lastErr, p
				continue
			}
			byBroker[b] = append(byBroker[b], p)
		}
		var retry []offsets.Partition
		for b, ps := range byBroker {
			req := sarama.NewOffsetRequest(c.sc.Config().Version)
			req.IsolationLevel = c.sc.Config().Consumer.IsolationLevel
			for _, p := range ps {
				req.AddBlock(p.Topic, p.Partition, ts(p), 1)
			}
			resp, err := b.GetAvailableOffsets(req)
			if err != nil {
				_ = b.Close()
				lastErr = fmt.Errorf("list offsets from broker %s: %w", b.Addr(), err)
				retry = append(retry, ps...)
				continue
			}
			for _, p := range ps {
				blk := resp.GetBlock(p.Topic, p.Partition)
				switch {
				case blk == nil:
					lastErr = fmt.Errorf("list offsets: no answer for %s", p)
					retry = append(retry, p)
				case !errors.Is(blk.Err, sarama.ErrNoError):
					lastErr = fmt.Errorf("list offsets for %s: %w", p, blk.Err)
					retry = append(retry, p)
				case req.Version >= 1:
					out[p] = blk.Offset
				case len(blk.Offsets) > 0:
					out[p] = blk.Offsets[0]
				default:
					out[p] = -1
				}
			}
		}
		// Partitions whose leader lookup failed are retried too.
		for _, p := range pending {
			if _, ok := out[p]; !ok && !contains(retry, p) {
				retry = append(retry, p)
			}
		}
		if len(retry) > 0 && time.Since(start) >= c.retryFor {
			if leaderErr != nil && lastErr == leaderErr {
				return nil, nil, c.unlistedLeader(noLeader, lastErr)
			}
			return nil, nil, lastErr
		}
		if len(retry) > 0 {
			t := time.NewTimer(min(time.Duration(attempt+1)*200*time.Millisecond, 2*time.Second))
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, nil, errors.Join(lastErr, ctx.Err())
			case <-t.C:
			}
		}
		pending = retry
	}
	return out, gone, nil
}

// unlistedLeader words the failed leader lookup err of p. sarama says only
// that the partition has no leader; when the cluster's metadata names a
// leader it does not list among its brokers (a broker without a listener
// for this client, or a broker that lies), the error names that broker id
// and the ids listed. Otherwise, or when the metadata cannot be asked, it
// is err.
func (c *Client) unlistedLeader(p offsets.Partition, err error) error {
	b := c.sc.LeastLoadedBroker()
	if b == nil {
		return err
	}
	resp, merr := b.GetMetadata(sarama.NewMetadataRequest(c.sc.Config().Version, []string{p.Topic}))
	if merr != nil {
		return err
	}
	listed := make([]int32, 0, len(resp.Brokers))
	for _, br := range resp.Brokers {
		listed = append(listed, br.ID())
	}
	for _, t := range resp.Topics {
		if t.Name != p.Topic {
			continue
		}
		for _, pm := range t.Partitions {
			if pm.ID == p.Partition && pm.Leader >= 0 && !slices.Contains(listed, pm.Leader) {
				slices.Sort(listed)
				return fmt.Errorf("leader of %s: the cluster's metadata names broker %d as its leader but lists no broker %d (it lists %s)",
					p, pm.Leader, pm.Leader, joinIDs(listed))
			}
		}
	}
	return err
}

// joinIDs lists broker ids as "1, 2, 3", or "none".
func joinIDs(ids []int32) string {
	if len(ids) == 0 {
		return "none"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ", ")
}

// noteDeleted refreshes the metadata of topics and marks in gone those that
// the cluster, asked for each alone, has not known for goneAfter; missing
// keeps since when it has not known each.
func (c *Client) noteDeleted(topics []string, missing map[string]time.Time, gone map[string]bool) {
	if err := c.sc.RefreshMetadata(topics...); !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
		clear(missing)
		return
	}
	have, _ := c.sc.Topics()
	for _, t := range topics {
		// The error above may be another topic's: a missing one is asked
		// for alone.
		if slices.Contains(have, t) || !errors.Is(c.sc.RefreshMetadata(t), sarama.ErrUnknownTopicOrPartition) {
			delete(missing, t)
			continue
		}
		if since, seen := missing[t]; !seen {
			missing[t] = time.Now()
		} else if time.Since(since) >= goneAfter {
			gone[t] = true
		}
	}
}

// goneAfter is how long a topic must stay unknown to the cluster before an
// offset lookup takes it for deleted (listOffsets).
const goneAfter = 5 * time.Second

func contains(ps []offsets.Partition, p offsets.Partition) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// ClusterID asks the cluster for its id (metadata v2, Kafka 0.10.1 and
// later) in a metadata request for topics only. It returns "" without
// asking when the protocol version set is older, and "" when the cluster
// has none.
func ClusterID(c *Client, topics []string) (string, error) {
	if !c.sc.Config().Version.IsAtLeast(sarama.V0_10_1_0) || len(topics) == 0 {
		return "", nil
	}
	b, err := c.sc.Controller()
	if err != nil {
		return "", err
	}
	resp, err := b.GetMetadata(&sarama.MetadataRequest{Version: 2, Topics: topics})
	if err != nil {
		return "", err
	}
	if resp.ClusterID == nil {
		return "", nil
	}
	return *resp.ClusterID, nil
}
