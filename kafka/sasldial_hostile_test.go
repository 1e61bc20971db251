package kafka

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// saslBroker accepts one connection on a local port and runs answer on
// it: a broker whose answers to the dialer's SASL exchange a test writes
// byte by byte. It returns the address to dial.
func saslBroker(t *testing.T, answer func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { _ = l.Close(); <-done })
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		answer(c)
	}()
	return l.Addr().String()
}

// readRequest reads one size-prefixed request and returns its
// correlation id (or -1 when the connection ended).
func readRequest(c net.Conn) int32 {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return -1
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil || len(body) < 8 {
		return -1
	}
	return int32(binary.BigEndian.Uint32(body[4:8]))
}

// frame is resp's answer to request corr as the broker sends it.
func frame(corr int32, resp kmsg.Response) []byte {
	body := binary.BigEndian.AppendUint32(nil, uint32(corr))
	body = resp.AppendTo(body)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// handshakeOK answers a handshake for PLAIN.
func handshakeOK(c net.Conn) bool {
	corr := readRequest(c)
	if corr < 0 {
		return false
	}
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.Version = 1
	resp.SupportedMechanisms = []string{"PLAIN"}
	_, err := c.Write(frame(corr, resp))
	return err == nil
}

// dialPlain dials addr with the dialer sarama gets, PLAIN credentials and
// a read timeout of readTimeout.
func dialPlain(addr string, readTimeout time.Duration) error {
	conf := sarama.NewConfig()
	conf.Net.ReadTimeout = readTimeout
	d := &saslDialer{conf: conf, mechanism: func() (sasl.Mechanism, error) {
		return plain.Auth{User: "alice", Pass: "pw"}.AsMechanism(), nil
	}}
	conn, err := d.Dial("tcp", addr)
	if conn != nil {
		_ = conn.Close()
	}
	return err
}

// A broker that answers the SASL exchange wrongly, partly, late or not
// at all ends the dial with an error saying what it did; the dial never
// hangs past the read timeout, never panics, and never allocates the
// size a hostile answer claims.
func TestSASLDialerRefusesHostileAnswers(t *testing.T) {
	cases := []struct {
		name   string
		answer func(c net.Conn)
		want   func(err error) bool
	}{
		{"mechanism not enabled", func(c net.Conn) {
			corr := readRequest(c)
			resp := kmsg.NewPtrSASLHandshakeResponse()
			resp.Version = 1
			resp.ErrorCode = int16(sarama.ErrUnsupportedSASLMechanism)
			resp.SupportedMechanisms = []string{"SCRAM-SHA-512"}
			_, _ = c.Write(frame(corr, resp))
		}, func(err error) bool { return errors.Is(err, sarama.ErrUnsupportedSASLMechanism) }},
		{"answer to another request", func(c net.Conn) {
			corr := readRequest(c)
			resp := kmsg.NewPtrSASLHandshakeResponse()
			resp.Version = 1
			_, _ = c.Write(frame(corr+7, resp))
		}, func(err error) bool { return strings.Contains(err.Error(), "another request") }},
		{"size of 2 GiB", func(c net.Conn) {
			readRequest(c)
			_, _ = c.Write([]byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1})
		}, func(err error) bool { return strings.Contains(err.Error(), "2147483647 bytes") }},
		{"size too small for a correlation id", func(c net.Conn) {
			readRequest(c)
			_, _ = c.Write([]byte{0, 0, 0, 2, 0, 1})
		}, func(err error) bool { return strings.Contains(err.Error(), "answered 2 bytes") }},
		{"truncated answer", func(c net.Conn) {
			corr := readRequest(c)
			resp := kmsg.NewPtrSASLHandshakeResponse()
			resp.Version = 1
			resp.SupportedMechanisms = []string{"PLAIN"}
			b := frame(corr, resp)
			_, _ = c.Write(b[:len(b)-3])
		}, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"answer whose body ends early", func(c net.Conn) {
			corr := readRequest(c)
			// The size covers the correlation id and one byte of an
			// error code.
			b := binary.BigEndian.AppendUint32([]byte{0, 0, 0, 5}, uint32(corr))
			_, _ = c.Write(append(b, 0))
		}, func(err error) bool { return err != nil }},
		{"no answer", func(c net.Conn) {
			readRequest(c)
			_, _ = io.Copy(io.Discard, c)
		}, func(err error) bool {
			var ne net.Error
			return errors.As(err, &ne) && ne.Timeout()
		}},
		{"hang-up after the handshake", func(c net.Conn) {
			if handshakeOK(c) {
				readRequest(c)
			}
		}, func(err error) bool { return errors.Is(err, io.EOF) }},
		{"hang-up mid-answer to the authentication", func(c net.Conn) {
			if handshakeOK(c) {
				corr := readRequest(c)
				resp := kmsg.NewPtrSASLAuthenticateResponse()
				resp.Version = 1
				b := frame(corr, resp)
				_, _ = c.Write(b[:6])
			}
		}, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"authentication refused, with terminal escapes in the message", func(c net.Conn) {
			if handshakeOK(c) {
				corr := readRequest(c)
				resp := kmsg.NewPtrSASLAuthenticateResponse()
				resp.Version = 1
				resp.ErrorCode = int16(sarama.ErrSASLAuthenticationFailed)
				resp.ErrorMessage = kmsg.StringPtr("bad \x1b]0;owned\x07password\nsecond line")
				_, _ = c.Write(frame(corr, resp))
			}
		}, func(err error) bool {
			return errors.Is(err, sarama.ErrSASLAuthenticationFailed) && !strings.Contains(err.Error(), "\n") &&
				!strings.ContainsRune(describeSecurityError(ClientConfig{SASL: &SASL{Mechanism: "PLAIN", User: "alice"}}, err), 0x1b)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := dialPlain(saslBroker(t, tc.answer), 300*time.Millisecond)
			if err == nil || !tc.want(err) {
				t.Errorf("dial: %v; want the broker's answer refused", err)
			}
		})
	}
}

// A broker that accepts the handshake and the authentication gives a
// connection ready for sarama, with no deadline left on it.
func TestSASLDialerHandsOverAnAuthenticatedConnection(t *testing.T) {
	served := make(chan int32, 1)
	addr := saslBroker(t, func(c net.Conn) {
		if !handshakeOK(c) {
			return
		}
		corr := readRequest(c)
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.Version = 1
		_, _ = c.Write(frame(corr, resp))
		served <- readRequest(c)
	})
	conf := sarama.NewConfig()
	conf.Net.ReadTimeout = 100 * time.Millisecond
	d := &saslDialer{conf: conf, mechanism: func() (sasl.Mechanism, error) {
		return plain.Auth{User: "alice", Pass: "pw"}.AsMechanism(), nil
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Past the read timeout, the connection still reads and writes.
	time.Sleep(3 * conf.Net.ReadTimeout)
	req := kmsg.NewPtrApiVersionsRequest()
	if _, err := conn.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 42)); err != nil {
		t.Fatalf("write after the exchange: %v", err)
	}
	if got := <-served; got != 42 {
		t.Errorf("the broker read request %d after the exchange, want 42", got)
	}
}
