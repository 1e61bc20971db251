// Package testkafka gives tests a Kafka cluster: an in-process kfake cluster
// by default, or the real cluster named by KBATCH_TEST_BROKERS. The same
// tests run against both; helpers here create uniquely named topics so runs
// against a shared real broker never collide.
//
// It uses franz-go (kgo/kadm) for set-up only, so that kbatch's own sarama
// code is checked by a client it did not write.
package testkafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EnvBrokers is the variable that points the tests at a real cluster.
const EnvBrokers = "KBATCH_TEST_BROKERS"

// Real reports whether tests run against a real cluster.
func Real() bool { return os.Getenv(EnvBrokers) != "" }

// Cluster is a cluster for one test: its bootstrap brokers and, for kfake,
// the fake itself (nil against a real cluster).
type Cluster struct {
	Brokers []string
	Fake    *kfake.Cluster
	t       testing.TB
	admin   *kadm.Client
	client  *kgo.Client
}

// New returns a cluster for t; a kfake cluster is closed at cleanup.
func New(t testing.TB) *Cluster {
	t.Helper()
	return NewBrokers(t, 1)
}

// NewBrokers is New with a kfake cluster of n brokers (a real cluster is
// what it is); tests move partitions' leaders with Fake.MoveTopicPartition.
func NewBrokers(t testing.TB, n int) *Cluster {
	t.Helper()
	return NewWith(t, kfake.NumBrokers(n))
}

// NewWith is New with a kfake cluster made with opts (e.g. kfake.ListenFn
// to put faults on its connections); a real cluster is what it is.
func NewWith(t testing.TB, opts ...kfake.Opt) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	if env := os.Getenv(EnvBrokers); env != "" {
		c.Brokers = strings.Split(env, ",")
	} else {
		fake, err := kfake.NewCluster(opts...)
		if err != nil {
			t.Fatalf("kfake: %v", err)
		}
		t.Cleanup(fake.Close)
		c.Fake = fake
		c.Brokers = fake.ListenAddrs()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...),
		kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(1<<20),
	)
	if err != nil {
		t.Fatalf("kgo client: %v", err)
	}
	t.Cleanup(cl.Close)
	c.client = cl
	c.admin = kadm.NewClient(cl)
	return c
}

// Client is the set-up client (franz-go), for tests that need more than
// the helpers here.
func (c *Cluster) Client() *kgo.Client { return c.client }

// Admin is the set-up admin client.
func (c *Cluster) Admin() *kadm.Client { return c.admin }

func ctx(t testing.TB) context.Context {
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return cx
}

// Topic creates a topic with a unique name starting with prefix and waits
// until its metadata is visible.
func (c *Cluster) Topic(prefix string, partitions int32) string {
	c.t.Helper()
	return c.TopicWith(prefix, partitions, nil)
}

// TopicWith is Topic with topic settings (cleanup.policy, retention.ms…).
func (c *Cluster) TopicWith(prefix string, partitions int32, configs map[string]*string) string {
	c.t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := prefix + "-" + hex.EncodeToString(b[:])
	resp, err := c.admin.CreateTopic(ctx(c.t), partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.t.Fatalf("create topic %s: %v", name, err)
	}
	c.t.Cleanup(func() {
		if Real() {
			cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = c.admin.DeleteTopics(cx, name)
		}
	})
	c.waitPartitions(name, partitions)
	return name
}

func (c *Cluster) waitPartitions(topic string, n int32) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		md, err := c.admin.Metadata(ctx(c.t), topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && int32(len(td.Partitions)) == n {
				ok := true
				for _, p := range td.Partitions {
					if p.Leader < 0 {
						ok = false
					}
				}
				if ok {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("topic %s did not get %d partitions with leaders in 30s (last error %v)", topic, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AddPartitions grows topic to total partitions.
func (c *Cluster) AddPartitions(topic string, total int32) {
	c.t.Helper()
	resp, err := c.admin.UpdatePartitions(ctx(c.t), int(total), topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		c.t.Fatalf("add partitions to %s: %v", topic, err)
	}
	c.waitPartitions(topic, total)
}

// Record is a record to produce; Partition is honoured exactly.
type Record = kgo.Record

// Produce writes records synchronously and returns their offsets in order.
func (c *Cluster) Produce(recs ...*kgo.Record) []int64 {
	c.t.Helper()
	res := c.client.ProduceSync(ctx(c.t), recs...)
	if err := res.FirstErr(); err != nil {
		c.t.Fatalf("produce: %v", err)
	}
	out := make([]int64, len(res))
	for i, r := range res {
		out[i] = r.Record.Offset
	}
	return out
}

// ProduceN writes n records of the given value size to one partition, with
// keys "k<i>" and JSON-ish values, and returns the offset after the last.
func (c *Cluster) ProduceN(topic string, partition int32, n int, size int) int64 {
	c.t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := make([]byte, size)
		copy(v, []byte(`{"seq":`+itoa(i)+`}`))
		for j := len(`{"seq":` + itoa(i) + `}`); j < size; j++ {
			v[j] = ' '
		}
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Key: []byte("k" + itoa(i)), Value: v}
	}
	offs := c.Produce(recs...)
	if len(offs) == 0 {
		return c.End(topic, partition)
	}
	return offs[len(offs)-1] + 1
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	neg := i < 0
	if neg {
		i = -i
	}
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

// End returns a partition's high watermark.
func (c *Cluster) End(topic string, partition int32) int64 {
	c.t.Helper()
	return c.listed("end", c.admin.ListEndOffsets, topic, partition)
}

// Start returns a partition's log start offset.
func (c *Cluster) Start(topic string, partition int32) int64 {
	c.t.Helper()
	return c.listed("start", c.admin.ListStartOffsets, topic, partition)
}

// listed is the offset list gives for a partition; what names it in a
// failure.
func (c *Cluster) listed(what string, list func(context.Context, ...string) (kadm.ListedOffsets, error), topic string, partition int32) int64 {
	c.t.Helper()
	offs, err := list(ctx(c.t), topic)
	if err != nil {
		c.t.Fatalf("list %s offsets: %v", what, err)
	}
	o, ok := offs.Lookup(topic, partition)
	if !ok || o.Err != nil {
		c.t.Fatalf("%s offset of %s[%d]: %v", what, topic, partition, o.Err)
	}
	return o.Offset
}

// DeleteRecords moves a partition's log start to before (retention by hand).
func (c *Cluster) DeleteRecords(topic string, partition int32, before int64) {
	c.t.Helper()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: topic, Partition: partition, At: before})
	resp, err := c.admin.DeleteRecords(ctx(c.t), os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		c.t.Fatalf("delete records %s[%d] before %d: %v", topic, partition, before, err)
	}
}

// Recreate deletes topic and creates it again with partitions partitions,
// and waits until the broker serves the new topic under its new id: a
// real broker applies the controller's metadata a moment later, and a
// produce in between goes to the old log (or is refused). The answers
// come from a client of their own, which caches no metadata.
func (c *Cluster) Recreate(topic string, partitions int32) {
	c.t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idNow := func() (kadm.TopicID, bool) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...))
		if err != nil {
			c.t.Fatal(err)
		}
		defer cl.Close()
		md, err := kadm.NewClient(cl).Metadata(cx, topic)
		if err != nil {
			return kadm.TopicID{}, false
		}
		td, ok := md.Topics[topic]
		served := ok && td.Err == nil && len(td.Partitions) == int(partitions)
		for _, p := range td.Partitions {
			served = served && p.Err == nil && p.Leader >= 0
		}
		return td.ID, served
	}
	old, _ := idNow()
	if _, err := c.admin.DeleteTopics(cx, topic); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := c.admin.CreateTopic(cx, partitions, 1, nil, topic)
		if err == nil && resp.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("create %s again: %v %v", topic, err, resp.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		if id, served := idNow(); served && id != old {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s, created again, is not served by the broker", topic)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.client.PurgeTopicsFromClient(topic)
}

// FetchMaxVersion is the highest Fetch version the cluster's first broker
// serves (ApiVersions): tests of what a version brings skip below it.
func (c *Cluster) FetchMaxVersion() int16 {
	c.t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx(c.t), c.client)
	if err != nil {
		c.t.Fatalf("api versions: %v", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == kmsg.Fetch.Int16() {
			return k.MaxVersion
		}
	}
	return -1
}

// TopicID is topic's id as the cluster gives it now: a Fetch v13 request
// names the topic by it only, so a test that looks at fetches matches
// either.
func (c *Cluster) TopicID(topic string) [16]byte {
	c.t.Helper()
	md, err := c.admin.Metadata(ctx(c.t), topic)
	if err != nil {
		c.t.Fatalf("metadata of %s: %v", topic, err)
	}
	return md.Topics[topic].ID
}

// LiveMember starts a consumer (franz-go; the classic group protocol
// unless opts say otherwise, kgo.ServerSideBalancer for Kafka 4's) in
// group on topic and waits until the group is Stable with it; the member
// leaves at cleanup, or when the returned func is called.
func (c *Cluster) LiveMember(group, topic string, opts ...kgo.Opt) (leave func()) {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Brokers...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ClientID("live-member")}, opts...)...)
	if err != nil {
		c.t.Fatalf("group member: %v", err)
	}
	pollCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pollCtx.Err() == nil {
			cl.PollFetches(pollCtx)
		}
	}()
	var once bool
	leave = func() {
		if once {
			return
		}
		once = true
		stop()
		<-done
		cl.Close()
	}
	c.t.Cleanup(leave)
	cx := ctx(c.t)
	for {
		ds, err := c.admin.DescribeGroups(cx, group)
		if err == nil {
			// Stable: a classic group then lists the member; one of
			// Kafka 4's protocol is Stable with no classic members.
			if d, ok := ds[group]; ok && d.State == "Stable" {
				return leave
			}
		}
		select {
		case <-cx.Done():
			c.t.Fatalf("group %s: no Stable member after 30s (%v)", group, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RecordAt reads the record at offset of topic's partition with franz-go;
// the test fails when none is there within 30s.
func (c *Cluster) RecordAt(topic string, partition int32, offset int64) *kgo.Record {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(offset)}}))
	if err != nil {
		c.t.Fatalf("kgo client: %v", err)
	}
	defer cl.Close()
	cx := ctx(c.t)
	for {
		fs := cl.PollFetches(cx)
		if err := cx.Err(); err != nil {
			c.t.Fatalf("no record at %s[%d]@%d: %v", topic, partition, offset, err)
		}
		for _, r := range fs.Records() {
			if r.Offset == offset {
				return r
			}
		}
	}
}
