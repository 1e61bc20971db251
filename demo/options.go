package demo

import "fmt"

// Defaults and limits for Options.
const (
	DefaultBrokers = 3
	DefaultRate    = 300
	DefaultBacklog = 1500
	// MinBacklog is the smallest Backlog Start accepts: the consumer's demo
	// and tests rely on at least this many records per "events" partition.
	MinBacklog = 1000
)

// Options configures Start. The zero value is a usable demo.
type Options struct {
	// Brokers is the number of brokers in the cluster; 0 means
	// DefaultBrokers.
	Brokers int

	// Rate is the generator's long-run mean, in records per second across
	// both topics; 0 means DefaultRate. Bursts run at 5-10 times Rate.
	Rate int

	// Seed seeds the records and the traffic shape; 0 seeds from the clock.
	// Two demos with the same nonzero Seed write the same records in the
	// same order; only timestamps differ.
	Seed int64

	// Backlog is how many records each "events" partition holds, at least,
	// when Start returns; 0 means DefaultBacklog, below MinBacklog is an
	// error. "sensor-data" gets a backlog of the same length in time.
	Backlog int

	// Logf receives diagnostics (broker and producer errors); nil discards
	// them. Calls are serialized by the demo but may come from any
	// goroutine, and may continue until Close returns.
	Logf func(format string, args ...any)
}

// withDefaults returns o with zero fields defaulted, or an error naming the
// first field out of range.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Brokers < 0:
		return o, fmt.Errorf("demo: %d brokers: need at least 1 (0 means %d)", o.Brokers, DefaultBrokers)
	case o.Rate < 0:
		return o, fmt.Errorf("demo: rate %d records/s is negative (0 means %d)", o.Rate, DefaultRate)
	case o.Backlog < 0 || (o.Backlog > 0 && o.Backlog < MinBacklog):
		return o, fmt.Errorf("demo: backlog %d is below the minimum %d records per partition (0 means %d)", o.Backlog, MinBacklog, DefaultBacklog)
	}
	if o.Brokers == 0 {
		o.Brokers = DefaultBrokers
	}
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	if o.Backlog == 0 {
		o.Backlog = DefaultBacklog
	}
	return o, nil
}
