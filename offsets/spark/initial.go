package spark

import (
	"bytes"
	"fmt"
)

// ParseInitialOffsets parses a Kafka source's sources/<i>/0 file: the offsets
// batch 0 starts at.
//
// Spark 2.2 and later write a 0x00 byte, "v1\n", then the Kafka offset JSON;
// Spark 2.1.0 wrote one length byte (the JSON length mod 256) then the JSON.
// Like Spark, the first byte is skipped whatever it is; if the rest starts
// with 'v' it is a version line (only v1 exists; newer versions give an
// *UnsupportedVersionError), otherwise the rest is the JSON.
func ParseInitialOffsets(b []byte) (Offsets, error) {
	if len(b) == 0 {
		return nil, malformed("empty file")
	}
	rest := b[1:]
	if len(rest) > 0 && rest[0] == 'v' {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, malformed("failed to read log version: no newline after the first %d bytes", len(rest))
		}
		if _, err := parseVersion(string(rest[:nl]), maxInitialOffsetVersion); err != nil {
			return nil, err
		}
		rest = rest[nl+1:]
	}
	o, err := ParseOffsetJSON(rest)
	if err != nil {
		return nil, err
	}
	if err := checkResolved(o); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return o, nil
}
