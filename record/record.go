package record

import (
	"bytes"
	"time"
)

// Record is one Kafka record as kbatch hands it around: what the decoder
// read from a fetch answer, what sinks write and what the screen shows.
// It is kbatch's own type, so that no package above kafka/ depends on the
// client library's message type.
//
// Key and Value are nil when absent (null) and empty when present but
// empty. The byte slices of a decoded record point into the fetch answer
// it came in, which is never reused: a holder may keep them, and copies
// them (Clone) only to let the answer go.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is the record's time, with a log-append time already
	// applied; zero for message format v0, which has none.
	Timestamp time.Time
	// LogAppendTime is set when Timestamp is the broker's (the batch's
	// timestamp type is LogAppendTime, message.timestamp.type on the
	// topic), unset when it is the producer's (CreateTime).
	LogAppendTime bool
	Key           []byte
	Value         []byte
	// Headers are never nil entries. They are pointers so that a decoder
	// can hand on the headers it decoded without copying them.
	Headers []*Header
}

// Header is one record header; Value is nil when absent. Its layout is
// the plain pair of byte slices, so a client library's header of the
// same shape converts to it for free.
type Header struct {
	Key   []byte
	Value []byte
}

// Bytes is the size of the record's keys, values and headers: what the
// stream's byte counts and budgets measure.
func (r *Record) Bytes() int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

// Clone returns a copy of r that shares no bytes with it (nil stays nil,
// empty stays empty), so keeping it does not pin r's fetch answer.
func (r *Record) Clone() *Record {
	c := *r
	c.Key, c.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
	if r.Headers != nil {
		c.Headers = make([]*Header, len(r.Headers))
		for i, h := range r.Headers {
			c.Headers[i] = &Header{Key: bytes.Clone(h.Key), Value: bytes.Clone(h.Value)}
		}
	}
	return &c
}
