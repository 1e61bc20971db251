package offsets

import (
	"os"
	"path/filepath"
	"testing"
)

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "offsets.db"), OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	mustEnsure(b, s, "events")
	return s
}

// BenchmarkAck1000Partitions times Ack alone (one transaction, fsync
// included) of a batch with 1000 ranges; Plan runs with the timer stopped.
func BenchmarkAck1000Partitions(b *testing.B) {
	s := benchStore(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		id := uint64(i + 1)
		b.StopTimer()
		must(b, s.Plan("events", testBatch(id, 1000, int64(i)*10)))
		b.StartTimer()
		must(b, s.Ack("events", id, testNow))
	}
}

// BenchmarkPlan1000Partitions times the write-ahead Plan of a batch with
// 1000 ranges; Ack runs with the timer stopped.
func BenchmarkPlan1000Partitions(b *testing.B) {
	s := benchStore(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		id := uint64(i + 1)
		batch := testBatch(id, 1000, int64(i)*10)
		must(b, s.Plan("events", batch))
		b.StopTimer()
		must(b, s.Ack("events", id, testNow))
		b.StartTimer()
	}
}

// fullStore is a store at the caps of one stream of 1000 partitions: 200
// batches of 1000 ranges (maxRanges) and 10,000 events, about the largest
// a stream's logs grow.
func fullStore(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "offsets.db")
	s := mustOpen(b, path)
	mustEnsure(b, s, "events")
	for id := uint64(1); id <= maxRanges/1000; id++ {
		must(b, s.Plan("events", testBatch(id, 1000, int64(id)*10)))
		must(b, s.Ack("events", id, testNow))
	}
	for i := range maxEvents {
		must(b, s.AddEvent("events", Event{Time: testNow, Code: "seek", Topic: "events", Partition: int32(i % 1000), Message: "a seek of some length, as events have"}))
	}
	must(b, s.Close())
	return path
}

// BenchmarkOpenFullStore times opening the fullStore read-only (what
// offsets show pays) and writable (what watch pays: the same plus verify,
// which reads every page and value before writing).
func BenchmarkOpenFullStore(b *testing.B) {
	path := fullStore(b)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		name := "writable"
		if ro {
			name = "read-only"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := Open(path, OpenOptions{ReadOnly: ro})
				if err != nil {
					b.Fatal(err)
				}
				must(b, s.Close())
			}
			b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
		})
	}
}

// BenchmarkSetStarts10k times the first write of a stream of 10,000
// partitions (what watch does at start on a wide topic): one
// transaction putting 10,000 next offsets into an empty bucket.
func BenchmarkSetStarts10k(b *testing.B) {
	next := make(map[Partition]int64, 10_000)
	for i := range 10_000 {
		next[Partition{Topic: "events", Partition: int32(i)}] = int64(i)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := Open(filepath.Join(b.TempDir(), "offsets.db"), OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		mustEnsure(b, s, "events")
		b.StartTimer()
		must(b, s.SetStarts("events", next, nil, Event{}))
		b.StopTimer()
		_ = s.Close()
		b.StartTimer()
	}
}
