package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startDebugListener serves Go's profiling endpoints (net/http/pprof:
// /debug/pprof/ with goroutine, heap, profile, trace…) on addr for a look
// inside a running kbatch: `go tool pprof http://ADDR/debug/pprof/heap`,
// or the goroutine count on the first line of
// http://ADDR/debug/pprof/goroutine?debug=1. The handlers are mounted on a
// mux of their own, never on http.DefaultServeMux. The returned func stops
// the listener. Only a loopback address is accepted: the profiles show
// stack traces and heap contents to anyone who can connect.
func startDebugListener(addr string) (func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageError{fmt.Errorf("--debug-addr %q: want host:port, e.g. 127.0.0.1:6060", addr)}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, usageError{fmt.Errorf("--debug-addr %q: only a loopback address (127.0.0.1, ::1, localhost) is allowed", addr)}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln) // ends with ErrServerClosed when stopped
	}()
	return func() {
		_ = srv.Close()
		<-served
	}, nil
}
