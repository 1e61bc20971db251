package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// Demo is a running embedded cluster with its traffic generator. Its
// methods are safe for concurrent use.
type Demo struct {
	cluster  *kfake.Cluster
	registry *srfake.Registry
	brokers  []string
	log      *logger
	produced atomic.Int64

	stop      context.CancelFunc
	done      chan struct{} // closed when the generator has stopped
	closeOnce sync.Once
}

// Start starts a cluster of o.Brokers brokers on 127.0.0.1 (random ports)
// and a schema registry (also on 127.0.0.1), creates "events" (2
// partitions), "sensor-data" (3 partitions) and "orders" (2 partitions),
// writes the backlog and returns once the broker has acknowledged it, with
// the generator running in a goroutine until ctx is done or Close is called.
//
// ctx bounds the start-up too: if it ends first, Start returns its error
// and leaves nothing running. The cluster outlives ctx; only Close stops it,
// so a caller must Close a Demo that Start returned.
func Start(ctx context.Context, o Options) (*Demo, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	seed := o.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	d := &Demo{log: newLogger(o.Logf), done: make(chan struct{})}

	kopts := []kfake.Opt{
		kfake.NumBrokers(o.Brokers),
		kfake.BrokerConfigs(map[string]string{"log.cleaner.backoff.ms": strconv.Itoa(cleanerBackoffMs)}),
	}
	if d.log != nil {
		kopts = append(kopts, kfake.WithLogger(kfakeLogger{d.log}))
	}
	if d.cluster, err = kfake.NewCluster(kopts...); err != nil {
		return nil, fmt.Errorf("demo: start embedded broker: %w", err)
	}
	d.brokers = d.cluster.ListenAddrs()
	d.registry = srfake.New()
	g := newGenerator(seed)
	ord, err := newOrders(seed, d.registry)
	var cl *kgo.Client
	if err == nil {
		cl, err = d.setUp(ctx, g, ord, o.Backlog)
	}
	if err != nil {
		d.registry.Close()
		d.cluster.Close()
		return nil, err
	}

	genCtx, stop := context.WithCancel(ctx)
	d.stop = stop
	go d.generate(genCtx, cl, g, ord, o.Rate)
	return d, nil
}

// setUp checks the listeners, creates the topics and writes the backlog
// with g. It returns the producer for the generator, or closes it on error.
func (d *Demo) setUp(ctx context.Context, g *generator, ord *orders, backlog int) (*kgo.Client, error) {
	for _, a := range d.brokers {
		if host, _, err := net.SplitHostPort(a); err != nil || host != "127.0.0.1" {
			return nil, fmt.Errorf("demo: broker listens on %s, want 127.0.0.1 only", a)
		}
	}
	copts := []kgo.Opt{
		kgo.SeedBrokers(d.brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(20 * time.Millisecond),
	}
	if d.log != nil {
		copts = append(copts, kgo.WithLogger(kgoLogger{d.log}))
	}
	cl, err := kgo.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("demo: producer: %w", err)
	}
	if err = createTopics(ctx, kadm.NewClient(cl)); err == nil {
		now := time.Now()
		if err = d.writeBacklog(ctx, cl, g, backlog, now); err == nil {
			err = d.writeOrders(ctx, cl, ord, now)
		}
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// Brokers returns the bootstrap addresses, host:port on 127.0.0.1. They
// stay the same for the Demo's life.
func (d *Demo) Brokers() []string { return slices.Clone(d.brokers) }

// RegistryURL returns the base URL of the schema registry that holds the
// schema of "orders" (http://127.0.0.1:PORT, Confluent's API).
func (d *Demo) RegistryURL() string { return d.registry.URL() }

// Produced returns how many records the broker has acknowledged so far,
// backlog included.
func (d *Demo) Produced() int64 { return d.produced.Load() }

// Close stops the generator, waits for it, then shuts the cluster down:
// its ports are closed when Close returns. Close is idempotent; concurrent
// calls all return once the first has finished.
func (d *Demo) Close() {
	d.closeOnce.Do(func() {
		d.stop()
		<-d.done
		d.cluster.Close()
		d.registry.Close()
	})
}

// generate writes the live traffic until ctx is done, then closes cl. Each
// tick's records are stamped evenly across the tick just past, never going
// backwards, and handed to the producer without waiting, so one tick's
// records share a batch.
func (d *Demo) generate(ctx context.Context, cl *kgo.Client, g *generator, ord *orders, rate int) {
	defer close(d.done)
	defer cl.Close()
	sh := newShape(g.rng, rate)
	t := time.NewTicker(tick)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			n := sh.next()
			for i := range n {
				ts := now.Add(-tick + tick*time.Duration(i+1)/time.Duration(n))
				if ts.Before(last) {
					ts = last
				}
				last = ts
				cl.Produce(ctx, g.next(ts), d.acked)
			}
			for range ord.live(n) {
				cl.Produce(ctx, ord.order(now), d.acked)
			}
		}
	}
}

// acked is the producer's promise for live records.
func (d *Demo) acked(_ *kgo.Record, err error) {
	switch {
	case err == nil:
		d.produced.Add(1)
	case errors.Is(err, context.Canceled), errors.Is(err, kgo.ErrClientClosed):
		// Shutting down.
	default:
		d.log.limited("demo: produce: %v", err)
	}
}
