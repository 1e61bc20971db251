package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/pierrec/lz4/v4"
)

// The LZ4 frame format (lz4_Frame_format.md in the lz4 project), as far as
// unlz4 reads it.
const (
	lz4FrameMagic  = 0x184D2204
	lz4Version     = 0x40 // FLG bits 7-6: 01
	lz4Independent = 0x20 // FLG: blocks do not refer to earlier blocks
	lz4BlockSum    = 0x10 // FLG: each block is followed by its xxh32
	lz4ContentSize = 0x08 // FLG: the descriptor holds the content size
	lz4ContentSum  = 0x04 // FLG: the frame ends with the content's xxh32
	lz4Reserved    = 0x02
	lz4DictID      = 0x01
	lz4Raw         = 1 << 31 // a block size's high bit: stored, not compressed
)

// unlz4 decodes a record batch's LZ4 frame straight into the buffer the
// records then point into, block by block, with pierrec/lz4's block
// decoder. pierrec/lz4's streaming Reader decodes
// each block into a buffer of its own and copies it out through Read,
// over a bytes.Reader, and sums the content with xxh32: a quarter of the
// decompressing on a catch-up of lz4 text records (profile of the lz4
// row, BENCHMARKS.md). Only the frame's framing is read here; the block
// format stays the library's.
//
// Every Kafka producer writes frames of independent blocks: Java's
// KafkaLZ4BlockOutputStream, librdkafka, and franz-go and sarama through
// pierrec/lz4. ok is false for anything else (linked blocks, a
// dictionary, a skippable or legacy frame, a version other than 1): the
// caller reads it with the Reader.
//
// The header checksum is checked (a v0 message's is mended first, by
// fixLZ4Header); the blocks' and the content's are not:
// the batch's CRC-32C covers these bytes (parseBatch), as a legacy
// message's CRC-32 does (parseMessage). A corrupt or hostile frame still
// only yields an error: a block, stored or as it decodes, is at most its
// frame's block size and inside the bytes left, a content size is
// believed up to claimRatio, and the decoder never writes past the room
// it is given.
func unlz4(src []byte, limit int) (out []byte, ok bool, err error) {
	// One pass over the framing first: a frame unlz4 does not take is
	// left whole to the Reader, with nothing decoded twice.
	size, ok := lz4Frames(src)
	if !ok {
		return nil, false, nil
	}
	srcLen := len(src)
	if size > limit {
		return nil, true, &tooLargeError{limit: limit, claim: int64(size)}
	}
	if size < 0 || size > srcLen*claimRatio { // a claim past claimRatio grows as it is filled
		size = guessSize(codecLZ4, srcLen)
	}
	out = make([]byte, 0, min(size, limit))
	for len(src) > 0 {
		flg, frameMax := src[4], blockSize(src[5])
		h, start, sized, want := 7, len(out), false, uint64(0)
		if flg&lz4ContentSize != 0 {
			h, sized, want = 15, true, binary.LittleEndian.Uint64(src[6:])
		}
		src = src[h:]
		for {
			n := binary.LittleEndian.Uint32(src)
			src = src[4:]
			if n == 0 {
				break
			}
			at := srcLen - len(src) // where blk starts
			blk := src[:n&^lz4Raw]
			src = src[len(blk):]
			if flg&lz4BlockSum != 0 {
				src = src[4:]
			}
			if out, err = lz4Block(out, blk, n&lz4Raw != 0, frameMax, at, srcLen, limit); err != nil {
				return nil, true, err
			}
		}
		if flg&lz4ContentSum != 0 {
			src = src[4:]
		}
		if sized && uint64(len(out)-start) != want {
			return nil, true, fmt.Errorf("lz4: a frame of %d bytes decoded to %d", want, len(out)-start)
		}
	}
	return fitted(codecLZ4, out, srcLen), true, nil
}

// lz4Frames checks the framing of src, one or more frames, before any
// block is decoded: every frame one unlz4 takes, every block inside the
// bytes left and no larger than its frame's block size. size is the sum
// of the frames' content sizes when each says it (-1 otherwise).
func lz4Frames(src []byte) (size int, ok bool) {
	if len(src) == 0 {
		return 0, false
	}
	for len(src) > 0 {
		if len(src) < 7 || binary.LittleEndian.Uint32(src) != lz4FrameMagic {
			return 0, false
		}
		flg, bd := src[4], src[5]
		if flg&0xC0 != lz4Version || flg&lz4Independent == 0 || flg&(lz4Reserved|lz4DictID) != 0 || bd&0x8F != 0 {
			return 0, false
		}
		frameMax := blockSize(bd)
		if frameMax == 0 {
			return 0, false
		}
		h := 7
		if flg&lz4ContentSize != 0 {
			if len(src) < 15 {
				return 0, false
			}
			cs := binary.LittleEndian.Uint64(src[6:])
			if size >= 0 && cs <= maxRecordBytesCap {
				size += int(cs)
			} else {
				size = -1
			}
			h = 15
		} else {
			size = -1
		}
		if src[h-1] != byte(xxh32(src[4:h-1])>>8) {
			return 0, false // the Reader says what is wrong (see fixLZ4Header)
		}
		src = src[h:]
		for {
			if len(src) < 4 {
				return 0, false
			}
			n := binary.LittleEndian.Uint32(src)
			src = src[4:]
			if n == 0 {
				break
			}
			l := int(n &^ lz4Raw)
			if l > frameMax {
				return 0, false
			}
			if flg&lz4BlockSum != 0 {
				l += 4
			}
			if l > len(src) {
				return 0, false
			}
			src = src[l:]
		}
		if flg&lz4ContentSum != 0 {
			if len(src) < 4 {
				return 0, false
			}
			src = src[4:]
		}
	}
	if size > maxRecordBytesCap {
		size = -1
	}
	return size, true
}

// blockSize is the largest block of a frame whose BD byte is bd; 0 for
// none the format defines.
func blockSize(bd byte) int {
	switch bd >> 4 {
	case 4:
		return 64 << 10
	case 5:
		return 256 << 10
	case 6:
		return 1 << 20
	case 7:
		return 4 << 20
	}
	return 0
}

var errLZ4Block = errors.New("lz4: corrupt block")

// lz4Block appends one block to out: stored as it is, or decoded into at
// most its frame's block size (frameMax), which is what the Reader allows
// it. While the room left is smaller, a failure may only mean the room was
// too small: the buffer grows and the block is decoded again. It grows to
// what the expansion so far makes of the frames' bytes from blk on (blk
// starts at byte at of srcLen), and by at least a quarter: a batch
// decodes in amortized linear time however wrong the size guess, and a
// guess short by a few percent costs one copy, not a buffer twice the
// size that fitted copies again.
func lz4Block(out, blk []byte, raw bool, frameMax, at, srcLen, limit int) ([]byte, error) {
	if raw {
		if len(out)+len(blk) > limit {
			return nil, &tooLargeError{limit: limit, claim: -1}
		}
		return append(out, blk...), nil
	}
	for {
		room := out[len(out):min(cap(out), len(out)+frameMax)]
		n, err := lz4.UncompressBlock(blk, room)
		if err == nil {
			return out[:len(out)+n], nil
		}
		if len(room) >= frameMax {
			return nil, errLZ4Block
		}
		if cap(out) >= limit {
			return nil, &tooLargeError{limit: limit, claim: -1}
		}
		want := cap(out) + cap(out)/4
		want = max(want, len(out)+min(frameMax, 4*len(blk)+bytes.MinRead))
		if at > 0 { // the frames' bytes from blk on, at the expansion of those before
			rest := min((srcLen-at)*len(out)/at*9/8, (srcLen-at)*claimRatio) // believed up to claimRatio, as a claim is
			want = max(want, len(out)+rest+bytes.MinRead)
		}
		// slices.Grow does not clear the bytes it copies.
		out = slices.Grow(out, min(want, limit)-len(out))
	}
}
