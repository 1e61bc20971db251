package kafka

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// sarama's connections to a GSSAPI listener are authenticated before
// sarama gets them, by saslDialer (sarama's Net.Proxy.Dialer), with
// franz-go's GSSAPI mechanism and the process's one Kerberos login
// (kerberos.go): sarama's own GSSAPI makes and logs in a gokrb5 client
// for every connection, and takes no client from outside. The dialer
// speaks TLS itself when the listener wants it (sarama's TLS is off for
// these connections), then SaslHandshake v1 and SaslAuthenticate, as
// sarama does by default (Kafka 1.0 and later). sarama then sees an
// authenticated connection and opens it as on a listener without SASL.
// A broker that ends sessions (connections.max.reauth.ms) hangs up on
// such a connection at its first request after the session's end: that
// request fails (sarama's own GSSAPI would have authenticated again in
// place), and sarama connects again, which costs a handshake, no login.

// saslDialer opens a connection and authenticates it, with the dial
// timeout, read timeout (bounding the TLS handshake and the
// authentication) and client id of conf as they are when it dials.
type saslDialer struct {
	conf      *sarama.Config
	tls       *tls.Config // nil: plaintext
	mechanism func() (sasl.Mechanism, error)
}

// Dial connects to addr and authenticates the connection.
func (d *saslDialer) Dial(network, addr string) (net.Conn, error) {
	n := d.conf.Net
	conn, err := (&net.Dialer{Timeout: n.DialTimeout, KeepAlive: n.KeepAlive}).Dial(network, addr)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(n.ReadTimeout))
	if d.tls != nil {
		tc := tls.Client(conn, serverNamed(d.tls, addr))
		if err := tc.Handshake(); err != nil {
			_ = conn.Close()
			return nil, err
		}
		conn = tc
	}
	if err := d.authenticate(conn, addr); err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}

// serverNamed is cfg with the host of addr as the server name when it
// names none, as sarama does.
func serverNamed(cfg *tls.Config, addr string) *tls.Config {
	if cfg.ServerName != "" {
		return cfg
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	c := cfg.Clone()
	c.ServerName = host
	return c
}

// authenticate runs the mechanism's conversation on conn: the
// handshake, then the mechanism's messages until it is done and the
// broker answered the last one. A refusal is the broker's error code as
// a sarama.KError (ErrSASLAuthenticationFailed, ErrUnsupportedSASLMechanism…)
// with the broker's message.
func (d *saslDialer) authenticate(conn net.Conn, addr string) error {
	m, err := d.mechanism()
	if err != nil {
		return err
	}
	w := &saslWire{conn: conn, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID(d.conf.ClientID))}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	if err := w.do(hs, hsResp); err != nil {
		return err
	}
	if hsResp.ErrorCode != 0 {
		return fmt.Errorf("SASL handshake for %s: %w", m.Name(), sarama.KError(hsResp.ErrorCode))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.conf.Net.ReadTimeout)
	defer cancel()
	session, out, err := m.Authenticate(ctx, addr)
	if err != nil {
		return err
	}
	for done := false; !done || len(out) > 0; {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 1, out
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		if err := w.do(req, resp); err != nil {
			return err
		}
		if resp.ErrorCode != 0 {
			msg := ""
			if resp.ErrorMessage != nil {
				msg = ": " + firstLine(*resp.ErrorMessage)
			}
			return fmt.Errorf("%w%s", sarama.KError(resp.ErrorCode), msg)
		}
		out = nil
		if !done {
			if done, out, err = session.Challenge(resp.SASLAuthBytes); err != nil {
				return err
			}
		}
	}
	return nil
}

// saslWire sends requests on a connection not yet handed to sarama,
// one at a time.
type saslWire struct {
	conn net.Conn
	f    *kmsg.RequestFormatter
	corr int32
}

// do sends req and reads its answer into resp (both of a version with
// the non-flexible header, as SaslHandshake v1 and SaslAuthenticate v1).
func (r *saslWire) do(req kmsg.Request, resp kmsg.Response) error {
	r.corr++
	corr := r.corr
	if _, err := r.conn.Write(r.f.AppendRequest(nil, req, corr)); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(r.conn, size[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(size[:])
	// A SASL answer is a few KiB at most; refuse a size that is not one.
	if n < 4 || n > 1<<20 {
		return fmt.Errorf("SASL: the broker answered %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.conn, body); err != nil {
		return err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		return errors.New("SASL: the broker answered another request")
	}
	resp.SetVersion(req.GetVersion())
	return resp.ReadFrom(body[4:])
}
