package kafka

import (
	"testing"
)

// XXH32's published values (seed 0).
func TestXXH32(t *testing.T) {
	for in, want := range map[string]uint32{
		"":    0x02cc5d05,
		"a":   0x550d7456,
		"abc": 0x32d153ff,
		"Nobody inspects the spammish repetition": 0xe2293b2f,
	} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %#x, want %#x", in, got, want)
		}
	}
}

// TestLegacyLZ4WithKafka3160Header: a v0 message whose LZ4 frame has the
// header checksum Kafka before 0.10 wrote (KAFKA-3160) reads, as in the
// Java client; the reader alone refuses it. A v1 message's frame is
// left as it is.
func TestLegacyLZ4WithKafka3160Header(t *testing.T) {
	var inner []byte
	for i := int64(0); i < 3; i++ {
		inner = append(inner, legacy(0, 10+i, 0, 0, []byte{byte(10 + i)}, []byte("v"))...)
	}
	broken := lz4Frame(t, inner)
	hc := 6
	if broken[4]&0x08 != 0 {
		hc += 8
	}
	broken[hc] = byte(xxh32(broken[:hc]) >> 8) // over the magic too: Kafka's mistake
	if _, err := decompress(codecLZ4, broken, DefaultMaxRecordBytes); err == nil {
		t.Fatal("the LZ4 reader took the broken header; the test proves nothing")
	}
	d, err := DecodeRecords(legacy(0, 12, codecLZ4, 0, nil, broken), nil, tp, 0, NoEnd, false)
	if err != nil || len(d.Msgs) != 3 || d.Msgs[0].Offset != 10 || d.Next != 13 {
		t.Fatalf("v0 lz4 with Kafka's header: %+v, %v", d, err)
	}
	if _, err := DecodeRecords(legacy(1, 12, codecLZ4, 0, nil, broken), nil, tp, 0, NoEnd, false); err == nil {
		t.Error("a v1 message's broken header was mended too")
	}
}
