package spark

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OffsetLog is one parsed offsets/<N> file: the end offsets of micro-batch N
// for every source of the query.
type OffsetLog struct {
	// Version is the log version: 1 (every released Spark) or 2 (recent
	// Spark, opt-in).
	Version int
	// Metadata is line 2, Spark's OffsetSeqMetadata JSON object
	// (batchWatermarkMs, batchTimestampMs, conf, and in v2
	// sourceMetadataInfo), kept byte for byte so that unknown conf keys
	// survive. It is nil when the line is empty.
	Metadata json.RawMessage
	// Sources holds one entry per source line, in file order. In v1 that is
	// the source ordinal order; v2 lines come in hash-map order.
	Sources []SourceOffset
}

// SourceOffset is one source's line of an offset log.
type SourceOffset struct {
	// Index is the source ordinal, the i of sources/<i>/: the line's
	// position in v1, the numeric source id in v2, or -1 for a v2 source
	// with a name instead of a number.
	Index int
	// ID is the v2 source id ("0", "1", or a user-given name); "" in v1.
	ID string
	// Void is true for "-": the source had no offset in this batch.
	Void bool
	// Raw is the source's offset text as Spark wrote it (after "id:" in v2).
	Raw string
	// Kafka is Raw parsed as a Kafka offset JSON, or nil when Raw is not one
	// (a LongOffset "0", a file source's {"logOffset":345}, "-"). A Kafka
	// source whose subscription matched no partition has "{}": an empty,
	// non-nil map.
	Kafka Offsets
}

// label names the source in messages: its v2 id, or its ordinal.
func (s SourceOffset) label() string {
	if s.ID != "" {
		return strconv.Quote(s.ID)
	}
	return strconv.Itoa(s.Index)
}

// dir is the name of the source's directory under sources/.
func (s SourceOffset) dir() string {
	if s.Index < 0 {
		return s.ID // a named v2 source: kbatch assumes sources/<name>/
	}
	return strconv.Itoa(s.Index)
}

// ParseOffsetLog parses an offsets/<N> file.
//
// v1 is "v1\n<metadata JSON>\n<source 0>\n<source 1>..." with positional
// source lines; v2 is "v2\n<metadata JSON>\n<id>:<offset>..." and splits
// each source line at its first ':'. A source line "-" is void. Lines end as
// Spark's reader sees them ("\n", "\r\n" or "\r"), so a trailing newline,
// which Spark does not write but one upstream fixture has, is accepted.
// Versions above 2 give an *UnsupportedVersionError; other damage an error
// wrapping ErrMalformed. Source lines are never an error: a line that is not
// Kafka offset JSON just has a nil Kafka.
func ParseOffsetLog(b []byte) (OffsetLog, error) {
	lines := splitLines(b)
	if len(lines) == 0 {
		return OffsetLog{}, malformed("empty file")
	}
	version, err := parseVersion(lines[0], maxOffsetLogVersion)
	if err != nil {
		return OffsetLog{}, err
	}
	if len(lines) < 2 {
		return OffsetLog{}, malformed("no metadata line after the version line")
	}
	log := OffsetLog{Version: version}
	if md := javaTrim(lines[1]); md != "" {
		if md[0] != '{' || !json.Valid([]byte(md)) {
			return OffsetLog{}, malformed("line 2, the metadata line, is not a JSON object (%d bytes)", len(md))
		}
		log.Metadata = json.RawMessage(md)
	}
	ids := map[string]bool{}
	for i, line := range lines[2:] {
		s := SourceOffset{Index: i, Raw: line}
		if version >= 2 {
			if s, err = splitSourceID(line, i+3); err != nil {
				return OffsetLog{}, err
			}
			if ids[s.ID] {
				return OffsetLog{}, malformed("line %d: its source id appears on an earlier line too", i+3)
			}
			ids[s.ID] = true
		}
		if s.Raw == "-" {
			s.Void = true
		} else if kafka, err := ParseOffsetJSON([]byte(s.Raw)); err == nil {
			if err := checkResolved(kafka); err != nil {
				return OffsetLog{}, fmt.Errorf("%w: line %d: %w", ErrMalformed, i+3, err)
			}
			s.Kafka = kafka
		} else if errors.Is(err, ErrImpossibleOffset) {
			return OffsetLog{}, fmt.Errorf("line %d: %w", i+3, err)
		} else if strings.TrimSpace(s.Raw) != "" && !json.Valid([]byte(s.Raw)) {
			// Every source's offset is JSON (Spark writes Offset.json()):
			// a line that is not was cut off or damaged, and is not
			// "another kind of source".
			return OffsetLog{}, malformed("line %d: the source's offset is not JSON (%d bytes): cut off or damaged", i+3, len(s.Raw))
		}
		log.Sources = append(log.Sources, s)
	}
	return log, nil
}

// splitSourceID splits a v2 source line "<id>:<offset>" at its first ':'.
func splitSourceID(line string, lineNo int) (SourceOffset, error) {
	for i := 0; i < len(line); i++ {
		if line[i] == ':' {
			s := SourceOffset{ID: line[:i], Raw: line[i+1:], Index: -1}
			if n, err := strconv.Atoi(s.ID); err == nil && n >= 0 && strconv.Itoa(n) == s.ID {
				s.Index = n
			}
			return s, nil
		}
	}
	return SourceOffset{}, malformed("line %d is not sourceId:offset (%d bytes, no ':')", lineNo, len(line))
}

// BatchTime returns the batch's batchTimestampMs from Metadata: when Spark
// planned the batch. ok is false when the metadata is absent or has no
// integer batchTimestampMs.
func (l OffsetLog) BatchTime() (t time.Time, ok bool) {
	var md struct {
		BatchTimestampMs json.RawMessage `json:"batchTimestampMs"`
	}
	if len(l.Metadata) == 0 || json.Unmarshal(l.Metadata, &md) != nil {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(string(md.BatchTimestampMs), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}
