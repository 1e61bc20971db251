package demo

import (
	"math/rand/v2"
	"testing"
)

func TestShapeMeanBurstsAndGaps(t *testing.T) {
	const rate, ticks = 300, 1_000_000 // about 28 hours of traffic
	s := newShape(rand.New(rand.NewPCG(1, 2)), rate)
	perTick := float64(rate) * tick.Seconds()
	var total, maxN, zeros, longestGap int
	for range ticks {
		n := s.next()
		total += n
		maxN = max(maxN, n)
		if n == 0 {
			zeros++
			longestGap = max(longestGap, zeros)
		} else {
			zeros = 0
		}
	}
	mean := float64(total) / ticks / tick.Seconds()
	if mean < rate*0.97 || mean > rate*1.03 {
		t.Errorf("mean rate = %.1f records/s, want %d ±3%%", mean, rate)
	}
	if float64(maxN) < burstLo*perTick {
		t.Errorf("busiest tick = %d records, want a burst of at least %.0f", maxN, burstLo*perTick)
	}
	if longestGap < idleMin {
		t.Errorf("longest gap = %d ticks, want an idle phase of at least %d", longestGap, idleMin)
	}
}

func TestShapeIsReproducible(t *testing.T) {
	a := newShape(rand.New(rand.NewPCG(7, 7)), 300)
	b := newShape(rand.New(rand.NewPCG(7, 7)), 300)
	for i := range 10_000 {
		if x, y := a.next(), b.next(); x != y {
			t.Fatalf("tick %d: %d vs %d records", i, x, y)
		}
	}
}
