package kafka

import (
	"bytes"
	"testing"
)

// TestDecompressSizesItsBuffer: gzip and lz4 frames do not say their
// decompressed size; guessSize guesses it from the codec's last batch.
// Whatever the guess, the bytes come back exact, and a result keeps at
// most a quarter more buffer than it holds (records keep it alive),
// through batches that expand 1x (random), 30x (repeated) and back.
func TestDecompressSizesItsBuffer(t *testing.T) {
	rnd := make([]byte, 300<<10)
	for i := range rnd {
		rnd[i] = byte(i*7919 ^ i>>3*31)
	}
	rep := bytes.Repeat([]byte(`{"seq":1,"payload":"aaaa"}`), 12000)
	for _, payload := range [][]byte{rnd, rep, rep, rnd, rnd[:100], rep, nil} {
		for codec, frame := range map[int8][]byte{codecLZ4: lz4Frame(t, payload), codecGzip: gzipped(t, payload)} {
			out, err := decompress(codec, frame, DefaultMaxRecordBytes)
			if err != nil || !bytes.Equal(out, payload) {
				t.Fatalf("codec %d, %d bytes: %d bytes back, %v", codec, len(payload), len(out), err)
			}
			if cap(out)-len(out) > len(out)/4+bytes.MinRead {
				t.Errorf("codec %d, %d bytes: a buffer of %d kept", codec, len(payload), cap(out))
			}
		}
	}
}
