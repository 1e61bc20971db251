package consumer

import (
	"fmt"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// benchLoop is a loop over n partitions with no broker behind it (no
// readers), for the cost of the loop's own work per event.
func benchLoop(n int) *loop {
	l := &loop{
		s:           &Stream{events: make(chan Event)},
		cfg:         Config{MaxPerPartition: 10_000, Samples: 5, Interval: time.Second},
		parts:       make(map[offsets.Partition]*partState, n),
		holding:     map[*partState]struct{}{},
		needReaders: map[*partState]struct{}{},
		jobs:        make(chan job, 1),
		nextID:      1,
	}
	for i := 0; i < n; i++ {
		p := offsets.Partition{Topic: "t", Partition: int32(i)}
		ps := &partState{p: p, stored: -1, target: -1, bounds: offsets.Bounds{HighWatermark: 1 << 40}}
		l.parts[p] = ps
		l.order = append(l.order, p)
		l.states = append(l.states, ps)
	}
	return l
}

// BenchmarkLoopProgress10k is one progress report of 10,000 partitions
// while a batch of 10,000 ranges is being processed and another waits
// for its ack: the TUI's partition pane gets one a second.
func BenchmarkLoopProgress10k(b *testing.B) {
	l := benchLoop(10_000)
	busy := &Batch{Batch: offsets.Batch{ID: 1}}
	for _, p := range l.order {
		busy.Ranges = append(busy.Ranges, offsets.BatchRange{Range: offsets.Range{Partition: p, From: 0, Until: 20}, Records: 20})
	}
	l.busy = busy
	l.processed = &Batch{Batch: offsets.Batch{ID: 2, Ranges: busy.Ranges}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.emitProgress(time.Now())
	}
}

// BenchmarkLoopTurn10k is one turn of the loop on 10,000 partitions in a
// live tail: an answer brings records of 20 partitions, a batch is cut
// from them, and a tick passes.
func BenchmarkLoopTurn10k(b *testing.B) {
	l := benchLoop(10_000)
	recs := make([]*record.Record, 5)
	for i := range recs {
		recs[i] = &record.Record{Value: make([]byte, 200)}
	}
	var off int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 20; j++ {
			ps := l.states[(i*20+j)%len(l.states)]
			msgs := make([]*record.Record, len(recs))
			for k := range msgs {
				m := *recs[k]
				m.Offset = ps.position() + int64(k)
				msgs[k] = &m
			}
			off += int64(len(msgs))
			if err := l.onChunk(chunk{p: ps.p, msgs: msgs, bytes: 1000, next: msgs[len(msgs)-1].Offset + 1}); err != nil {
				b.Fatal(err)
			}
		}
		if !l.catchUpReady() {
			_ = 0
		}
		bt, _ := l.cut(time.Now())
		if bt == nil || len(bt.Ranges) != 20 {
			b.Fatal(fmt.Sprintf("cut %v", bt))
		}
		_ = l.onTick(time.Now())
	}
	_ = off
}
