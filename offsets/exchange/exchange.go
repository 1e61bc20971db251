// Package exchange is kbatch's own offsets document, the file that moves a
// stream's next offsets between stores, machines and other consumers:
//
//	{"stream":"events","topics":["events"],"next":{"events":{"0":80,"1":120}}}
//
// `kbatch offsets export --format json` writes it and `kbatch offsets
// import --from-json` reads it back. "next" has the shape of Spark's Kafka
// offset JSON, so Parse also takes Spark's JSON alone ({"events":{"0":80}})
// and the package sits beside offsets/spark, whose codec it uses (offsets
// itself cannot import offsets/spark, which imports it).
package exchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/record"
)

// Document is a stream's next offsets with the stream's name and topics.
type Document struct {
	// Stream is the stream's name; empty when the offsets came as Spark
	// JSON alone.
	Stream string
	// Topics are the topics the stream reads (also those without offsets).
	Topics []string
	// Next is the next offset per partition: each is 0 or more.
	Next map[offsets.Partition]int64
}

// Write writes d as one line of JSON: topics as given, "next" with topics
// and partitions in order, every rune a terminal would act on escaped
// (record.SafeJSON), so the line is safe to print as well as to parse.
func Write(w io.Writer, d Document) error {
	name, err := json.Marshal(d.Stream)
	if err != nil {
		return err
	}
	topics := d.Topics
	if topics == nil {
		topics = []string{}
	}
	ts, err := json.Marshal(topics)
	if err != nil {
		return err
	}
	line := fmt.Sprintf(`{"stream":%s,"topics":%s,"next":%s}`, name, ts, spark.StartingOffsetsJSON(d.Next, nil))
	_, err = fmt.Fprintln(w, string(record.SafeJSON([]byte(line))))
	return err
}

// Parse reads a Document, or Spark's Kafka offset JSON alone
// ({"events":{"0":80}}; Stream and Topics are then empty). An object is a
// Document when its "stream" is a JSON string. In Spark JSON, -2 (earliest)
// and -1 (latest) are not positions: those partitions are left out of Next
// and returned in skipped, in partition order. Any other negative offset,
// and any in a Document, is an error; so are malformed JSON and offsets
// above spark.MaxOffset (spark.ParseOffsetJSON).
func Parse(b []byte) (d Document, skipped []offsets.Partition, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return d, nil, fmt.Errorf(`not a JSON object like {"stream":"events","next":{"events":{"0":80}}} or {"events":{"0":80}}: %v`, err)
	}
	raw, isDoc := top["stream"]
	isDoc = isDoc && len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '"'
	if isDoc {
		if err := json.Unmarshal(raw, &d.Stream); err != nil {
			return d, nil, fmt.Errorf(`"stream": %v`, err)
		}
		if t, ok := top["topics"]; ok {
			if err := json.Unmarshal(t, &d.Topics); err != nil {
				return d, nil, fmt.Errorf(`"topics" is not a list of names: %v`, err)
			}
		}
		next, ok := top["next"]
		if !ok {
			return d, nil, errors.New(`a kbatch offsets document needs "next" (as kbatch offsets export --format json writes)`)
		}
		b = next
	}
	o, err := spark.ParseOffsetJSON(b)
	if err != nil {
		return d, nil, err
	}
	d.Next = map[offsets.Partition]int64{}
	for _, p := range o.Partitions() {
		switch off := o[p]; {
		case off >= 0:
			d.Next[p] = off
		case !isDoc && (off == spark.OffsetEarliest || off == spark.OffsetLatest):
			skipped = append(skipped, p)
		default:
			return d, nil, fmt.Errorf("offset %d of %s is not a next offset", off, offsets.QuoteName(p.String()))
		}
		if d.Topics != nil && !slices.Contains(d.Topics, p.Topic) {
			d.Topics = append(d.Topics, p.Topic) // the stream reads what it has positions of
		}
	}
	return d, skipped, nil
}
