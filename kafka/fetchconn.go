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
// client, and only Fetch requests go there: kgo sends the request kbatch
// built (kmsg, NewFetchRequest) and hands back the answer as it came,
// with each partition's record batches as raw bytes, which DecodeRecords
// reads straight into kbatch's records. sarama, which opens every other
// connection, has no way to send a request of the caller's own nor to
// return an answer's raw bytes: it decodes every record into an object of
// its own first, which made fetching twice as costly as it needs to be on
// small records (issue 17). kgo's connections authenticate as sarama's
// do, from the same ClientConfig: the same TLS configuration, and SASL
// through franz-go's PLAIN, OAUTHBEARER and GSSAPI mechanisms and
// kbatch's own SCRAM conversation (the one sarama uses).

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

// newFetchClient makes the kgo client of cc, with conf's client id,
// timeouts and protocol version (Fetch at most FetchVersion of it).
func newFetchClient(cc ClientConfig, conf *sarama.Config) (*kgo.Client, error) {
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(kmsg.Fetch.Int16(), FetchVersion(conf.Version))
	opts := []kgo.Opt{
		kgo.SeedBrokers(cc.Brokers...),
		kgo.ClientID(conf.ClientID),
		kgo.MaxVersions(versions),
		kgo.DialTimeout(conf.Net.DialTimeout),
		kgo.RequestTimeoutOverhead(conf.Net.ReadTimeout),
		kgo.BrokerMaxReadBytes(2 * sarama.MaxResponseSize),
		kgo.RequestRetries(0),
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.WithLogger(kgoLogger{}),
	}
	if conf.Net.TLS.Enable {
		opts = append(opts, kgo.DialTLSConfig(conf.Net.TLS.Config.Clone()))
	}
	if conf.Net.SASL.Enable {
		m, err := saslMechanism(cc, conf)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return kgo.NewClient(opts...)
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
		kc, err := sarama.NewKerberosClient(&g)
		if err != nil {
			return nil, fmt.Errorf("kerberos: %w", err)
		}
		k, ok := kc.(*sarama.KerberosGoKrb5Client)
		if !ok {
			return nil, fmt.Errorf("kerberos: unexpected client %T", kc)
		}
		service := g.ServiceName
		if service == "" {
			service = "kafka"
		}
		return kerberos.Auth{Client: &k.Client, Service: service}.AsMechanismWithClose(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q is not supported for fetches", s.Mechanism)
}

// scramMechanism runs kbatch's SCRAM conversation (the sarama.SCRAMClient
// that cc.SASL.SCRAMClient makes, with its SASLprep choice) on a kgo
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
	kr, err := kc.Broker(int(id)).Request(ctx, req.r)
	if err != nil {
		return nil, fetchError(err)
	}
	resp, ok := kr.(*kmsg.FetchResponse)
	if !ok {
		return nil, fmt.Errorf("fetch: unexpected answer %T", kr)
	}
	if resp.ErrorCode != 0 {
		return nil, sarama.KError(resp.ErrorCode)
	}
	return &FetchResponse{r: resp}, nil
}

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
