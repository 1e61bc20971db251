package replay

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// BenchmarkReplay replays 200k records of 200 B as JSON lines to
// io.Discard: from one partition, and spread over four. It reports
// records/s; -benchmem and -cpuprofile show where the time goes.
func BenchmarkReplay(b *testing.B) {
	const records, size = 200_000, 200
	tc := testkafka.New(b)
	for _, parts := range []int32{1, 4} {
		topic := tc.Topic("bench", parts)
		for p := range parts {
			// Produce in slices so the set-up client's buffers stay small.
			for left := records / int(parts); left > 0; left -= 50_000 {
				tc.ProduceN(topic, p, min(left, 50_000), size)
			}
		}
		client := dialTest(b, tc, false)
		spec, err := ParseRange(topic+":*:earliest-latest", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) {
			tasks, err := Plan(client, []RangeSpec{spec})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(records * size)
			b.ResetTimer()
			for b.Loop() {
				rep, err := Run(context.Background(), client, tasks, NewJSONSink(io.Discard), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Records != records {
					b.Fatalf("read %d records, want %d", rep.Records, records)
				}
			}
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
