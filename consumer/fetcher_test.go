package consumer

import (
	"testing"

	"github.com/kbatch-dev/kbatch/kafka"
)

// Answers that expand in memory (compressible records) shrink the answer
// size asked for, so the read-ahead bounds memory, not only bytes on the
// wire; the expansion is learnt at once and forgotten slowly.
func TestAnswerSizeFollowsExpansion(t *testing.T) {
	f := &fetcher{}
	if got := f.answerSize(64 << 20); got != minAnswerBytes {
		t.Fatalf("before any answer: %d, want the smallest answer %d", got, minAnswerBytes)
	}
	f.observe(1<<20, 1<<20) // the records take their size on the wire
	if got := f.answerSize(64 << 20); got != maxAnswerBytes {
		t.Fatalf("after a plain answer: %d, want the cap %d", got, maxAnswerBytes)
	}
	if got := f.answerSize(1 << 20); got != 1<<20 {
		t.Fatalf("with 1 MiB of room: %d", got)
	}
	f.observe(1<<20, 20<<20) // 1 MiB on the wire took 20 MiB
	if got := f.answerSize(16 << 20); got != 16<<20/20 {
		t.Fatalf("after a twentyfold answer: %d, want %d", got, 16<<20/20)
	}
	f.observe(1<<20, 1<<20) // a plain one: the expansion decays
	if e := f.expansion.Load(); e != 1800 {
		t.Fatalf("expansion after a plain answer: %d, want 1800 (90%% of 2000)", e)
	}
	for range 100 {
		f.observe(1<<20, 1<<19)
	}
	if e := f.expansion.Load(); e != 100 {
		t.Fatalf("expansion never falls below 1: %d", e)
	}
	f.observe(1<<20, 1<<40)
	if e := f.expansion.Load(); e != 6400 {
		t.Fatalf("expansion is capped at 64: %d", e)
	}
	if got := f.answerSize(1 << 20); got != minAnswerBytes {
		t.Fatalf("a huge expansion still asks for %d, got %d", minAnswerBytes, got)
	}
	if got := f.answerSize(100); got != 100 {
		t.Fatalf("room below the minimum: %d, want the room", got)
	}
}

// The read-ahead counts what records take in memory,
// not their bytes alone: 10,000 records of one byte take 1.6 MB once
// decoded, and a reader whose read-ahead is 1 MiB is full with them.
func TestReadAheadCountsRecordsInMemory(t *testing.T) {
	f := &fetcher{}
	r := &reader{f: f, maxHeld: 1 << 30, maxHeldBytes: 1 << 20}
	if !r.hold(10000, 10000, 10000) {
		t.Fatal("hold refused on an open reader")
	}
	if _, room, held, _ := r.state(); room || held != 10000+10000*kafka.RecordOverhead {
		t.Fatalf("after 10,000 one-byte records: room %v, held %d; want no room, %d", room, held, 10000+10000*kafka.RecordOverhead)
	}
	r.release(10000, 10000)
	if _, room, held, _ := r.state(); !room || held != 0 {
		t.Fatalf("after their release: room %v, held %d; want room and nothing held", room, held)
	}
}
