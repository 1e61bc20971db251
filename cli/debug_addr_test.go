package cli

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestDebugAddrServesGoroutines: --debug-addr serves the pprof index and
// the goroutine profile, whose first line counts the goroutines (what
// the soak of BENCHMARKS.md samples), and stops with its cleanup.
func TestDebugAddrServesGoroutines(t *testing.T) {
	addr := freeAddr(t)
	stop, err := startDebugListener(addr)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "goroutine profile: total ") {
		t.Fatalf("goroutine profile starts %q", body[:min(len(body), 60)])
	}
	stop()
	if _, err := http.Get("http://" + addr + "/debug/pprof/"); err == nil {
		t.Fatal("the listener still answers after stop")
	}
}

// TestDebugAddrLoopbackOnly: the profiles show stacks and heap contents,
// so an address others can reach, or no port, is a usage error (exit 2).
func TestDebugAddrLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "10.1.2.3:6060", "example.com:6060", "127.0.0.1"} {
		stop, err := startDebugListener(addr)
		if err == nil {
			stop()
			t.Errorf("%q: accepted", addr)
			continue
		}
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%q: %v is not a usage error", addr, err)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
