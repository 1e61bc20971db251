package offsets

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/record"
)

// Partition names one topic-partition.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// String renders a partition as "topic[3]", the form used on screen and in
// messages.
func (p Partition) String() string { return fmt.Sprintf("%s[%d]", p.Topic, p.Partition) }

// Less orders partitions by topic, then partition number.
func (p Partition) Less(q Partition) bool { return ComparePartitions(p, q) < 0 }

// ComparePartitions is kbatch's one order of partitions, by topic, then
// partition number, as slices.SortFunc takes it: -1, 0 or +1.
func ComparePartitions(p, q Partition) int {
	if c := strings.Compare(p.Topic, q.Topic); c != 0 {
		return c
	}
	return cmp.Compare(p.Partition, q.Partition)
}

// Next is the offset after a record at offset: Kafka's "+1", written
// once. A stored position is the next offset to read, and a range that
// ends with the record at offset ends at Until = Next(offset) (docs/design.md §9).
func Next(offset int64) int64 { return offset + 1 }

// Range is the half-open offset range [From, Until) of one partition.
// Until-From is the span; the records inside can be fewer (compaction,
// transaction markers), so readers stop when their position reaches Until.
type Range struct {
	Partition
	From  int64 `json:"from"`
	Until int64 `json:"until"`
}

// Span is Until-From, the number of offsets the range covers.
func (r Range) Span() int64 { return r.Until - r.From }

// String renders "events[0] 50 → 1000".
func (r Range) String() string { return fmt.Sprintf("%s %d → %d", r.Partition, r.From, r.Until) }

// Source says why a partition starts at its next offset.
type Source string

// The start sources of docs/design.md §1.
const (
	SourceExplicit     Source = "explicit"
	SourceStored       Source = "stored"
	SourceImport       Source = "import"
	SourceResetEarly   Source = "reset-earliest"
	SourceResetLatest  Source = "reset-latest"
	SourceTimestamp    Source = "timestamp"
	SourceNewPartition Source = "new-partition"
)

// Reset is the policy for partitions with neither an explicit nor a stored
// offset, and for offsets found out of range.
type Reset string

// Reset policies.
const (
	ResetEarliest Reset = "earliest"
	ResetLatest   Reset = "latest"
)

// ParseReset accepts "earliest" or "latest".
func ParseReset(s string) (Reset, error) {
	switch Reset(s) {
	case ResetEarliest, ResetLatest:
		return Reset(s), nil
	}
	return "", fmt.Errorf("invalid --reset %q: want earliest or latest", s)
}

// Bounds are a partition's log start offset and high watermark as fetched
// from the broker at one moment.
type Bounds struct {
	LogStart      int64 `json:"log_start"`
	HighWatermark int64 `json:"high_watermark"`
}

// Jump is the code of the event a stream starting at next offset off
// reports: CodeDataLoss below the log start (the offsets before it were
// deleted; it reads on at the log start), CodeOutOfRange above the high
// watermark (it starts per its Reset), "" within [LogStart, HighWatermark].
func (b Bounds) Jump(off int64) string {
	switch {
	case off < b.LogStart:
		return CodeDataLoss
	case off > b.HighWatermark:
		return CodeOutOfRange
	}
	return ""
}

// Start is where one partition begins and why.
type Start struct {
	Partition
	NextOffset int64  `json:"offset"`
	Source     Source `json:"source"`
	Bounds
	// Jump is set when the position Source gave was out of the
	// partition's bounds and the start moved (data-loss,
	// offset-out-of-range): the first range is marked with it.
	Jump string `json:"jump,omitempty"`
}

// Event codes recorded in the event log and emitted by the stream.
const (
	CodeDataLoss     = "data-loss"
	CodeOutOfRange   = "offset-out-of-range"
	CodeSeek         = "seek"
	CodeReset        = "reset"
	CodeNewPartition = "new-partition"
	CodeRedelivered  = "redelivered"
	CodeDropped      = "dropped"
	CodeBrokerError  = "broker-error"
	CodeReconnected  = "reconnected"
	// CodeCorrupt: a record batch of the partition cannot be delivered
	// (bad CRC, lengths or offsets, or too large once decompressed);
	// the partition stops before it until a seek moves it past.
	CodeCorrupt = "corrupt-batch"
	CodeSet     = "set"
	CodeImport  = "import"
	CodePause   = "pause"
	CodeResume  = "resume"
	// CodeStreamChanged: a stream was taken over (an explicit --name) on
	// another cluster or with other topics than it was stored with.
	CodeStreamChanged = "stream-changed"
	// CodeRecreated: a topic of the stream was deleted and created again
	// (its topic id changed) since the stream last ran.
	CodeRecreated = "topic-recreated"
)

// Event is something that moved or threatened a stream's position: a seek,
// a reset, data loss, a broker error. Offsets that do not apply are -1 and
// are left out of JSON.
type Event struct {
	Time      time.Time `json:"time"`
	Code      string    `json:"code"`
	Topic     string    `json:"topic,omitempty"`
	Partition int32     `json:"partition"`
	// Expected is the offset kbatch wanted to read next.
	Expected int64 `json:"expected"`
	// From and To describe a move of the next offset (seek, reset).
	From          int64 `json:"from"`
	To            int64 `json:"to"`
	LogStart      int64 `json:"log_start"`
	HighWatermark int64 `json:"high_watermark"`
	// Lost is how many offsets a data-loss event says were deleted before
	// they were read (LogStart - Expected); 0 for every other event.
	Lost    int64  `json:"lost,omitempty"`
	Message string `json:"message"`
}

// NewEvent returns an event with every offset unset (-1). A message longer
// than MaxEventMessage has its middle cut (record.CutMiddle): it often
// quotes a broker's error, which may name a host or topic of 32 KiB.
func NewEvent(t time.Time, code string, p Partition, msg string) Event {
	return Event{Time: t, Code: code, Topic: p.Topic, Partition: p.Partition,
		Expected: -1, From: -1, To: -1, LogStart: -1, HighWatermark: -1,
		Message: record.CutMiddle(msg, MaxEventMessage)}
}

// MaxEventMessage bounds an event's message in bytes, as made by NewEvent
// and as stored: the event log keeps thousands of events, each shown on one
// line.
const MaxEventMessage = 2048

// BatchState is the write-ahead state of a batch.
type BatchState string

// Batch states.
const (
	StatePlanned BatchState = "planned"
	StateAcked   BatchState = "acked"
)

// BatchRange is one partition's range within a batch with the number of
// records actually read in it.
type BatchRange struct {
	Range
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
	// Jump is set when this range's From is not the previous batch's Until
	// for the partition (seek, reset, data loss); it names the event code.
	Jump string `json:"jump,omitempty"`
}

// Batch is one cut of a stream as stored in the batch log.
type Batch struct {
	ID          uint64       `json:"batch"`
	Time        time.Time    `json:"time"`
	Ranges      []BatchRange `json:"ranges"`
	Records     int64        `json:"records"`
	Bytes       int64        `json:"bytes"`
	State       BatchState   `json:"state"`
	Redelivered bool         `json:"redelivered"`
	AckedAt     time.Time    `json:"acked_at,omitzero"`
}

// NextOffsets returns the next offset each range of the batch leads to.
func (b Batch) NextOffsets() map[Partition]int64 {
	m := make(map[Partition]int64, len(b.Ranges))
	for _, r := range b.Ranges {
		m[r.Partition] = r.Until
	}
	return m
}
