package kafka

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Kafka before 0.10 wrote the LZ4 frames of message format v0 with a
// wrong header checksum (KAFKA-3160: the checksum byte covers the frame's
// magic number too). The Java client and librdkafka accept such frames;
// the LZ4 reader kbatch uses checks the byte and refuses them ("invalid
// header checksum"), so those records could not be read at all.
// fixLZ4Header returns the frame with its header checksum computed as the
// LZ4 frame format defines it (the second byte of XXH32 of the frame
// descriptor), for a v0 message only; the frame is copied when it
// changes.

var lz4Magic = []byte{0x04, 0x22, 0x4d, 0x18}

func fixLZ4Header(frame []byte) []byte {
	if len(frame) < 7 || !bytes.Equal(frame[:4], lz4Magic) {
		return frame
	}
	end := 6 // FLG and BD
	if flg := frame[4]; flg&0x08 != 0 {
		end += 8 // content size
	}
	if frame[4]&0x01 != 0 {
		end += 4 // dictionary id
	}
	if len(frame) <= end {
		return frame
	}
	want := byte(xxh32(frame[4:end]) >> 8)
	if frame[end] == want {
		return frame
	}
	out := bytes.Clone(frame)
	out[end] = want
	return out
}

// xxh32 is XXH32 with seed 0 (the LZ4 frame format's header checksum),
// written out here for the one header byte above: the LZ4 library keeps
// its own in an internal package.
func xxh32(b []byte) uint32 {
	var (
		p1 uint32 = 2654435761 // variables: the sums below wrap, as XXH32 means them to
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	round := func(acc, in uint32) uint32 { return bits.RotateLeft32(acc+in*p2, 13) * p1 }
	n := len(b)
	var h uint32
	if n >= 16 {
		v1, v2, v3, v4 := p1+p2, p2, uint32(0), -p1
		for len(b) >= 16 {
			v1 = round(v1, binary.LittleEndian.Uint32(b))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
