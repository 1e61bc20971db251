package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// openDebugLog opens watch --log FILE (appended to, created 0600) and
// returns its logger and a function that closes it. While it is open,
// the Kafka client library's own log (connections, metadata requests,
// SASL outcomes; never credentials) goes to it too (kafka.LogLibrary), and
// the library's previous logger is put back when the log closes.
func openDebugLog(path string) (*slog.Logger, func(), error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open --log %s: %v", path, cause(err))
	}
	log := slog.New(escapeHandler{slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})})
	restore := kafka.LogLibrary(log)
	return log, func() {
		restore()
		_ = f.Close()
	}, nil
}

// cause is err without the *os.PathError wrapping that repeats the path.
func cause(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// logCluster logs how the cluster was reached and what its metadata
// says: the brokers and each partition's leader. Of the security settings
// it names only whether TLS is on and the SASL mechanism.
func logCluster(log *slog.Logger, cc kafka.ClientConfig, client *kafka.Client, topics []string) {
	if log == nil {
		return
	}
	sasl := "off"
	if cc.SASL != nil {
		sasl = cc.SASL.Mechanism
	}
	var brokers []string
	for _, b := range client.Brokers() {
		brokers = append(brokers, fmt.Sprintf("#%d %s", b.ID, b.Addr))
	}
	log.Info("connected", "bootstrap", strings.Join(cc.Brokers, ","), "tls", cc.TLS != nil, "sasl", sasl,
		"kafka_version", client.Version(), "read_committed", cc.ReadCommitted, "brokers", strings.Join(brokers, ", "))
	for _, t := range topics {
		parts, err := client.Partitions(t)
		if err != nil {
			log.Info("metadata", "topic", t, "error", err.Error())
			continue
		}
		var leaders []string
		for _, p := range parts {
			id := int32(-1)
			if b, err := client.Leader(offsets.Partition{Topic: t, Partition: p}); err == nil {
				id = b.ID
			}
			leaders = append(leaders, fmt.Sprintf("%d:#%d", p, id))
		}
		log.Info("metadata", "topic", t, "partitions", len(parts), "leaders", strings.Join(leaders, " "))
	}
}

// escapeHandler makes every string of a log record safe for a terminal
// (docs/design.md §2.7), by the one rule (record.String): messages and
// attribute values, which can hold broker error messages, host and topic
// names. Values of other kinds that print as text (errors, Stringers) are
// turned into escaped strings first. The text handler then writes logfmt:
// a value with a space or a quote is quoted, its backslashes doubled, so
// unquoting it gives the escaped text back.
type escapeHandler struct{ h slog.Handler }

func (e escapeHandler) Enabled(ctx context.Context, l slog.Level) bool { return e.h.Enabled(ctx, l) }

func (e escapeHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, record.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(escapeAttr(a))
		return true
	})
	return e.h.Handle(ctx, out)
}

func (e escapeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	esc := make([]slog.Attr, len(as))
	for i, a := range as {
		esc[i] = escapeAttr(a)
	}
	return escapeHandler{e.h.WithAttrs(esc)}
}

func (e escapeHandler) WithGroup(name string) slog.Handler {
	return escapeHandler{e.h.WithGroup(record.String(name))}
}

func escapeAttr(a slog.Attr) slog.Attr {
	a.Key = record.String(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(record.String(v.String()))
	case slog.KindAny:
		a.Value = slog.StringValue(record.String(fmt.Sprint(v.Any())))
	case slog.KindGroup:
		gs := v.Group()
		esc := make([]slog.Attr, len(gs))
		for i, g := range gs {
			esc[i] = escapeAttr(g)
		}
		a.Value = slog.GroupValue(esc...)
	default:
		a.Value = v
	}
	return a
}
