package spark

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/kbatch-dev/kbatch/offsets"
)

// Offsets maps each partition to an offset. Read from a checkpoint, the
// offsets are next offsets (the next record to read); in option JSON they may
// also be OffsetLatest or OffsetEarliest.
type Offsets map[offsets.Partition]int64

// MaxOffset is the largest offset kbatch accepts from a file, 2^62: far
// beyond any Kafka log (a million records a second for 146 000 years), and
// small enough that no difference of two offsets overflows an int64.
const MaxOffset = offsets.MaxOffset

// ErrImpossibleOffset is wrapped (with ErrMalformed) when an offset is
// below OffsetEarliest or above MaxOffset, or, in Spark's own logs, is
// not a resolved offset (negative).
var ErrImpossibleOffset = errors.New("impossible offset")

// Partitions returns the partitions in o sorted by topic, then partition
// number.
func (o Offsets) Partitions() []offsets.Partition {
	ps := make([]offsets.Partition, 0, len(o))
	for p := range o {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, offsets.ComparePartitions)
	return ps
}

// ParseOffsetJSON parses Spark's Kafka offset JSON, the form Spark writes for
// a Kafka source in offsets/<N> and sources/<i>/0 and accepts in its
// startingOffsets and endingOffsets options:
//
//	{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}
//
// Partition keys are JSON strings holding a non-negative int32; values are
// JSON integers parsed as int64 (never through float64, so offsets above 2^53
// keep every digit). Key order does not matter (Spark writes from a hash map)
// and whitespace, including a trailing newline, is accepted. Anything else,
// including a partition that appears twice ("1" and "01"), a fractional or
// quoted offset, or data after the object, is an error wrapping ErrMalformed.
// The result is never nil when err is nil: "{}" gives an empty map.
func ParseOffsetJSON(b []byte) (Offsets, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	out := Offsets{}
	topics := map[string]bool{}
	for dec.More() {
		topic, err := objectKey(dec)
		if err != nil {
			return nil, err
		}
		if topic == "" {
			return nil, badOffsetJSON("empty topic name")
		}
		if topics[topic] {
			return nil, badOffsetJSON("topic %q appears twice", topic)
		}
		topics[topic] = true
		if err := parseTopicOffsets(dec, topic, out); err != nil {
			return nil, err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badOffsetJSON("unexpected data after the JSON object")
	}
	return out, nil
}

// parseTopicOffsets reads one topic's {"<partition>":<offset>,...} object
// into out.
func parseTopicOffsets(dec *json.Decoder, topic string, out Offsets) error {
	if err := expectDelim(dec, '{'); err != nil {
		return badOffsetJSON("topic %q: want an object of partition offsets", topic)
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		p, err := strconv.ParseInt(key, 10, 32)
		if err != nil || p < 0 {
			return badOffsetJSON("topic %q: partition key %q is not a partition number", topic, key)
		}
		tp := offsets.Partition{Topic: topic, Partition: int32(p)}
		tok, err := dec.Token()
		if err != nil {
			return badOffsetJSON("%v", err)
		}
		num, ok := tok.(json.Number)
		if !ok {
			return badOffsetJSON("offset of %s is %s, not a number", offsets.QuoteName(tp.String()), describeToken(tok))
		}
		off, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return badOffsetJSON("offset of %s is not a 64-bit integer", offsets.QuoteName(tp.String()))
		}
		if off < OffsetEarliest || off > MaxOffset {
			return fmt.Errorf("%w Kafka offset JSON: %w: offset of %s is %d; an offset is 0 to 2^62, or -1 (latest) or -2 (earliest) in option JSON",
				ErrMalformed, ErrImpossibleOffset, offsets.QuoteName(tp.String()), off)
		}
		if _, dup := out[tp]; dup {
			return badOffsetJSON("%s appears twice", offsets.QuoteName(tp.String()))
		}
		out[tp] = off
	}
	return expectDelim(dec, '}')
}

// objectKey reads the next object key.
func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", badOffsetJSON("%v", err)
	}
	key, ok := tok.(string)
	if !ok {
		return "", badOffsetJSON("want an object key, got %s", describeToken(tok))
	}
	return key, nil
}

// expectDelim reads the next token and checks that it is d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return badOffsetJSON("unexpected end of input")
	}
	if err != nil {
		return badOffsetJSON("%v", err)
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		if d == '{' {
			return badOffsetJSON(`want an object like {"topicA":{"0":23,"1":-1}}, got %s`, describeToken(tok))
		}
		return badOffsetJSON("want %q, got %s", string(d), describeToken(tok))
	}
	return nil
}

// describeToken names a JSON token for an error message.
func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return strconv.Quote(string(v))
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// badOffsetJSON returns "malformed Kafka offset JSON: <detail>", wrapping
// ErrMalformed.
func badOffsetJSON(format string, args ...any) error {
	return fmt.Errorf("%w Kafka offset JSON: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// checkResolved returns an error wrapping ErrImpossibleOffset for the first
// negative offset of o, in partition order: Spark writes only resolved
// offsets in its logs, so -1 and -2 there mean a damaged file.
func checkResolved(o Offsets) error {
	for _, p := range o.Partitions() {
		if off := o[p]; off < 0 {
			return fmt.Errorf("%w: offset of %s is %d; Spark writes only resolved offsets (0 or more) in its logs", ErrImpossibleOffset, offsets.QuoteName(p.String()), off)
		}
	}
	return nil
}
