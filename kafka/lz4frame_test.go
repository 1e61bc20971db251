package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/pierrec/lz4/v4"
)

// lz4Frame writes payload as pierrec/lz4's Writer does with opts (what
// franz-go and sarama producers send).
func lz4Frame(t testing.TB, payload []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var b bytes.Buffer
	w := lz4.NewWriter(&b)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(payload); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// javaLZ4Frame writes payload as Java's KafkaLZ4BlockOutputStream does:
// FLG 0x60 (version 1, independent blocks, no checksums, no size), 64 KiB
// blocks, a block that does not shrink stored as it is (the size's high
// bit), and the end mark.
func javaLZ4Frame(payload []byte) []byte {
	desc := []byte{0x60, 0x40}
	out := binary.LittleEndian.AppendUint32(nil, lz4FrameMagic)
	out = append(out, desc...)
	out = append(out, byte(xxh32(desc)>>8))
	for len(payload) > 0 {
		blk := payload[:min(len(payload), 64<<10)]
		payload = payload[len(blk):]
		c := make([]byte, lz4.CompressBlockBound(len(blk)))
		n, err := lz4.CompressBlock(blk, c, nil)
		if err != nil || n == 0 || n >= len(blk) {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(blk))|lz4Raw)
			out = append(out, blk...)
			continue
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
		out = append(out, c[:n]...)
	}
	return binary.LittleEndian.AppendUint32(out, 0)
}

// readerLZ4 is what pierrec/lz4's Reader makes of frame: the reference.
func readerLZ4(frame []byte) ([]byte, error) {
	return io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
}

func lz4Payloads() map[string][]byte {
	rnd := make([]byte, 300<<10)
	x := uint32(1)
	for i := range rnd {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		rnd[i] = byte(x)
	}
	text := bytes.Repeat([]byte(`{"seq":1,"payload":"aaaa","user":"someone"}`), 130000) // 5.5 MiB: blocks of every size fill up
	return map[string][]byte{"empty": {}, "one byte": {7}, "random": rnd, "text": text, "text and random": append(append([]byte{}, text[:200<<10]...), rnd...)}
}

// TestLZ4FramesOfEveryProducer: unlz4 takes the frames of every kind of
// producer, each block size, with and without block and content
// checksums and the content size, and returns the bytes the Reader
// does; a frame after another is read too.
func TestLZ4FramesOfEveryProducer(t *testing.T) {
	for name, payload := range lz4Payloads() {
		frames := map[string][]byte{"java": javaLZ4Frame(payload)}
		for _, bs := range []lz4.BlockSize{lz4.Block64Kb, lz4.Block256Kb, lz4.Block1Mb, lz4.Block4Mb} {
			frames["pierrec "+bs.String()] = lz4Frame(t, payload, lz4.BlockSizeOption(bs))
		}
		frames["checksums off"] = lz4Frame(t, payload, lz4.ChecksumOption(false))
		frames["block checksums"] = lz4Frame(t, payload, lz4.BlockChecksumOption(true), lz4.BlockSizeOption(lz4.Block64Kb))
		frames["content size"] = lz4Frame(t, payload, lz4.SizeOption(uint64(len(payload))))
		frames["level 9"] = lz4Frame(t, payload, lz4.CompressionLevelOption(lz4.Level9))
		frames["two frames"] = append(lz4Frame(t, payload), javaLZ4Frame(payload)...)
		for kind, frame := range frames {
			want, err := readerLZ4(frame)
			if err != nil {
				t.Fatalf("%s, %s: the Reader: %v", name, kind, err)
			}
			got, ok, err := unlz4(frame, DefaultMaxRecordBytes)
			if !ok || err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s, %s: taken %v, %d bytes of %d, %v", name, kind, ok, len(got), len(want), err)
			}
			if cap(got)-len(got) > len(got)/4+bytes.MinRead {
				t.Errorf("%s, %s: a buffer of %d kept for %d bytes", name, kind, cap(got), len(got))
			}
			if out, err := decompress(codecLZ4, frame, DefaultMaxRecordBytes); err != nil || !bytes.Equal(out, want) {
				t.Errorf("%s, %s: decompress: %d bytes, %v", name, kind, len(out), err)
			}
		}
	}
}

// TestLZ4FramesLeftToTheReader: a frame of linked blocks, a skippable
// frame, a broken header checksum or framing are not unlz4's: the Reader
// reads them (or says what is wrong), as before.
func TestLZ4FramesLeftToTheReader(t *testing.T) {
	payload := lz4Payloads()["text"][:100<<10]
	frame := javaLZ4Frame(payload)
	withFLG := func(flg byte) []byte {
		f := bytes.Clone(frame)
		f[4] = flg
		f[6] = byte(xxh32(f[4:6]) >> 8)
		return f
	}
	skippable := binary.LittleEndian.AppendUint32(nil, 0x184D2A50)
	skippable = binary.LittleEndian.AppendUint32(skippable, 3)
	skippable = append(append(skippable, 1, 2, 3), frame...)
	brokenHC := bytes.Clone(frame)
	brokenHC[6] ^= 0xFF
	for name, f := range map[string][]byte{
		"linked blocks": withFLG(0x40),
		"skippable":     skippable,
		"header sum":    brokenHC,
		"truncated":     frame[:len(frame)-1],
		"not lz4":       []byte("plain text, not a frame"),
		"trailing":      append(bytes.Clone(frame), 0xAA),
		"empty":         nil,
	} {
		if _, ok, _ := unlz4(f, DefaultMaxRecordBytes); ok {
			t.Errorf("%s: unlz4 took it", name)
		}
		want, werr := readerLZ4(f)
		got, err := decompress(codecLZ4, f, DefaultMaxRecordBytes)
		if (werr == nil) != (err == nil) || (err == nil && !bytes.Equal(got, want)) {
			t.Errorf("%s: decompress %d bytes, %v; the Reader %d bytes, %v", name, len(got), err, len(want), werr)
		}
	}
}

// TestLZ4CorruptBlocks: a block that does not decode, or decodes to more
// than its frame's block size or its stated content size, is an error,
// never a panic or bytes from past the block.
func TestLZ4CorruptBlocks(t *testing.T) {
	payload := lz4Payloads()["text"][:200<<10]
	frame := javaLZ4Frame(payload)
	for i := 11; i < len(frame)-4; i += 97 {
		f := bytes.Clone(frame)
		f[i] ^= 0x5A
		got, ok, err := unlz4(f, DefaultMaxRecordBytes)
		if ok && err == nil && bytes.Equal(got, payload) {
			t.Fatalf("byte %d changed, and the same bytes came back", i)
		}
	}
	sized := lz4Frame(t, payload, lz4.SizeOption(uint64(len(payload))), lz4.ChecksumOption(false))
	binary.LittleEndian.PutUint64(sized[6:], uint64(len(payload)-1))
	sized[14] = byte(xxh32(sized[4:14]) >> 8)
	if _, ok, err := unlz4(sized, DefaultMaxRecordBytes); !ok || err == nil || !strings.Contains(err.Error(), "decoded to") {
		t.Errorf("a frame longer than its content size: taken %v, %v", ok, err)
	}
}

// FuzzLZ4Frame: whatever the bytes, unlz4 does not panic, and when the
// Reader reads a frame unlz4 took, both return the same bytes; unlz4
// takes a frame the Reader refuses only for a checksum it does not check
// (the batch's CRC covers it). Every header checksum it finds is mended
// first, so the fuzzer reaches the header's fields, and the expansion the
// buffer is guessed from is the fuzzer's too.
func FuzzLZ4Frame(f *testing.F) {
	text := lz4Payloads()["text"][:70<<10]
	f.Add(javaLZ4Frame(text), uint32(0))
	f.Add(lz4Frame(f, text, lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block64Kb)), uint32(16))
	f.Add(lz4Frame(f, text[:3000], lz4.SizeOption(3000), lz4.BlockChecksumOption(true)), uint32(4000))
	f.Add(append(javaLZ4Frame(text[:100]), lz4Frame(f, text[:5000])...), uint32(250*16))
	f.Add(javaLZ4Frame([]byte("a")), uint32(1))
	f.Fuzz(func(t *testing.T, frame []byte, exp uint32) {
		frame = mendHeaders(frame)
		expansion[codecLZ4].Store(exp % (1 << 24))
		got, ok, err := unlz4(frame, DefaultMaxRecordBytes)
		if !ok {
			return
		}
		if err == nil && cap(got)-len(got) > len(got)/4+bytes.MinRead {
			t.Fatalf("a buffer of %d kept for %d bytes", cap(got), len(got))
		}
		want, werr := readerLZ4(frame)
		switch {
		case werr == nil && err != nil:
			t.Fatalf("the Reader read %d bytes; unlz4: %v", len(want), err)
		case werr == nil && !bytes.Equal(got, want):
			t.Fatalf("unlz4 %d bytes, the Reader %d", len(got), len(want))
		case werr != nil && err == nil && !strings.Contains(werr.Error(), "checksum"):
			t.Fatalf("unlz4 read %d bytes; the Reader: %v", len(got), werr)
		}
	})
}

// mendHeaders returns frames with the header checksum of each frame it
// can walk to computed again.
func mendHeaders(frames []byte) []byte {
	frames = bytes.Clone(frames)
	for p := 0; p+7 <= len(frames) && binary.LittleEndian.Uint32(frames[p:]) == lz4FrameMagic; {
		flg, h := frames[p+4], 7
		if flg&lz4ContentSize != 0 {
			h = 15
		}
		if p+h > len(frames) {
			break
		}
		frames[p+h-1] = byte(xxh32(frames[p+4:p+h-1]) >> 8)
		q, end := p+h, false
		for q+4 <= len(frames) {
			n := binary.LittleEndian.Uint32(frames[q:])
			q += 4
			if n == 0 {
				end = true
				break
			}
			q += int(n &^ lz4Raw)
			if flg&lz4BlockSum != 0 {
				q += 4
			}
		}
		if !end {
			break
		}
		if flg&lz4ContentSum != 0 {
			q += 4
		}
		p = q
	}
	return frames
}

// handFrame writes one frame by hand: flg, bd, the content size when flg
// says so, the header checksum, the blocks (each with its size word), and
// the end mark.
func handFrame(flg, bd byte, size uint64, blocks ...[]byte) []byte {
	out := binary.LittleEndian.AppendUint32(nil, lz4FrameMagic)
	out = append(out, flg, bd)
	if flg&lz4ContentSize != 0 {
		out = binary.LittleEndian.AppendUint64(out, size)
	}
	out = append(out, byte(xxh32(out[4:])>>8))
	for _, b := range blocks {
		out = append(out, b...)
	}
	return binary.LittleEndian.AppendUint32(out, 0)
}

// compressedBlock is payload as one compressed block with its size word.
func compressedBlock(t testing.TB, payload []byte) []byte {
	c := make([]byte, lz4.CompressBlockBound(len(payload)))
	n, err := lz4.CompressBlock(payload, c, nil)
	if err != nil || n == 0 {
		t.Fatalf("CompressBlock: %d, %v", n, err)
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(n)), c[:n]...)
}

// TestLZ4ContentSizeHighBits: a content size with bit 62 or 63 set is
// refused, as the Reader refuses it, not masked before the comparison.
func TestLZ4ContentSizeHighBits(t *testing.T) {
	payload := []byte("hello, hello, hello, hello")
	for _, size := range []uint64{1<<62 + uint64(len(payload)), 1<<63 + uint64(len(payload)), 3<<62 + uint64(len(payload))} {
		frame := handFrame(0x68, 0x40, size, compressedBlock(t, payload))
		if got, ok, err := unlz4(frame, DefaultMaxRecordBytes); ok && err == nil {
			t.Errorf("content size %#x: %q taken", size, got)
		}
		if _, err := decompress(codecLZ4, frame, DefaultMaxRecordBytes); err == nil {
			t.Errorf("content size %#x: decompressed", size)
		}
	}
}

// TestLZ4BlockLargerThanItsFrameBlockSize: a block decoding to 200 KiB in
// a frame of 64 KiB blocks is refused, as the Reader refuses it, even when
// unlz4's buffer has the room (a content size, or a large expansion left
// by the previous batch).
func TestLZ4BlockLargerThanItsFrameBlockSize(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16)
	for _, flg := range []byte{0x60, 0x68} {
		for _, exp := range []uint32{0, 16, 250 * 16} {
			frame := handFrame(flg, 0x40, uint64(len(big)), compressedBlock(t, big))
			expansion[codecLZ4].Store(exp)
			if got, ok, err := unlz4(frame, DefaultMaxRecordBytes); !ok || err == nil {
				t.Errorf("FLG %#x, expansion %d/16: taken %v, %d bytes, %v", flg, exp, ok, len(got), err)
			}
		}
	}
}

// lz4Batch is b with its records section compressed by frame into an LZ4
// batch, CRC and length made again.
func lz4Batch(b tbatch, frame func(records []byte) []byte) []byte {
	plain := b.Encode()
	recs := frame(plain[61:])
	out := append(bytes.Clone(plain[:61]), recs...)
	binary.BigEndian.PutUint32(out[8:], uint32(61-12+len(recs)))
	binary.BigEndian.PutUint16(out[21:], binary.BigEndian.Uint16(out[21:])|codecLZ4)
	return recrc(out)
}

// TestLZ4ContentSizeClaimIsBounded: a batch of 92 bytes whose frame
// claims 1 GiB of content must not allocate 1 GiB before it fails. The
// claim is believed up to claimRatio times the frame's bytes, as snappy's
// and zstd's are.
func TestLZ4ContentSizeClaimIsBounded(t *testing.T) {
	b := tbatch{ProducerID: -1, FirstTS: 1, MaxTS: 1, Records: []trec{{Value: []byte("v")}}}
	raw := lz4Batch(b, func(recs []byte) []byte {
		return handFrame(0x68, 0x40, 1<<30, append(binary.LittleEndian.AppendUint32(nil, uint32(len(recs))|lz4Raw), recs...))
	})
	var err error
	n := allocated(func() { _, err = DecodeRecords(raw, nil, tp, 0, NoEnd, false) })
	if err == nil || n > 1<<20 {
		t.Errorf("a batch of %d bytes claiming 1 GiB: %d bytes allocated, %v", len(raw), n, err)
	}
	good := lz4Batch(b, func(recs []byte) []byte {
		return lz4Frame(t, recs, lz4.SizeOption(uint64(len(recs))))
	})
	if d, err := DecodeRecords(good, nil, tp, 0, NoEnd, false); err != nil || len(d.Msgs) != 1 || string(d.Msgs[0].Value) != "v" {
		t.Errorf("a batch with its true content size: %+v, %v", d.Msgs, err)
	}
}

// TestLZ4GrowthIsLinear: the buffer grows by at least a quarter at a
// time. Grown by a block at a time, a batch decoded after one that
// expanded less would copy all that was decoded at every block: 16 MiB of
// zeros in 64 KiB blocks would allocate 14 GiB.
func TestLZ4GrowthIsLinear(t *testing.T) {
	payload := make([]byte, 16<<20)
	frame := javaLZ4Frame(payload)
	expansion[codecLZ4].Store(16) // the last batch did not expand
	var out []byte
	var err error
	n := allocated(func() { out, err = decompress(codecLZ4, frame, DefaultMaxRecordBytes) })
	if err != nil || !bytes.Equal(out, payload) {
		t.Fatalf("%d bytes, %v", len(out), err)
	}
	if n > 8*uint64(len(payload)) { // 3.4x here (4.4x with -race), 14 GiB when it grew by a block
		t.Errorf("%d MiB decoded from %d bytes allocated %d MiB", len(payload)>>20, len(frame), n>>20)
	}
}

// TestDecompressGuessIsBounded: after a batch of zeros (255x), a 4 MiB
// batch of other data is not given a buffer of 1 GiB; the guess is at
// most 16 MiB (or 4x), for every codec that guesses.
func TestDecompressGuessIsBounded(t *testing.T) {
	rnd := lz4Payloads()["random"]
	rnd = bytes.Repeat(rnd, 4<<20/len(rnd)+1)[:4<<20]
	for codec, frame := range map[int8][]byte{codecLZ4: javaLZ4Frame(rnd), codecGzip: gzipped(t, rnd)} {
		expansion[codec].Store(255 * 16)
		var out []byte
		var err error
		n := allocated(func() { out, err = decompress(codec, frame, DefaultMaxRecordBytes) })
		if err != nil || !bytes.Equal(out, rnd) {
			t.Fatalf("codec %d: %d bytes, %v", codec, len(out), err)
		}
		if n > 64<<20 {
			t.Errorf("codec %d: 4 MiB after a batch of zeros allocated %d MiB", codec, n>>20)
		}
	}
}

func gzipped(t testing.TB, payload []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(payload); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkLZ4 decodes a 1 MiB batch of JSON-looking text as franz-go's
// producer compresses it: unlz4, and pierrec/lz4's Reader (readAll) that
// it replaced for such frames.
func BenchmarkLZ4(b *testing.B) {
	var text []byte
	for i := 0; len(text) < 1<<20; i++ {
		text = fmt.Appendf(text, `{"seq":%d,"user":"user-%d","event":"click","ts":%d,"pad":"%x"}`, i, i%997, 1700000000000+i, i*2654435761)
	}
	frame := lz4Frame(b, text)
	b.Run("unlz4", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if out, ok, err := unlz4(frame, DefaultMaxRecordBytes); !ok || err != nil || len(out) != len(text) {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		r := lz4.NewReader(nil)
		for b.Loop() {
			r.Reset(bytes.NewReader(frame))
			if out, err := readAll(r, codecLZ4, len(frame), DefaultMaxRecordBytes); err != nil || len(out) != len(text) {
				b.Fatal(err)
			}
		}
	})
}
