package schema

import (
	"encoding/binary"
	"errors"
)

// Frame is the Confluent wire-format header of one key or value: a zero
// magic byte, a 4-byte big-endian schema id, then the payload.
type Frame struct {
	ID      int
	Payload []byte // the bytes after the 5-byte header
}

// ParseFrame reports whether b starts with the Confluent wire-format header
// and splits it. It does not look at the payload.
func ParseFrame(b []byte) (Frame, bool) {
	if len(b) < 5 || b[0] != 0 {
		return Frame{}, false
	}
	return Frame{ID: int(binary.BigEndian.Uint32(b[1:5])), Payload: b[5:]}, true
}

// maxIndexes bounds the message-index path of a Protobuf payload; real
// schemas nest a few levels, hostile bytes could claim billions.
const maxIndexes = 64

var errIndexes = errors.New("bad Protobuf message indexes")

// parseIndexes reads the Protobuf message-index path that Confluent's
// serializers put before the message: a zig-zag varint count, then that
// many zig-zag varint indexes; a count of 0 alone means [0].
func parseIndexes(b []byte) (path []int, rest []byte, err error) {
	n, k := binary.Varint(b)
	if k <= 0 {
		return nil, nil, errIndexes
	}
	b = b[k:]
	if n == 0 {
		return []int{0}, b, nil
	}
	if n < 0 || n > maxIndexes {
		return nil, nil, errIndexes
	}
	path = make([]int, 0, n)
	for range n {
		v, k := binary.Varint(b)
		if k <= 0 || v < 0 || v > 1<<20 {
			return nil, nil, errIndexes
		}
		path = append(path, int(v))
		b = b[k:]
	}
	return path, b, nil
}
