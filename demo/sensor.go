package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// sensor is one simulated device; its value walks randomly within a
// plausible range and its battery drains.
type sensor struct {
	id, kind, unit, firmware string
	value, step, lo, hi      float64
	battery                  float64
}

// reading is the JSON value of a "sensor-data" record.
type reading struct {
	Sensor  string  `json:"sensor"`
	Kind    string  `json:"kind"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Battery float64 `json:"battery"`
	TS      string  `json:"ts"`
}

func newSensor(rng *rand.Rand, n int) sensor {
	s := sensor{
		id:       fmt.Sprintf("sensor-%03d", n),
		firmware: fmt.Sprintf("v2.%d.%d", rng.IntN(4), rng.IntN(10)),
		battery:  0.4 + 0.6*rng.Float64(),
	}
	switch n % 3 {
	case 0:
		s.kind, s.unit, s.lo, s.hi, s.step = "temperature", "C", -20, 60, 0.05
		s.value = 18 + 8*rng.Float64()
	case 1:
		s.kind, s.unit, s.lo, s.hi, s.step = "humidity", "%", 0, 100, 0.2
		s.value = 30 + 40*rng.Float64()
	default:
		s.kind, s.unit, s.lo, s.hi, s.step = "pressure", "hPa", 950, 1050, 0.1
		s.value = 1000 + 25*rng.Float64()
	}
	return s
}

// read advances the sensor by one reading and returns it.
func (s *sensor) read(rng *rand.Rand, ts time.Time) reading {
	s.value = min(s.hi, max(s.lo, s.value+s.step*rng.NormFloat64()))
	s.battery = max(0.05, s.battery-0.00002)
	return reading{
		Sensor:  s.id,
		Kind:    s.kind,
		Value:   cents(s.value),
		Unit:    s.unit,
		Battery: math.Round(s.battery*1000) / 1000,
		TS:      jsonTime(ts),
	}
}
