package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/schema"
)

// startDemo starts a demo for t and closes it at cleanup.
func startDemo(t *testing.T, ctx context.Context, o Options) *Demo {
	t.Helper()
	d, err := Start(ctx, o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}

// admin returns an admin client on d's brokers, closed at cleanup.
func admin(t *testing.T, d *Demo) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Brokers()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, what)
		}
		<-poll.C
	}
}

func endOffsets(t *testing.T, ctx context.Context, adm *kadm.Client) map[string]map[int32]int64 {
	t.Helper()
	listed, err := adm.ListEndOffsets(ctx, Topics()...)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatalf("end offsets: %v", err)
	}
	ends := map[string]map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if ends[o.Topic] == nil {
			ends[o.Topic] = map[int32]int64{}
		}
		ends[o.Topic][o.Partition] = o.Offset
	})
	return ends
}

func sum(m map[string]map[int32]int64) (n int64) {
	for _, ps := range m {
		for _, o := range ps {
			n += o
		}
	}
	return n
}

func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const backlog = MinBacklog
	d := startDemo(t, ctx, Options{Seed: 1, Backlog: backlog, Rate: 500})
	adm := admin(t, d)
	ends := endOffsets(t, ctx, adm) // as soon as Start returned

	t.Run("topics", func(t *testing.T) {
		details, err := adm.ListTopics(ctx, Topics()...)
		if err != nil {
			t.Fatal(err)
		}
		for topic, want := range map[string]int{EventsTopic: 2, SensorTopic: 3, OrdersTopic: 2} {
			td, ok := details[topic]
			if !ok || td.Err != nil || len(td.Partitions) != want {
				t.Errorf("%s: present %v, err %v, %d partitions, want %d", topic, ok, td.Err, len(td.Partitions), want)
			}
		}
	})

	t.Run("backlog", func(t *testing.T) {
		for p := range int32(eventsPartitions) {
			if ends[EventsTopic][p] < backlog {
				t.Errorf("events/%d holds %d records when Start returned, want >= %d", p, ends[EventsTopic][p], backlog)
			}
		}
		for p := range int32(sensorPartitions) {
			if ends[SensorTopic][p] == 0 {
				t.Errorf("sensor-data/%d is empty when Start returned", p)
			}
		}
		if n := ends[OrdersTopic][0] + ends[OrdersTopic][1]; n < ordersBacklog {
			t.Errorf("orders hold %d records when Start returned, want >= %d", n, ordersBacklog)
		}
		if got := d.Produced(); got < sum(ends) {
			t.Errorf("Produced() = %d, below the %d records in the topics", got, sum(ends))
		}
	})

	t.Run("loopback only", func(t *testing.T) {
		if len(d.Brokers()) != DefaultBrokers {
			t.Errorf("Brokers() = %v, want %d addresses", d.Brokers(), DefaultBrokers)
		}
		for _, a := range d.Brokers() {
			if host, _, err := net.SplitHostPort(a); err != nil || host != "127.0.0.1" {
				t.Errorf("bootstrap address %q is not on 127.0.0.1", a)
			}
		}
		meta, err := adm.BrokerMetadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range meta.Brokers {
			if b.Host != "127.0.0.1" {
				t.Errorf("broker %d advertises %s:%d", b.NodeID, b.Host, b.Port)
			}
		}
	})

	t.Run("keeps producing", func(t *testing.T) {
		p0, e0 := d.Produced(), sum(ends)
		eventually(t, 20*time.Second, "Produced and end offsets did not grow", func() bool {
			return d.Produced() > p0+100 && sum(endOffsets(t, ctx, adm)) > e0+100
		})
	})

	t.Run("records", func(t *testing.T) {
		var odd struct{ nullKey, binary, hostile int }
		dec, err := schema.New(schema.Options{RegistryURL: d.RegistryURL()})
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		orders := 0
		readUntil(t, ctx, d, ends, func(r *kgo.Record) {
			if r.Timestamp.After(time.Now()) || r.Timestamp.Before(time.Now().Add(-backlogSpan-time.Minute)) {
				t.Fatalf("%s/%d@%d: timestamp %v", r.Topic, r.Partition, r.Offset, r.Timestamp)
			}
			switch {
			case r.Topic == OrdersTopic:
				orders++
				res := dec.Decode(r.Topic, false, r.Value)
				if res.Status != schema.Decoded || res.Subject != OrdersSubject || !strings.HasPrefix(res.JSON, `{"order_id":"o-`) {
					t.Fatalf("orders/%d@%d: %+v", r.Partition, r.Offset, res)
				}
			case r.Topic == EventsTopic:
				checkEvent(t, r)
			case r.Key == nil:
				odd.nullKey++
			case !utf8.Valid(r.Value):
				odd.binary++
			case bytes.ContainsRune(r.Value, 0x1b):
				odd.hostile++
			case !json.Valid(r.Value):
				t.Fatalf("sensor-data/%d@%d: value is not JSON: %q", r.Partition, r.Offset, r.Value)
			}
		})
		if orders < ordersBacklog {
			t.Errorf("%d orders decoded, want >= %d", orders, ordersBacklog)
		}
		if odd.nullKey == 0 || odd.binary == 0 || odd.hostile == 0 {
			t.Errorf("backlog odd records: %+v, want each kind", odd)
		}
	})
}

// readUntil reads every partition of both topics from offset 0 up to
// until, calling check on each record in offset order.
func readUntil(t *testing.T, ctx context.Context, d *Demo, until map[string]map[int32]int64, check func(*kgo.Record)) {
	t.Helper()
	start := map[string]map[int32]kgo.Offset{}
	left := 0
	for topic, ps := range until {
		start[topic] = map[int32]kgo.Offset{}
		for p := range ps {
			start[topic][p] = kgo.NewOffset().AtStart()
			left++
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Brokers()...), kgo.ConsumePartitions(start))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	last := map[string]map[int32]time.Time{EventsTopic: {}, SensorTopic: {}, OrdersTopic: {}}
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading back: %v (%d partitions unfinished)", err, left)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			end := until[r.Topic][r.Partition]
			if r.Offset >= end {
				return
			}
			if r.Timestamp.Before(last[r.Topic][r.Partition]) {
				t.Fatalf("%s/%d@%d: timestamp goes backwards", r.Topic, r.Partition, r.Offset)
			}
			last[r.Topic][r.Partition] = r.Timestamp
			check(r)
			if r.Offset == end-1 {
				left--
			}
		})
	}
}

func TestCloseStopsEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := startDemo(t, ctx, Options{Brokers: 2, Backlog: MinBacklog})
	eventually(t, 10*time.Second, "no live records", func() bool { return d.Produced() > 0 })

	var wg sync.WaitGroup
	for range 3 {
		wg.Go(d.Close)
	}
	wg.Wait()
	d.Close()

	select {
	case <-d.done:
	default:
		t.Fatal("generator still running after Close")
	}
	produced := d.Produced()
	for _, a := range d.Brokers() {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Close", a)
		}
	}
	if d.Produced() != produced {
		t.Errorf("Produced moved after Close: %d -> %d", produced, d.Produced())
	}
}

func TestContextEndStopsGenerator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	genCtx, stop := context.WithCancel(ctx)
	d := startDemo(t, genCtx, Options{Brokers: 1, Backlog: MinBacklog})
	stop()
	select {
	case <-d.done:
	case <-ctx.Done():
		t.Fatal("generator did not stop when its context ended")
	}
	// The cluster stays up until Close.
	c, err := net.DialTimeout("tcp", d.Brokers()[0], time.Second)
	if err != nil {
		t.Fatalf("cluster down before Close: %v", err)
	}
	c.Close()
}

func TestStartFailsCleanly(t *testing.T) {
	if _, err := Start(context.Background(), Options{Backlog: 10}); err == nil {
		t.Fatal("Start accepted a backlog of 10")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, err := Start(ctx, Options{Brokers: 1}); err == nil {
		d.Close()
		t.Fatal("Start with an ended context succeeded")
	}
}
