package sparkwatch

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/record"
)

// AppendEventJSON appends e as one docs/design.md §4 JSON line, exactly as the
// package-level consumer.AppendEventJSON writes it for watch, plus what says it is
// Spark's: "checkpoint", "query_id" and "source" on the start line, and
// "spark_batch" (the Spark batch id, which is also "batch") on batch lines.
func (w *Watch) AppendEventJSON(buf []byte, e consumer.Event) ([]byte, error) {
	start := len(buf)
	buf, err := consumer.AppendEventJSON(buf, e)
	if err != nil || len(buf) == start {
		return buf, err
	}
	switch e := e.(type) {
	case *consumer.Started:
		return appendJSONFields(buf, start, "checkpoint", w.Checkpoint(), "query_id", w.queryID, "source", w.source)
	case *consumer.BatchEvent:
		return appendJSONFields(buf, start, "spark_batch", e.Batch.ID)
	}
	return buf, nil
}

// appendJSONFields adds key/value pairs at the end of the JSON object line
// buf[start:] ("{...}\n"), so a Spark line is a watch line with more
// fields, never a different shape.
func appendJSONFields(buf []byte, start int, kv ...any) ([]byte, error) {
	line := buf[start:]
	if !bytes.HasSuffix(line, []byte("}\n")) {
		return buf, fmt.Errorf("consumer: not a JSON object line: %q", line)
	}
	buf = buf[:len(buf)-2]
	for i := 0; i+1 < len(kv); i += 2 {
		k, err := json.Marshal(kv[i])
		if err != nil {
			return buf, err
		}
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			return buf, err
		}
		buf = append(buf, ',')
		buf = append(buf, k...)
		buf = append(buf, ':')
		buf = append(buf, record.SafeJSON(v)...)
	}
	return append(buf, '}', '\n'), nil
}
