package record

import (
	"strconv"
	"unicode/utf8"
)

// Appender appends one record, with its trailing newline, to buf.
// JSONEncoder (docs/design.md §4, the default) and KcatEncoder implement it.
// AppendAborted does the same for a record of an aborted transaction
// (read with --isolation uncommitted), adding "aborted":true.
type Appender interface {
	Append(buf []byte, m *Record) []byte
	AppendAborted(buf []byte, m *Record) []byte
}

// KcatEncoder writes records in the shape of kcat -J (kcat 1.7), so kcat
// and jq recipes carry over:
//
//	{"topic":"events","partition":0,"offset":51,"tstype":"create","ts":1795946400123,"broker":-1,"headers":["source","web"],"key":"user-7","payload":"{\"seq\":51}"}
//
// Fields and order are kcat's. tstype is the batch's timestamp type as
// kcat writes it: "create" (CreateTime, the producer's) or "logappend"
// (LogAppendTime, the broker's). Where kbatch knows less than librdkafka it
// says so in kcat's own words: broker is the partition's leader as Leader tells it when the record is
// written (kcat: the broker that served the fetch), -1 without Leader or
// when it does not know. tstype and ts are left out, as kcat does, for a
// record without a timestamp (message format v0); headers only when the
// record has some, as a flat [name, value, ...] array with null for an
// absent value.
//
// Unlike kcat, every line is valid UTF-8 JSON and safe on a terminal
// (the escaping of AppendJSON): a key or payload that is not valid
// UTF-8 is written as key_b64/payload_b64 (base64) instead, and headers
// with any such name or value as headers_b64, every name and value base64.
//
// A KcatEncoder is used by one goroutine at a time.
type KcatEncoder struct {
	// Leader returns the id of the partition's leader broker, or -1.
	Leader func(topic string, partition int32) int32

	last      partitionKey
	lastValid bool
	leader    int32
}

type partitionKey struct {
	topic     string
	partition int32
}

// Append implements Appender.
func (e *KcatEncoder) Append(buf []byte, m *Record) []byte {
	return e.append(buf, m, false)
}

// AppendAborted implements Appender: kcat has no such field, so
// "aborted":true is kbatch's one addition to its shape.
func (e *KcatEncoder) AppendAborted(buf []byte, m *Record) []byte {
	return e.append(buf, m, true)
}

func (e *KcatEncoder) append(buf []byte, m *Record, aborted bool) []byte {
	buf = appendPosition(buf, m)
	if !m.Timestamp.IsZero() {
		tstype := `,"tstype":"create","ts":`
		if m.LogAppendTime {
			tstype = `,"tstype":"logappend","ts":`
		}
		buf = append(buf, tstype...)
		buf = strconv.AppendInt(buf, m.Timestamp.UnixMilli(), 10)
	}
	buf = append(buf, `,"broker":`...)
	buf = strconv.AppendInt(buf, int64(e.broker(m.Topic, m.Partition)), 10)
	if len(m.Headers) > 0 {
		buf = appendKcatHeaders(buf, m.Headers)
	}
	buf = append(buf, ',')
	buf = appendBytesField(buf, "key", m.Key)
	buf = append(buf, ',')
	buf = appendBytesField(buf, "payload", m.Value)
	if aborted {
		buf = append(buf, `,"aborted":true`...)
	}
	return append(buf, "}\n"...)
}

// broker asks Leader once per run of records of one partition.
func (e *KcatEncoder) broker(topic string, partition int32) int32 {
	if e.Leader == nil {
		return -1
	}
	k := partitionKey{topic, partition}
	if !e.lastValid || k != e.last {
		e.last, e.lastValid, e.leader = k, true, e.Leader(topic, partition)
	}
	return e.leader
}

func appendKcatHeaders(buf []byte, hs []*Header) []byte {
	text := true
	for _, h := range hs {
		if !utf8.Valid(h.Key) || !utf8.Valid(h.Value) {
			text = false
			break
		}
	}
	if text {
		buf = append(buf, `,"headers":[`...)
	} else {
		buf = append(buf, `,"headers_b64":[`...)
	}
	for i, h := range hs {
		if i > 0 {
			buf = append(buf, ',')
		}
		for j, b := range [][]byte{h.Key, h.Value} {
			if j > 0 {
				buf = append(buf, ',')
			}
			switch {
			case b == nil && j == 1:
				buf = append(buf, "null"...)
			case text:
				buf = appendJSONBytes(buf, b)
			default:
				buf = append(buf, '"')
				buf = appendBase64(buf, b)
				buf = append(buf, '"')
			}
		}
	}
	return append(buf, ']')
}
