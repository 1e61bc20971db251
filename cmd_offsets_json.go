package main

import (
	"encoding/json"
	"io"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// The JSON of show: field names follow the headless output (DESIGN §4).
type offsetsStreamJSON struct {
	Name      string             `json:"name"`
	Brokers   []string           `json:"brokers"`
	Topics    []string           `json:"topics"`
	LastBatch uint64             `json:"last_batch"`
	Updated   string             `json:"updated,omitempty"`
	Next      json.RawMessage    `json:"next"`
	Pending   *uint64            `json:"pending"`
	Batches   []offsetsBatchJSON `json:"batches"`
	Events    []offsetsEventJSON `json:"events"`
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

type offsetsEventJSON struct {
	Time          string `json:"time"`
	Code          string `json:"code"`
	Topic         string `json:"topic,omitempty"`
	Partition     *int32 `json:"partition,omitempty"`
	Expected      *int64 `json:"expected,omitempty"`
	From          *int64 `json:"from,omitempty"`
	To            *int64 `json:"to,omitempty"`
	LogStart      *int64 `json:"log_start,omitempty"`
	HighWatermark *int64 `json:"high_watermark,omitempty"`
	Message       string `json:"message"`
}

func (v offsetsStreamView) json() offsetsStreamJSON {
	info := v.info
	s := offsetsStreamJSON{Name: info.Name, Brokers: info.Brokers, Topics: info.Topics, LastBatch: info.LastBatch,
		Next:    json.RawMessage(spark.StartingOffsetsJSON(info.Next, nil)),
		Batches: make([]offsetsBatchJSON, len(v.batches)), Events: make([]offsetsEventJSON, len(v.events))}
	if s.Brokers == nil {
		s.Brokers = []string{}
	}
	if s.Topics == nil {
		s.Topics = []string{}
	}
	if !info.Updated.IsZero() {
		s.Updated = consumer.FormatTimestamp(info.Updated)
	}
	if v.pending != nil {
		id := v.pending.ID
		s.Pending = &id
	}
	for i, b := range v.batches {
		s.Batches[i] = offsetsBatchToJSON(b)
	}
	for i, e := range v.events {
		s.Events[i] = offsetsEventToJSON(e)
	}
	return s
}

func offsetsBatchToJSON(b offsets.Batch) offsetsBatchJSON {
	j := offsetsBatchJSON{Batch: b.ID, Time: consumer.FormatTimestamp(b.Time), State: b.State, Redelivered: b.Redelivered,
		Records: b.Records, Bytes: b.Bytes, Ranges: b.Ranges}
	if j.Ranges == nil {
		j.Ranges = []offsets.BatchRange{}
	}
	if !b.AckedAt.IsZero() {
		j.AckedAt = consumer.FormatTimestamp(b.AckedAt)
	}
	return j
}

func offsetsEventToJSON(e offsets.Event) offsetsEventJSON {
	opt := func(v int64) *int64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	j := offsetsEventJSON{Time: consumer.FormatTimestamp(e.Time), Code: e.Code, Topic: e.Topic, Message: e.Message,
		Expected: opt(e.Expected), From: opt(e.From), To: opt(e.To), LogStart: opt(e.LogStart), HighWatermark: opt(e.HighWatermark)}
	if e.Topic != "" && e.Partition >= 0 {
		p := e.Partition
		j.Partition = &p
	}
	return j
}

func offsetsWriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
