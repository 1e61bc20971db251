package demo

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// logger serializes calls to Options.Logf and adapts it to kfake and kgo.
// A nil logger, or one without a function, discards everything.
type logger struct {
	mu   sync.Mutex
	logf func(format string, args ...any)
	last atomic.Int64 // unix nanos of the last limited message
}

func newLogger(logf func(string, ...any)) *logger {
	if logf == nil {
		return nil
	}
	return &logger{logf: logf}
}

func (l *logger) printf(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logf(format, args...)
}

// limited is printf at most once a second, for errors that can repeat per
// record.
func (l *logger) limited(format string, args ...any) {
	if l == nil {
		return
	}
	now := time.Now().UnixNano()
	last := l.last.Load()
	if now-last < int64(time.Second) || !l.last.CompareAndSwap(last, now) {
		return
	}
	l.printf(format, args...)
}

// kfakeLogger passes on the broker's errors; its warnings are per-request
// noise.
type kfakeLogger struct{ l *logger }

func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	if level <= kfake.LogLevelError {
		k.l.printf("demo broker: "+format, args...)
	}
}

// kgoLogger passes on the producer's warnings and errors.
type kgoLogger struct{ l *logger }

func (kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var b strings.Builder
	for i := 0; i+1 < len(keyvals); i += 2 {
		fmt.Fprintf(&b, " %v=%v", keyvals[i], keyvals[i+1])
	}
	k.l.printf("demo producer: %s: %s%s", level, msg, b.String())
}
