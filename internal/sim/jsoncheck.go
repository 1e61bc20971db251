package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// recordLine is a docs/design.md §4 record line as a reader decodes it.
type recordLine = fixtures.RecordLine

// decodeField turns a text or _b64 field back into bytes; nil when null
// or absent.
func decodeField(text, b64 *string) ([]byte, error) {
	switch {
	case text != nil && b64 != nil:
		return nil, fmt.Errorf("both the text and the _b64 field are set")
	case text != nil:
		return []byte(*text), nil
	case b64 != nil:
		return base64.StdEncoding.DecodeString(*b64)
	}
	return nil, nil
}

// checkRecordJSON encodes m as a JSON line and checks that it is valid
// UTF-8 JSON that decodes back to exactly m's bytes.
func checkRecordJSON(m *record.Record) error {
	line := record.AppendJSON(nil, m)
	if !utf8.Valid(line) {
		return fmt.Errorf("record %s[%d]@%d: JSON line is not valid UTF-8: %q", m.Topic, m.Partition, m.Offset, line)
	}
	if !json.Valid(line) {
		return fmt.Errorf("record %s[%d]@%d: JSON line is not valid JSON: %q", m.Topic, m.Partition, m.Offset, line)
	}
	var d recordLine
	if err := json.Unmarshal(line, &d); err != nil {
		return fmt.Errorf("record %s[%d]@%d: %v", m.Topic, m.Partition, m.Offset, err)
	}
	if d.Topic != m.Topic || d.Partition != m.Partition || d.Offset != m.Offset {
		return fmt.Errorf("record %s[%d]@%d: JSON names %s[%d]@%d", m.Topic, m.Partition, m.Offset, d.Topic, d.Partition, d.Offset)
	}
	lossy := func(what string, want []byte, text, b64 *string) error {
		got, err := decodeField(text, b64)
		if err != nil {
			return fmt.Errorf("record %s[%d]@%d: %s: %v in %q", m.Topic, m.Partition, m.Offset, what, err, line)
		}
		if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
			return fmt.Errorf("record %s[%d]@%d: %s is not lossless: %q decodes to %q", m.Topic, m.Partition, m.Offset, what, want, got)
		}
		return nil
	}
	if err := lossy("key", m.Key, d.Key, d.KeyB64); err != nil {
		return err
	}
	if err := lossy("value", m.Value, d.Value, d.ValueB64); err != nil {
		return err
	}
	if len(d.Headers) != len(m.Headers) {
		return fmt.Errorf("record %s[%d]@%d: %d headers in JSON, %d in the record", m.Topic, m.Partition, m.Offset, len(d.Headers), len(m.Headers))
	}
	for i, h := range m.Headers {
		hk := h.Key
		if hk == nil {
			hk = []byte{} // a header key is a string: never null
		}
		if err := lossy(fmt.Sprintf("header %d key", i), hk, d.Headers[i].Key, d.Headers[i].KeyB64); err != nil {
			return err
		}
		if err := lossy(fmt.Sprintf("header %d value", i), h.Value, d.Headers[i].Value, d.Headers[i].ValueB64); err != nil {
			return err
		}
	}
	return nil
}

// checkEventJSON checks that an event's JSON line is valid UTF-8 JSON.
func checkEventJSON(ev consumer.Event) error {
	line, err := consumer.AppendEventJSON(nil, ev)
	if err != nil {
		return fmt.Errorf("event %T: %v", ev, err)
	}
	if len(line) == 0 {
		return nil
	}
	if !utf8.Valid(line) || !json.Valid(line) {
		return fmt.Errorf("event %T: JSON line is not valid UTF-8 JSON: %q", ev, line)
	}
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		return fmt.Errorf("event %T: %v", ev, err)
	}
	if _, ok := v["type"].(string); !ok {
		return fmt.Errorf("event %T: no type in %q", ev, line)
	}
	if be, ok := ev.(*consumer.BatchEvent); ok {
		var d struct {
			Batch  uint64               `json:"batch"`
			Ranges []offsets.BatchRange `json:"ranges"`
			Jumped bool                 `json:"jumped"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return fmt.Errorf("batch line: %v", err)
		}
		if d.Batch != be.Batch.ID || len(d.Ranges) != len(be.Batch.Ranges) || d.Jumped != be.Batch.Jumped() {
			return fmt.Errorf("batch line %q does not say batch %d", line, be.Batch.ID)
		}
		for i, rg := range d.Ranges {
			if rg != be.Batch.Ranges[i] {
				return fmt.Errorf("batch line %q: range %d is %+v, the batch has %+v", line, i, rg, be.Batch.Ranges[i])
			}
		}
	}
	return nil
}

// checkAbortedJSON checks the line of a record marked as of an aborted
// transaction: valid UTF-8 JSON that says so.
func checkAbortedJSON(m *record.Record) error {
	var enc record.JSONEncoder
	line := enc.AppendAborted(nil, m)
	var d struct {
		Offset  int64 `json:"offset"`
		Aborted bool  `json:"aborted"`
	}
	if !utf8.Valid(line) || json.Unmarshal(line, &d) != nil || !d.Aborted || d.Offset != m.Offset {
		return fmt.Errorf("record %s[%d]@%d of an aborted transaction: line %q does not say so", m.Topic, m.Partition, m.Offset, line)
	}
	return nil
}
