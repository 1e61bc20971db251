package kafka

import (
	"fmt"
	"testing"

	"github.com/IBM/sarama"
)

// BenchmarkDecodeBlock decodes an answer of 10 batches of 100 records,
// without headers and with two each (what the stream and replay do per
// fetch).
func BenchmarkDecodeBlock(b *testing.B) {
	for _, headers := range []int{0, 2} {
		b.Run(fmt.Sprintf("headers=%d", headers), func(b *testing.B) {
			var sets []*sarama.Records
			for i := int64(0); i < 10; i++ {
				r := plain(i*100, 100)
				for _, rec := range r.RecordBatch.Records {
					for h := 0; h < headers; h++ {
						rec.Headers = append(rec.Headers, &sarama.RecordHeader{Key: []byte("source"), Value: []byte("web")})
					}
				}
				sets = append(sets, r)
			}
			blk := &sarama.FetchResponseBlock{RecordsSet: sets}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				d, err := DecodeBlock(blk, tp, 0, NoEnd, false)
				if err != nil || len(d.Msgs) != 1000 {
					b.Fatal(len(d.Msgs), err)
				}
			}
		})
	}
}
