package kafka

import (
	"fmt"
	"testing"
)

// BenchmarkDecodeRecords decodes an answer of 10 batches of 100 records,
// without headers and with two each (what the stream and replay do per
// fetch).
func BenchmarkDecodeRecords(b *testing.B) {
	for _, headers := range []int{0, 2} {
		b.Run(fmt.Sprintf("headers=%d", headers), func(b *testing.B) {
			var raw []byte
			for i := int64(0); i < 10; i++ {
				b := tbatch{First: i * 100, LastDelta: 99, FirstTS: 1000, MaxTS: 1099}
				for j := int64(0); j < 100; j++ {
					r := trec{OffsetDelta: j, TimestampDelta: j, Key: []byte{byte(j)}, Value: []byte("v")}
					for h := 0; h < headers; h++ {
						r.Headers = append(r.Headers, [2][]byte{[]byte("source"), []byte("web")})
					}
					b.Records = append(b.Records, r)
				}
				raw = append(raw, b.Encode()...)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				d, err := DecodeRecords(raw, nil, tp, 0, NoEnd, false)
				if err != nil || len(d.Msgs) != 1000 {
					b.Fatal(len(d.Msgs), err)
				}
			}
		})
	}
}
