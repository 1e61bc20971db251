package consumer

import (
	"encoding/json"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// The docs/design.md §4 headless output: one JSON object per line, each with a
// "type". These shapes are a public contract; add fields, never rename.

type startLine struct {
	Type       string          `json:"type"`
	Stream     string          `json:"stream"`
	Brokers    []string        `json:"brokers"`
	Topics     []string        `json:"topics"`
	Partitions []offsets.Start `json:"partitions"`
	// Redelivering is the id of the batch re-delivered first, if any.
	Redelivering uint64 `json:"redelivering,omitempty"`
}

type batchLine struct {
	Type        string               `json:"type"`
	Batch       uint64               `json:"batch"`
	Time        string               `json:"time"`
	Ranges      []offsets.BatchRange `json:"ranges"`
	Records     int64                `json:"records"`
	Bytes       int64                `json:"bytes"`
	State       offsets.BatchState   `json:"state"`
	Redelivered bool                 `json:"redelivered"`
	Jumped      bool                 `json:"jumped"`
	DurationMS  float64              `json:"duration_ms"`
	// Matched is how many of the records went to the --sink under --where.
	Matched *int64 `json:"matched,omitempty"`
}

// EventJSON is an event as JSON: the "event" line of the headless output
// (with "type") and the events of `kbatch offsets show --json`. Offsets
// that do not apply are left out.
type EventJSON struct {
	Time          string `json:"time"`
	Code          string `json:"code"`
	Topic         string `json:"topic,omitempty"`
	Partition     *int32 `json:"partition,omitempty"`
	Expected      *int64 `json:"expected,omitempty"`
	From          *int64 `json:"from,omitempty"`
	To            *int64 `json:"to,omitempty"`
	LogStart      *int64 `json:"log_start,omitempty"`
	HighWatermark *int64 `json:"high_watermark,omitempty"`
	// Lost is how many offsets a data-loss event says were deleted before
	// they were read.
	Lost    *int64 `json:"lost,omitempty"`
	Message string `json:"message"`
}

// NewEventJSON converts e; a partition is set only for an event that names
// a topic.
func NewEventJSON(e offsets.Event) EventJSON {
	j := EventJSON{Time: jsonTime(e.Time), Code: e.Code, Topic: e.Topic, Message: e.Message,
		Expected: setOffset(e.Expected), From: setOffset(e.From), To: setOffset(e.To),
		LogStart: setOffset(e.LogStart), HighWatermark: setOffset(e.HighWatermark)}
	if e.Lost > 0 {
		j.Lost = &e.Lost
	}
	if e.Topic != "" && e.Partition >= 0 {
		p := e.Partition
		j.Partition = &p
	}
	return j
}

type eventLine struct {
	Type string `json:"type"`
	EventJSON
}

type endLine struct {
	Type    string `json:"type"`
	Batches int    `json:"batches"`
	Records int64  `json:"records"`
	Reason  string `json:"reason"`
	Error   string `json:"error,omitempty"`
}

func jsonTime(t time.Time) string { return record.FormatTimestamp(t) }

func setOffset(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// AppendEventJSON appends e as one docs/design.md §4 JSON line; Progress events,
// which are for screens, append nothing.
func AppendEventJSON(buf []byte, e Event) ([]byte, error) {
	var v any
	switch e := e.(type) {
	case *Started:
		l := startLine{Type: "start", Stream: e.Stream, Brokers: e.Brokers, Topics: e.Topics, Partitions: e.Starts}
		if e.Redelivering != nil {
			l.Redelivering = e.Redelivering.ID
		}
		v = l
	case *BatchEvent:
		b := e.Batch
		l := batchLine{Type: "batch", Batch: b.ID, Time: jsonTime(b.Time), Ranges: NonNilRanges(b.Ranges), Records: b.Records, Bytes: b.Bytes,
			State: b.State, Redelivered: b.Redelivered, Jumped: b.Jumped(), DurationMS: float64(b.Duration.Microseconds()) / 1000}
		if b.Filtered {
			matched := b.Matched
			l.Matched = &matched
		}
		v = l
	case *Notice:
		v = eventLine{Type: "event", EventJSON: NewEventJSON(e.Event)}
	case *Ended:
		l := endLine{Type: "end", Batches: e.Batches, Records: e.Records, Reason: e.Reason}
		if e.Err != nil {
			l.Error = e.Err.Error()
		}
		v = l
	default:
		return buf, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return buf, err
	}
	buf = append(buf, record.SafeJSON(b)...)
	return append(buf, '\n'), nil
}

// NonNilRanges is rs, or an empty list for none: "ranges" is always an array
// (null would break jq '.ranges[]').
func NonNilRanges(rs []offsets.BatchRange) []offsets.BatchRange {
	if rs == nil {
		return []offsets.BatchRange{}
	}
	return rs
}
