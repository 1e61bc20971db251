package faultproxy

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echo serves l: every connection echoes what it reads.
func echo(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
	}
}

func dial(t *testing.T, w *Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", w.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// echoWire is a wrapped echo listener, closed at the test's end, and a
// connection to it that passed a round trip.
func echoWire(t *testing.T) (*Listener, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := Wrap(l)
	t.Cleanup(func() { _ = w.Close() })
	go echo(w)
	c := dial(t, w)
	if err := roundTrip(c, 5*time.Second); err != nil {
		t.Fatalf("clear wire: %v", err)
	}
	return w, c
}

func roundTrip(c net.Conn, deadline time.Duration) error {
	_ = c.SetDeadline(time.Now().Add(deadline))
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	buf := make([]byte, 4)
	_, err := io.ReadFull(c, buf)
	return err
}

// A black hole passes no bytes and closes nothing: the client's read
// times out (no EOF, no reset); once cleared, the held bytes pass.
func TestBlackHoleHoldsBytesWithoutReset(t *testing.T) {
	w, c := echoWire(t)
	w.Set(Faults{BlackHole: true})
	err := roundTrip(c, 200*time.Millisecond)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("black hole: err %v, want a timeout", err)
	}
	w.Set(Faults{})
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("after the black hole: %q, %v", buf, err)
	}
}

// Reset closes every open connection with an RST: the client's next read
// fails with a reset, not a timeout.
func TestResetResetsOpenConnections(t *testing.T) {
	w, c := echoWire(t)
	if n := w.Reset(); n != 1 {
		t.Fatalf("reset %d connections, want 1", n)
	}
	err := roundTrip(c, 5*time.Second)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("after reset: err %v, want the connection reset", err)
	}
	t.Logf("after reset: %v", err)
}

// A Group's Set and Reset reach every listener its Listen made.
func TestGroupReachesEveryListener(t *testing.T) {
	var g Group
	var conns []net.Conn
	for range 2 {
		l, err := g.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go echo(l)
		conns = append(conns, dial(t, l.(*Listener)))
	}
	g.Set(Faults{BlackHole: true})
	for i, c := range conns {
		if err := roundTrip(c, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("listener %d in a black hole: err %v, want a timeout", i, err)
		}
	}
	g.Set(Faults{})
	if n := g.Reset(); n != 2 {
		t.Fatalf("reset %d connections, want 2", n)
	}
}
