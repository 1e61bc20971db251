package cli

import (
	"encoding/json"
	"io"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/record"
)

// The JSON of show: field names follow the headless output (docs/design.md §4).
type offsetsStreamJSON struct {
	Name      string               `json:"name"`
	ClusterID string               `json:"cluster_id,omitempty"`
	Brokers   []string             `json:"brokers"`
	Topics    []string             `json:"topics"`
	LastBatch uint64               `json:"last_batch"`
	Updated   string               `json:"updated,omitempty"`
	Next      json.RawMessage      `json:"next"`
	Pending   *uint64              `json:"pending"`
	Batches   []offsetsBatchJSON   `json:"batches"`
	Events    []consumer.EventJSON `json:"events"`
	// Damaged are the partitions whose stored next offset fails its
	// checksum (left out of Next); absent when none.
	Damaged []offsetsDamagedJSON `json:"damaged,omitempty"`
}

type offsetsDamagedJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Stored is what the value reads (-1: not an offset); LastAckedBatch
	// and AckedUntil where the log's last acked batch with the partition
	// ended it (0 and -1 when none has it).
	Stored         int64  `json:"stored"`
	LastAckedBatch uint64 `json:"last_acked_batch"`
	AckedUntil     int64  `json:"acked_until"`
}

type offsetsBatchJSON struct {
	Stream      string               `json:"stream,omitempty"`
	Batch       uint64               `json:"batch"`
	Time        string               `json:"time"`
	State       offsets.BatchState   `json:"state"`
	Redelivered bool                 `json:"redelivered"`
	Records     int64                `json:"records"`
	Bytes       int64                `json:"bytes"`
	Ranges      []offsets.BatchRange `json:"ranges"`
	AckedAt     string               `json:"acked_at,omitempty"`
}

func (v offsetsStreamView) json() offsetsStreamJSON {
	info := v.info
	s := offsetsStreamJSON{Name: info.Name, ClusterID: info.ClusterID, Brokers: info.Brokers, Topics: info.Topics, LastBatch: info.LastBatch,
		Next:    json.RawMessage(spark.StartingOffsetsJSON(info.Next, nil)),
		Batches: make([]offsetsBatchJSON, len(v.batches)), Events: make([]consumer.EventJSON, len(v.events))}
	if s.Brokers == nil {
		s.Brokers = []string{}
	}
	if s.Topics == nil {
		s.Topics = []string{}
	}
	if !info.Updated.IsZero() {
		s.Updated = record.FormatTimestamp(info.Updated)
	}
	if v.pending != nil {
		id := v.pending.ID
		s.Pending = &id
	}
	for i, b := range v.batches {
		s.Batches[i] = offsetsBatchToJSON(b)
	}
	for i, e := range v.events {
		s.Events[i] = consumer.NewEventJSON(e)
	}
	for _, d := range info.Damaged {
		j := offsetsDamagedJSON{Topic: d.Partition.Topic, Partition: d.Partition.Partition, Stored: d.Stored,
			LastAckedBatch: d.AckedBatch, AckedUntil: d.AckedUntil}
		if d.AckedBatch == 0 {
			j.AckedUntil = -1
		}
		s.Damaged = append(s.Damaged, j)
	}
	return s
}

func offsetsBatchToJSON(b offsets.Batch) offsetsBatchJSON {
	j := offsetsBatchJSON{Batch: b.ID, Time: record.FormatTimestamp(b.Time), State: b.State, Redelivered: b.Redelivered,
		Records: b.Records, Bytes: b.Bytes, Ranges: consumer.NonNilRanges(b.Ranges)}
	if j.Ranges == nil {
		j.Ranges = []offsets.BatchRange{}
	}
	if !b.AckedAt.IsZero() {
		j.AckedAt = record.FormatTimestamp(b.AckedAt)
	}
	return j
}

func offsetsWriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(record.SafeJSON(b), '\n'))
	return err
}
