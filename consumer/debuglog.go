package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// The debug log (Config.Log, watch --log) is for a bug report: it says
// what the stream asked the brokers and what they answered (each fetch
// with its partitions, offsets and sizes, answer sizes and errors), where
// each partition started, each batch cut and handed to processing, and
// every write to the store (plans, acks, seeks, events). It never holds
// record bytes (keys, values, headers) nor anything of the connection's
// secrets: only offsets, counts, sizes, names and error messages. The
// logger's handler is the caller's; it escapes strings for a terminal.

// logStarts logs where each partition starts and why.
func logStarts(l *slog.Logger, starts []offsets.Start, pending *offsets.Batch) {
	if l == nil {
		return
	}
	var sb strings.Builder
	for i, s := range starts {
		if i > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "%s@%d %s (log start %d, high watermark %d)", s.Partition, s.NextOffset, s.Source, s.Bounds.LogStart, s.Bounds.HighWatermark)
	}
	attrs := []any{"partitions", sb.String()}
	if pending != nil {
		attrs = append(attrs, "redeliver", pending.ID, "ranges", rangesText(pending.Ranges))
	}
	l.Info("start", attrs...)
}

// logCut logs a batch just cut, and the bytes still held for the next.
func logCut(l *slog.Logger, b *Batch, held int64) {
	if l == nil {
		return
	}
	l.Info("cut", "batch", b.ID, "redelivered", b.Redelivered, "records", b.Records, "bytes", b.Bytes, "ranges", rangesText(b.Ranges),
		"aborted_ranges", len(b.Aborted), "held_bytes", held)
}

// logFetch logs one fetch of broker: what was asked (partition @ offset
// / fetch size) and, per partition, the answer: error, high watermark,
// last stable offset, record batches, records and their bytes as they
// came (compressed).
func logFetch(l *slog.Logger, broker int32, in []*reader, maxBytes int64, resp *kafka.FetchResponse, err error, took time.Duration) {
	var ask strings.Builder
	for i, r := range in {
		if i > 0 {
			ask.WriteString(" ")
		}
		if r.verify {
			// From the record before: the check of its leader epoch.
			fmt.Fprintf(&ask, "%s@%d/%d(epoch-check)", r.p, r.pos-1, r.size)
			continue
		}
		fmt.Fprintf(&ask, "%s@%d/%d", r.p, r.pos, r.size)
	}
	attrs := []any{"broker", broker, "max_bytes", maxBytes, "took", took.Round(time.Microsecond), "asked", ask.String()}
	if err != nil {
		l.Info("fetch", append(attrs, "error", err.Error())...)
		return
	}
	var ans strings.Builder
	total := int64(0)
	for _, r := range in {
		blk := resp.Partition(r.p)
		if ans.Len() > 0 {
			ans.WriteString("; ")
		}
		if blk == nil {
			fmt.Fprintf(&ans, "%s: left out", r.p)
			continue
		}
		batches, records, bytes, partial, aborted := blk.Summary()
		total += bytes
		fmt.Fprintf(&ans, "%s: %s hwm %d lso %d, %d batches, %d records, %d B", r.p, kafkaErrText(blk.Err), blk.HighWatermark, blk.LastStable, batches, records, bytes)
		if partial {
			ans.WriteString(", partial")
		}
		if aborted > 0 {
			fmt.Fprintf(&ans, ", %d aborted transactions", aborted)
		}
	}
	l.Info("fetch", append(attrs, "answer_bytes", total, "answer", ans.String())...)
}

func kafkaErrText(err error) string {
	if err == nil {
		return "ok"
	}
	return strconv.Quote(err.Error())
}

func rangesText(rs []offsets.BatchRange) string {
	var sb strings.Builder
	for i, r := range rs {
		if i > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%s[%d,%d)=%d", r.Partition, r.From, r.Until, r.Records)
		if r.Jump != "" {
			sb.WriteString("/" + r.Jump)
		}
	}
	return sb.String()
}

// loggedStore logs the stream's writes to its store.
type loggedStore struct {
	Store
	l *slog.Logger
}

func (s loggedStore) done(msg string, err error, attrs ...any) error {
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	s.l.Info(msg, attrs...)
	return err
}

func (s loggedStore) Plan(stream string, b offsets.Batch) error {
	return s.done("plan", s.Store.Plan(stream, b), "batch", b.ID, "redelivered", b.Redelivered, "records", b.Records, "bytes", b.Bytes, "ranges", rangesText(b.Ranges))
}

func (s loggedStore) Ack(stream string, id uint64, at time.Time) error {
	return s.done("ack", s.Store.Ack(stream, id, at), "batch", id)
}

func (s loggedStore) AckAndPlan(stream string, id uint64, at time.Time, next offsets.Batch) error {
	return s.done("ack and plan", s.Store.AckAndPlan(stream, id, at, next), "ack", id, "plan", next.ID, "redelivered", next.Redelivered,
		"records", next.Records, "bytes", next.Bytes, "ranges", rangesText(next.Ranges))
}

func (s loggedStore) AddEvent(stream string, e offsets.Event) error {
	return s.done("event", s.Store.AddEvent(stream, e), "code", e.Code, "message", e.Message)
}

func (s loggedStore) SetNext(stream string, next map[offsets.Partition]int64, e offsets.Event) error {
	return s.done("set next offsets", s.Store.SetNext(stream, next, e), "partitions", len(next), "code", e.Code, "message", e.Message)
}

func (s loggedStore) SeekAll(stream string, moves []offsets.SeekMove) error {
	err := s.Store.SeekAll(stream, moves)
	if len(moves) == 1 {
		m := moves[0]
		return s.done("seek", err, "partition", m.Partition.String(), "offset", m.Offset, "through", m.Through)
	}
	return s.done("seek", err, "partitions", len(moves))
}

// loggedProcessor logs each batch handed to processing (the sink, or
// nothing) and how it went.
type loggedProcessor struct {
	p Processor
	l *slog.Logger
}

func (p loggedProcessor) Process(ctx context.Context, b *Batch, records []*record.Record) error {
	start := time.Now()
	var err error
	if p.p != nil {
		err = p.p.Process(ctx, b, records)
	}
	attrs := []any{"batch", b.ID, "redelivered", b.Redelivered, "records", len(records), "bytes", b.Bytes, "ranges", rangesText(b.Ranges),
		"aborted_ranges", len(b.Aborted), "took", time.Since(start).Round(time.Microsecond)}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	p.l.Info("process", attrs...)
	return err
}

// logReplica logs a partition moving to or from a preferred read replica
// (KIP-392); leader is -1 when not known at that point.
func logReplica(l *slog.Logger, p offsets.Partition, leader, replica int32, what string) {
	if l == nil {
		return
	}
	l.Info("fetch "+what, "partition", p.String(), "leader", leader, "replica", replica)
}

// logDiverged says that broker's answer showed the log no longer holds
// the record before pos as read in leader epoch read: its batch has epoch
// now (-1: none there), the log ends at hwm.
func logDiverged(l *slog.Logger, p offsets.Partition, broker int32, pos int64, read, now int32, hwm int64) {
	if l == nil {
		return
	}
	l.Warn("fetch found the log diverged (unclean leader election)", "partition", p.String(), "broker", broker,
		"offset", pos-1, "epoch_read", read, "epoch_now", now, "high_watermark", hwm)
}
