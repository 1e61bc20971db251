// Package faultproxy puts faults on the wire between a test's client and
// an in-process broker: it wraps the broker's listener (kfake.ListenFn),
// so every connection the broker accepts passes through it. Faults:
// latency before each answer, a bandwidth cap on answers, connection
// resets (RST), and a black hole (the connection stays open, but no
// bytes pass either way and nothing is reset).
package faultproxy

import (
	"net"
	"sync"
	"time"
)

// Faults are what the wire does now; the zero value does nothing.
type Faults struct {
	// Latency delays each answer (each write of the broker).
	Latency time.Duration
	// BytesPerSecond caps the answers' bandwidth; 0 means no cap.
	BytesPerSecond int
	// BlackHole stops every byte, both ways, until it is cleared: reads
	// and writes wait, and no connection is closed.
	BlackHole bool
}

// Listener is a broker's listener with faults.
type Listener struct {
	net.Listener
	mu      sync.Mutex
	f       Faults
	changed chan struct{} // closed and replaced on each Set
	conns   map[*conn]struct{}
}

// Wrap puts faults on the connections l accepts.
func Wrap(l net.Listener) *Listener {
	return &Listener{Listener: l, changed: make(chan struct{}), conns: map[*conn]struct{}{}}
}

// Set makes f the wire's faults from now on (for open connections too).
func (l *Listener) Set(f Faults) {
	l.mu.Lock()
	l.f = f
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// Reset resets every open connection (RST: linger 0, then close) and
// returns how many it reset.
func (l *Listener) Reset() int {
	l.mu.Lock()
	cs := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
	return len(cs)
}

// Group is every listener its Listen made: a cluster's brokers, so that
// one call puts faults on all their wires. Its zero value is ready.
type Group struct {
	mu sync.Mutex
	ls []*Listener
}

// Listen listens on addr and wraps the listener into the group; it fits
// kfake.ListenFn.
func (g *Group) Listen(network, addr string) (net.Listener, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	w := Wrap(l)
	g.mu.Lock()
	g.ls = append(g.ls, w)
	g.mu.Unlock()
	return w, nil
}

// Set makes f the faults of every listener of the group.
func (g *Group) Set(f Faults) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, l := range g.ls {
		l.Set(f)
	}
}

// Reset resets every open connection of the group's listeners and
// returns how many it reset.
func (g *Group) Reset() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, l := range g.ls {
		n += l.Reset()
	}
	return n
}

// Accept accepts a connection with the listener's faults on it.
func (l *Listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, l: l, closed: make(chan struct{})}
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return c, nil
}

func (l *Listener) faults() (Faults, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f, l.changed
}

type conn struct {
	net.Conn
	l         *Listener
	closeOnce sync.Once
	closed    chan struct{}
}

// pass waits while the wire is a black hole; false once the connection
// is closed.
func (c *conn) pass() (Faults, bool) {
	for {
		f, changed := c.l.faults()
		if !f.BlackHole {
			return f, true
		}
		select {
		case <-changed:
		case <-c.closed:
			return f, false
		}
	}
}

// wait waits d, or until the connection is closed (false).
func (c *conn) wait(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.closed:
		return false
	}
}

func (c *conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		if _, ok := c.pass(); !ok {
			return 0, net.ErrClosed
		}
	}
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	f, ok := c.pass()
	if !ok || !c.wait(f.Latency) {
		return 0, net.ErrClosed
	}
	written := 0
	for written < len(b) {
		chunk := b[written:]
		if f.BytesPerSecond > 0 {
			// At most a tenth of a second's worth at a time.
			step := max(f.BytesPerSecond/10, 1)
			chunk = chunk[:min(len(chunk), step)]
			if !c.wait(time.Duration(len(chunk)) * time.Second / time.Duration(f.BytesPerSecond)) {
				return written, net.ErrClosed
			}
		}
		n, err := c.Conn.Write(chunk)
		written += n
		if err != nil {
			return written, err
		}
		if f, ok = c.pass(); !ok {
			return written, net.ErrClosed
		}
	}
	return written, nil
}

func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
