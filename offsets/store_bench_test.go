package offsets

import (
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
		if err := s.Plan("events", testBatch(id, 1000, int64(i)*10)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.Ack("events", id, testNow); err != nil {
			b.Fatal(err)
		}
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
		if err := s.Plan("events", batch); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Ack("events", id, testNow); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
