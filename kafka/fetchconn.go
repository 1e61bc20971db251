package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/kerberos"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// Fetches go over connections of their own, opened by franz-go's kgo
// client: kgo sends the request kbatch built (kmsg, NewFetchRequest) and
// hands back the answer as it came, with each partition's record batches
// as raw bytes, which DecodeRecords reads straight into kbatch's records.
// sarama, which sends every other request, has no way to send a request
// of the caller's own nor to return an answer's raw bytes: it decodes
// every record into an object of its own first, which makes fetching
// twice as costly as it needs to be on small records. The same kgo client
// also sends the few requests sarama 1.61 does not know: Metadata with
// topic ids under a protocol version before 2.8 (topicids.go), and
// ApiVersions and ConsumerGroupDescribe for Kafka 4's consumer groups
// (groupcommit.go). Those, and kgo's own metadata requests, go over each
// broker's general connection, which is closed once idle
// (fetchConnIdle), so a broker keeps one kgo connection: its fetch
// connection. kgo's connections authenticate as sarama's do, from the
// same ClientConfig: the same TLS configuration, and SASL through
// franz-go's PLAIN, OAUTHBEARER and GSSAPI mechanisms (GSSAPI with the
// process's one Kerberos login, kerberos.go) and kbatch's own SCRAM
// conversation (the one sarama uses).

// fetchConns is the client's kgo client, made at the first Fetch.
type fetchConns struct {
	once sync.Once
	cl   *kgo.Client
	err  error
}

// fetchClient returns the client's kgo client, making it at first use.
func (c *Client) fetchClient() (*kgo.Client, error) {
	c.fc.once.Do(func() { c.fc.cl, c.fc.err = newFetchClient(c.cc, c.sc.Config()) })
	return c.fc.cl, c.fc.err
}

// closeFetch closes the kgo client, if one was made.
func (c *Client) closeFetch() {
	c.fc.once.Do(func() { c.fc.err = errors.New("client closed") })
	if c.fc.cl != nil {
		c.fc.cl.Close()
	}
}

// fetchConnIdle is how long a connection of the kgo client may stay idle
// before it is closed (it is closed within twice that). The fetch
// connection of a broker being read is never idle: a long poll is always
// waiting on it. The others are short-lived by design: the one to the
// bootstrap address, which kgo opens for its first metadata and keeps
// apart from the broker's own, and each broker's general connection,
// which carries kgo's metadata requests (its first, one every five
// minutes, one after a broker it did not know) and the few requests
// sarama does not know; kept open, they would be a third and a fourth
// connection to a broker beside sarama's and the fetch one.
const fetchConnIdle = 2 * time.Second

// newFetchClient makes the kgo client of cc, with conf's client id,
// timeouts and protocol version (Fetch at most fetchMaxVersion of it).
func newFetchClient(cc ClientConfig, conf *sarama.Config) (*kgo.Client, error) {
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(kmsg.Fetch.Int16(), fetchMaxVersion(conf.Version))
	opts := []kgo.Opt{
		kgo.SeedBrokers(cc.Brokers...),
		kgo.ClientID(conf.ClientID),
		kgo.MaxVersions(versions),
		kgo.DialTimeout(conf.Net.DialTimeout),
		kgo.RequestTimeoutOverhead(conf.Net.ReadTimeout),
		kgo.BrokerMaxReadBytes(2 * sarama.MaxResponseSize),
		kgo.RequestRetries(0),
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.ConnIdleTimeout(fetchConnIdle),
		kgo.WithLogger(kgoLogger{}),
	}
	if cc.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(cc.TLS.Clone()))
	}
	if cc.SASL != nil {
		m, err := saslMechanism(cc, conf)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return kgo.NewClient(opts...)
}

// fetchMaxVersion is the highest Fetch version the kgo client sends under
// protocol version v: fetchVersion's, and v13 (topic ids, Kafka 3.1) where
// that is v12 (protocol 2.7 and later, the default 2.8 among them). kgo
// asks every broker its versions (ApiVersions) and never sends one it
// does not serve, so a 2.8 to 3.0 broker is still asked v12; v13 is what
// lets a broker refuse to serve a topic created again under the old
// topic's name to a reader of the old one (AddChecked).
func fetchMaxVersion(v sarama.KafkaVersion) int16 {
	if n := fetchVersion(v); n < 12 {
		return n
	}
	return 13
}

// saslMechanism is conf's SASL mechanism for kgo.
func saslMechanism(cc ClientConfig, conf *sarama.Config) (sasl.Mechanism, error) {
	s := conf.Net.SASL
	switch s.Mechanism {
	case sarama.SASLTypePlaintext:
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism(), nil
	case sarama.SASLTypeSCRAMSHA256, sarama.SASLTypeSCRAMSHA512:
		if s.SCRAMClientGeneratorFunc == nil {
			return nil, fmt.Errorf("SASL %s: no SCRAM client", s.Mechanism)
		}
		return scramMechanism{name: string(s.Mechanism), user: s.User, pass: s.Password, gen: s.SCRAMClientGeneratorFunc}, nil
	case sarama.SASLTypeOAuth:
		tp := s.TokenProvider
		if tp == nil {
			return nil, errors.New("SASL OAUTHBEARER: no token provider")
		}
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
			tok, err := tp.Token()
			if err != nil {
				return oauth.Auth{}, err
			}
			return oauth.Auth{Token: tok.Token, Extensions: tok.Extensions}, nil
		}), nil
	case sarama.SASLTypeGSSAPI:
		g := s.GSSAPI
		kc, err := kerberosClient(&g)
		if err != nil {
			return nil, fmt.Errorf("kerberos: %w", err)
		}
		service := g.ServiceName
		if service == "" {
			service = "kafka"
		}
		// AsMechanism: closing the kgo client leaves the process's
		// Kerberos client alone.
		return kerberos.Auth{Client: kc, Service: service}.AsMechanism(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q is not supported for fetches", s.Mechanism)
}

// scramMechanism runs kbatch's SCRAM conversation (the sarama.SCRAMClient
// that scramClientFor makes, with its SASLprep choice) on a kgo
// connection.
type scramMechanism struct {
	name, user, pass string
	gen              func() sarama.SCRAMClient
}

func (m scramMechanism) Name() string { return m.name }

func (m scramMechanism) Authenticate(context.Context, string) (sasl.Session, []byte, error) {
	c := m.gen()
	if err := c.Begin(m.user, m.pass, ""); err != nil {
		return nil, nil, err
	}
	first, err := c.Step("")
	if err != nil {
		return nil, nil, err
	}
	return scramSession{c}, []byte(first), nil
}

type scramSession struct{ c sarama.SCRAMClient }

func (s scramSession) Challenge(in []byte) (bool, []byte, error) {
	out, err := s.c.Step(string(in))
	if err != nil {
		return false, nil, err
	}
	if s.c.Done() {
		return true, nil, nil
	}
	return false, []byte(out), nil
}

// fetchTimeout bounds one Fetch: the wait the request asks of the broker
// plus the client's read timeout.
func (c *Client) fetchTimeout(req *FetchRequest) time.Duration {
	return time.Duration(req.r.MaxWaitMillis)*time.Millisecond + c.sc.Config().Net.ReadTimeout
}

// send sends req to broker id over the fetch connections.
func (c *Client) send(id int32, req *FetchRequest) (*FetchResponse, error) {
	kc, err := c.fetchClient()
	if err != nil {
		return nil, err
	}
	req.shuffle()
	ctx, cancel := context.WithTimeout(context.Background(), c.fetchTimeout(req))
	defer cancel()
	kr, err := kc.Broker(int(id)).Request(ctx, versioned{req.r, req.maxVersion()})
	if err != nil {
		return nil, fetchError(err)
	}
	kt, ok := kr.(throttledByKbatch)
	if !ok {
		return nil, fmt.Errorf("fetch: unexpected answer %T", kr)
	}
	resp := kt.FetchResponse
	if resp.ErrorCode != 0 {
		return nil, sarama.KError(resp.ErrorCode)
	}
	return &FetchResponse{r: resp, names: req.names, maxBatch: c.cc.MaxRecordBytes, broker: id, maxThrottle: c.cc.maxThrottle}, nil
}

// versioned is a Fetch request that kgo sends at most as version max: kgo
// sends every request as the highest version that it, the client's
// version table and the broker know (kgo.MaxVersions, ApiVersions), and
// takes the request's own highest from MaxVersion. A request asked by
// topic names must not go as v13, which names topics by id only.
// Timeout gives kgo the long poll's wait, which it adds to the read
// deadline of the answer (as it does for a *kmsg.FetchRequest, which
// versioned is not to its type switch); Fetch goes on the broker's
// fetch connection by its key.
type versioned struct {
	*kmsg.FetchRequest
	max int16
}

func (v versioned) MaxVersion() int16 { return min(v.max, v.FetchRequest.MaxVersion()) }
func (v versioned) Timeout() int32    { return v.MaxWaitMillis }
func (v versioned) SetTimeout(ms int32) {
	v.MaxWaitMillis = ms
}

// ResponseKind is the answer as throttledByKbatch, so kgo leaves its
// throttle to kbatch.
func (v versioned) ResponseKind() kmsg.Response {
	return throttledByKbatch{v.FetchRequest.ResponseKind().(*kmsg.FetchResponse)}
}

// throttledByKbatch is a Fetch answer whose throttle kgo does not see.
// kgo waits out a throttle before the connection's next request, with no
// upper bound and without a word (a wait its idle timer cuts short by
// closing the connection). kbatch waits instead, at most MaxThrottle, in
// the loop that fetched, and says when a broker asks for more
// (FetchResponse.Throttle).
type throttledByKbatch struct{ *kmsg.FetchResponse }

func (throttledByKbatch) Throttle() (int32, bool) { return 0, true }

// fetchError says what a failed Fetch met, without kgo's own wording
// where a plainer one exists.
func fetchError(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer in time: %w", err)
	case strings.Contains(err.Error(), "unknown broker"):
		return fmt.Errorf("broker not in the cluster's metadata: %w", err)
	}
	return err
}
