package testkafka

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// ConnCount counts the connections a cluster's brokers accept, by
// broker and by the client id of the connection's first request, so a
// test can tell one client's connections from the set-up client's. Its
// Listen fits kfake.ListenFn; its zero value is ready.
type ConnCount struct {
	mu    sync.Mutex
	conns map[*countedConn]struct{}
}

// Counted starts an in-process cluster of brokers brokers whose
// connections are counted; a run against a real cluster (KBATCH_TEST_BROKERS)
// skips the test, whose counts only an in-process cluster can take.
func Counted(t testing.TB, brokers int) (*Cluster, *ConnCount) {
	t.Helper()
	if Real() {
		t.Skip("counts the connections of an in-process cluster")
	}
	count := &ConnCount{}
	return NewWith(t, kfake.NumBrokers(brokers), kfake.ListenFn(count.Listen)), count
}

// Listen listens on addr and counts the connections it accepts.
func (c *ConnCount) Listen(network, addr string) (net.Listener, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	return &countingListener{Listener: l, count: c}, nil
}

// Open is how many connections of the client with id clientID each
// broker (by listen address) holds open now.
func (c *ConnCount) Open(clientID string) map[string]int {
	return c.tally(clientID, true)
}

// Opened is how many connections the client with id clientID opened to
// each broker (by listen address) so far, closed ones included.
func (c *ConnCount) Opened(clientID string) map[string]int {
	return c.tally(clientID, false)
}

// OpenedBy is Opened for the connections whose first request (ApiVersions
// v3 or later) names the client software software ("sarama", "kgo").
func (c *ConnCount) OpenedBy(clientID, software string) map[string]int {
	return c.tally(clientID, false, software)
}

// OpenBy is Open for the connections of the client software software.
func (c *ConnCount) OpenBy(clientID, software string) map[string]int {
	return c.tally(clientID, true, software)
}

func (c *ConnCount) tally(clientID string, openOnly bool, software ...string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for cc := range c.conns {
		if len(software) > 0 && cc.software != software[0] {
			continue
		}
		if cc.clientID == clientID && (!openOnly || !cc.closed) {
			out[cc.broker]++
		}
	}
	return out
}

type countingListener struct {
	net.Listener
	count *ConnCount
}

func (l *countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &countedConn{Conn: conn, count: l.count, broker: l.Addr().String()}
	l.count.mu.Lock()
	if l.count.conns == nil {
		l.count.conns = map[*countedConn]struct{}{}
	}
	l.count.conns[cc] = struct{}{}
	l.count.mu.Unlock()
	return cc, nil
}

// countedConn is an accepted connection; it learns its client id from
// the header of the first request the broker reads (size, api key,
// version, correlation id, then the client id as a 16-bit length and its
// bytes), and counts as closed once the broker closes it or a read ends.
type countedConn struct {
	net.Conn
	count    *ConnCount
	broker   string
	head     []byte // the first bytes read, until the client id is known
	known    bool   // the client id was read
	clientID string // guarded by count.mu
	software string // the client software's name, if it said; guarded by count.mu
	closed   bool   // guarded by count.mu
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.known && n > 0 {
		c.learn(b[:n])
	}
	if err != nil {
		c.markClosed()
	}
	return n, err
}

// learn keeps the first bytes read until the client id, and the client
// software's name when the first request is ApiVersions v3 or later,
// can be read.
func (c *countedConn) learn(p []byte) {
	const idAt = 4 + 2 + 2 + 4 // size, key, version, correlation id
	c.head = append(c.head, p...)
	h := c.head
	if len(h) < idAt+2 {
		return
	}
	n := int(int16(binary.BigEndian.Uint16(h[idAt:])))
	end := idAt + 2 + max(n, 0)
	if len(h) < end {
		return
	}
	id := string(h[idAt+2 : end]) // "" for a null client id
	software := ""
	if key, version := int16(binary.BigEndian.Uint16(h[4:])), int16(binary.BigEndian.Uint16(h[6:])); key == 18 && version >= 3 {
		// The header's tagged fields (none), then the software's name
		// as a compact string (its length plus one, as a uvarint).
		if len(h) < end+2 {
			return
		}
		if h[end] == 0 {
			l, k := binary.Uvarint(h[end+1:])
			if k <= 0 || len(h) < end+1+k+int(l)-1 {
				return
			}
			if l > 0 {
				software = string(h[end+1+k : end+1+k+int(l)-1])
			}
		}
	}
	c.known, c.head = true, nil
	c.count.mu.Lock()
	c.clientID, c.software = id, software
	c.count.mu.Unlock()
}

func (c *countedConn) markClosed() {
	c.count.mu.Lock()
	c.closed = true
	c.count.mu.Unlock()
}

func (c *countedConn) Close() error {
	c.markClosed()
	return c.Conn.Close()
}
