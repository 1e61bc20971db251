package kafka

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
)

// LogLibrary sends the client library's own log (connections, metadata
// requests, SASL outcomes; never credentials) to l at debug level, until
// the returned function puts the previous logger back. The library has
// one logger for the whole process (a package variable), so one run sets
// it, for the run: watch --log.
func LogLibrary(l *slog.Logger) (restore func()) {
	old := sarama.Logger
	sarama.Logger = libraryLog{l}
	oldKgo := kgoLog.Swap(l)
	return func() { sarama.Logger = old; kgoLog.Store(oldKgo) }
}

// kgoLog is where the fetch connections' client (kgo) logs, nil when
// nowhere; a kgo client reads it at every line.
var kgoLog atomic.Pointer[slog.Logger]

// kgoLogger is kgo's logger over kgoLog.
type kgoLogger struct{}

func (kgoLogger) Level() kgo.LogLevel {
	if kgoLog.Load() == nil {
		return kgo.LogLevelNone
	}
	return kgo.LogLevelInfo
}

func (kgoLogger) Log(_ kgo.LogLevel, msg string, keyvals ...any) {
	if l := kgoLog.Load(); l != nil {
		l.Debug(msg, append(keyvals, "from", "kgo")...)
	}
}

// libraryLog is sarama's StdLogger over a slog logger.
type libraryLog struct{ l *slog.Logger }

func (s libraryLog) Print(v ...any)                 { s.log(fmt.Sprint(v...)) }
func (s libraryLog) Printf(format string, v ...any) { s.log(fmt.Sprintf(format, v...)) }
func (s libraryLog) Println(v ...any)               { s.log(fmt.Sprintln(v...)) }
func (s libraryLog) log(msg string) {
	s.l.Debug(strings.TrimRight(msg, "\n"), "from", "sarama")
}
