package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// offsetsReadJSONFile reads --from-json: kbatch's export document, or Spark
// offset JSON.
func offsetsReadJSONFile(stdin io.Reader, stderr io.Writer, path string) (offsetsImported, error) {
	var r io.Reader = stdin
	from := "standard input"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return offsetsImported{}, fmt.Errorf("--from-json: %w", err)
		}
		defer f.Close()
		r, from = f, path
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return offsetsImported{}, fmt.Errorf("--from-json %s: %w", from, err)
	}
	imp, skipped, err := offsetsParseJSON(b)
	if err != nil {
		return offsetsImported{}, usagef("--from-json %s: %v", offsetsSafe(from), err)
	}
	imp.from = offsetsSafe(from)
	if len(skipped) > 0 {
		offsetsNote(stderr, "%s: %s are -2 (earliest) or -1 (latest), not positions; left out (watch starts them per --reset)", imp.from, offsetsList(skipped, 10))
	}
	return imp, nil
}

// offsetsParseJSON parses kbatch's document {"stream":..,"next":{..}} or
// Spark offset JSON {"topic":{"0":80}}. Partitions given as -2 or -1 in
// Spark JSON are returned in skipped; any other negative offset is an
// error.
func offsetsParseJSON(b []byte) (imp offsetsImported, skipped []string, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return imp, nil, fmt.Errorf(`not a JSON object like {"stream":"events","next":{"events":{"0":80}}} or {"events":{"0":80}}: %v`, err)
	}
	raw, isDoc := top["stream"]
	isDoc = isDoc && len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '"'
	if isDoc {
		if err := json.Unmarshal(raw, &imp.stream); err != nil {
			return imp, nil, fmt.Errorf(`"stream": %v`, err)
		}
		if t, ok := top["topics"]; ok {
			if err := json.Unmarshal(t, &imp.topics); err != nil {
				return imp, nil, fmt.Errorf(`"topics" is not a list of names: %v`, err)
			}
		}
		next, ok := top["next"]
		if !ok {
			return imp, nil, fmt.Errorf(`a kbatch offsets document needs "next" (as kbatch offsets export --format json writes)`)
		}
		b = next
	}
	o, err := spark.ParseOffsetJSON(b)
	if err != nil {
		return imp, nil, err
	}
	imp.next = map[offsets.Partition]int64{}
	for _, p := range o.Partitions() {
		switch off := o[p]; {
		case off >= 0:
			imp.next[p] = off
		case !isDoc && (off == spark.OffsetEarliest || off == spark.OffsetLatest):
			skipped = append(skipped, offsetsSafe(p.String()))
		default:
			return imp, nil, fmt.Errorf("offset %d of %s is not a next offset", off, offsetsSafe(p.String()))
		}
	}
	return imp, skipped, nil
}

// offsetsReadSpark reads --from-spark: the offsets the query last committed.
func offsetsReadSpark(stderr io.Writer, dir string, source int) (offsetsImported, error) {
	cp, err := spark.Open(dir)
	if err != nil {
		return offsetsImported{}, err
	}
	pos, err := cp.CommittedOffsets(source)
	if errors.Is(err, spark.ErrNoKafkaSource) || errors.Is(err, spark.ErrSeveralKafkaSources) {
		return offsetsImported{}, usageError{err}
	}
	if err != nil {
		return offsetsImported{}, err
	}
	imp := offsetsImported{next: map[offsets.Partition]int64(pos.Offsets),
		from: fmt.Sprintf("Spark checkpoint %s, %s", offsetsSafe(cp.Dir), offsetsSafe(pos.Origin))}
	if pos.InFlight != nil {
		offsetsNote(stderr, "Spark had planned the batch after the committed one but not committed it; it would re-run that batch, and watch reads its ranges too from the imported offsets")
	}
	return imp, nil
}

func offsetsHasTopic(next map[offsets.Partition]int64, topic string) bool {
	for p := range next {
		if p.Topic == topic {
			return true
		}
	}
	return false
}

// offsetsTopicsOf returns the sorted topics of next.
func offsetsTopicsOf(next map[offsets.Partition]int64) []string {
	var topics []string
	for p := range next {
		if !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	slices.Sort(topics)
	return topics
}
