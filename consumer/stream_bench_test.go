package consumer

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// BenchmarkStreamCatchUp reads 200k records of 200 B on 3 partitions with
// the store and a /dev/null sink, as `watch --no-tui --until-end` does.
func BenchmarkStreamCatchUp(b *testing.B) {
	const perPartition = 200_000 / 3
	kc := testkafka.New(b)
	topic := kc.Topic("bench", 3)
	for p := int32(0); p < 3; p++ {
		kc.ProduceN(topic, p, perPartition, 200)
	}
	cc := kafka.ClientConfig{Brokers: kc.Brokers}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		client, err := kafka.Dial(cc)
		if err != nil {
			b.Fatal(err)
		}
		st, err := offsets.Open(filepath.Join(b.TempDir(), "o.db"), offsets.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		sink, err := OpenFileSink("/dev/null")
		if err != nil {
			b.Fatal(err)
		}
		s, _, err := Start(context.Background(), Config{Client: client, Topics: []string{topic}, Name: "bench", Reset: offsets.ResetEarliest,
			UntilEnd: true, Store: benchStore(st), Processor: benchSink(sink), Samples: 5, Interval: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for ev := range s.Events() {
			if e, ok := ev.(*Ended); ok {
				n = e.Records
				if e.Err != nil {
					b.Fatal(e.Err)
				}
			}
		}
		_ = s.Close()
		_ = sink.Close()
		_ = st.Close()
		_ = client.Close()
		if n != 3*perPartition {
			b.Fatalf("read %d records, want %d", n, 3*perPartition)
		}
	}
	b.ReportMetric(float64(3*perPartition*b.N)/b.Elapsed().Seconds(), "records/s")
}

func benchStore(st *offsets.Store) Store {
	if os.Getenv("NOSTORE") != "" {
		return nil
	}
	return st
}

func benchSink(s *FileSink) Processor {
	if os.Getenv("NOSINK") != "" {
		return nil
	}
	return s
}
