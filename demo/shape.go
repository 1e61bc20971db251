package demo

import (
	"math/rand/v2"
	"time"
)

// tick is the generator's period: each tick it writes the records due
// since the previous one, so a quiet demo wakes ten times a second and
// never spins.
const tick = 100 * time.Millisecond

// The traffic is a chain of phases: steady, then either a burst or an idle
// gap, then steady again. Durations are whole ticks drawn uniformly from
// [min, max]; multipliers are relative to the mean rate.
const (
	steadyMin, steadyMax = 80, 240 // ticks: 8-24 s
	burstMin, burstMax   = 10, 30  // ticks: 1-3 s
	idleMin, idleMax     = 20, 50  // ticks: 2-5 s
	burstLo, burstHi     = 5.0, 10.0
	burstChance          = 0.5 // after a steady phase; otherwise idle
	steadyJitter         = 0.25

	meanSteady = (steadyMin + steadyMax) / 2.0
	meanBurst  = (burstMin + burstMax) / 2.0
	meanIdle   = (idleMin + idleMax) / 2.0
	meanCycle  = meanSteady + burstChance*meanBurst + (1-burstChance)*meanIdle

	// steadyLevel is the steady phase's mean multiplier, chosen so that the
	// long-run mean is exactly the configured rate: the bursts' surplus is
	// taken out of the steady phases. With the values above it is about 0.7.
	steadyLevel = (meanCycle - burstChance*meanBurst*(burstLo+burstHi)/2) / meanSteady
)

// shape decides how many records each tick writes. Its draws come from the
// generator's source, so the sequence of counts is reproducible too. It is
// not safe for concurrent use.
type shape struct {
	rng      *rand.Rand
	perTick  float64 // mean records per tick at multiplier 1
	mult     float64 // current phase's multiplier
	left     int     // ticks left in the current phase
	inSteady bool
}

func newShape(rng *rand.Rand, rate int) *shape {
	s := &shape{rng: rng, perTick: float64(rate) * tick.Seconds()}
	s.steady()
	return s
}

// next returns the number of records for the next tick: the phase's mean,
// jittered by up to ±50% and rounded at random, so the mean is kept.
func (s *shape) next() int {
	for s.left == 0 {
		switch {
		case !s.inSteady:
			s.steady()
		case s.rng.Float64() < burstChance:
			s.inSteady, s.left = false, s.ticks(burstMin, burstMax)
			s.mult = burstLo + (burstHi-burstLo)*s.rng.Float64()
		default:
			s.inSteady, s.left, s.mult = false, s.ticks(idleMin, idleMax), 0
		}
	}
	s.left--
	if s.mult == 0 {
		return 0
	}
	mean := s.perTick * s.mult * (0.5 + s.rng.Float64())
	n := int(mean)
	if s.rng.Float64() < mean-float64(n) {
		n++
	}
	return n
}

func (s *shape) steady() {
	s.inSteady, s.left = true, s.ticks(steadyMin, steadyMax)
	s.mult = steadyLevel * (1 - steadyJitter + 2*steadyJitter*s.rng.Float64())
}

func (s *shape) ticks(lo, hi int) int { return lo + s.rng.IntN(hi-lo+1) }
