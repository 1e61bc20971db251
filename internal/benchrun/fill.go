package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fill creates a topic of parts partitions and produces n records of size
// bytes round-robin over them, as a producer with default batching would
// (batches up to 1 MiB, snappy). Values are JSON-looking text with a
// random part, so they compress about as much as real payloads do, not
// tenfold as a repeated pattern would (which would make every batch tens
// of thousands of records).
func fill(seeds []string, prefix string, n, size int, parts int32) (string, error) {
	return fillShape(seeds, prefix, n, parts, textShape(size, false))
}

// codecs are the producer codecs of a shape's codec name ("" is snappy).
var codecs = map[string]kgo.CompressionCodec{
	"": kgo.SnappyCompression(), "none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

// fillShape creates a topic of parts partitions and produces n records of
// shape s round-robin over them (all on partition 0 when s.hot).
func fillShape(seeds []string, prefix string, n int, parts int32, s shape) (string, error) {
	linger, batchMax := 5*time.Millisecond, int32(1<<20)
	if s.linger != 0 {
		linger = max(0, s.linger)
	}
	if s.batchMax != 0 {
		batchMax = s.batchMax
	}
	codec, ok := codecs[s.codec]
	if !ok {
		return "", fmt.Errorf("shape %s: unknown codec %q", s.name, s.codec)
	}
	partitioner := kgo.RoundRobinPartitioner()
	if s.hot {
		partitioner = kgo.ManualPartitioner()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ProducerLinger(linger),
		kgo.RecordPartitioner(partitioner), kgo.ProducerBatchMaxBytes(batchMax),
		kgo.ProducerBatchCompression(codec), kgo.MaxBufferedRecords(100_000), kgo.MaxBufferedBytes(64<<20))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	ctx := context.Background()
	topic := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	var configs map[string]*string
	if batchMax > 1<<20 {
		v := strconv.Itoa(int(batchMax))
		configs = map[string]*string{"max.message.bytes": &v}
	}
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, parts, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return "", fmt.Errorf("create topic %s: %w", topic, err)
	}
	if err := waitLeaders(ctx, kadm.NewClient(cl), topic, parts); err != nil {
		return "", err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	errs := make(chan error, 1)
	for i := 0; i < n; i++ {
		r := s.record(rng, i)
		r.Topic = topic
		r.Partition = 0 // used by the manual partitioner only
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return "", err
	}
	select {
	case err := <-errs:
		return "", err
	default:
	}
	fmt.Fprintf(os.Stderr, "produced %d records (%s) on %d partitions of %s in %.1fs\n", n, s.title, parts, topic, time.Since(start).Seconds())
	return topic, nil
}

const hexDigits = "0123456789abcdef"

// value is a record value of exactly size bytes (at least 40):
// {"seq":N,"payload":"<random hex>"} padded with spaces.
func valueFor(rng *rand.Rand, seq, size int, repetitive bool) []byte {
	if !repetitive {
		return value(rng, seq, size)
	}
	v := make([]byte, 0, size)
	v = append(v, `{"seq":`...)
	v = strconv.AppendInt(v, int64(seq), 10)
	v = append(v, `,"payload":"`...)
	for len(v) < size-2 {
		v = append(v, "status=ok;region=eu-west-1;"...)
	}
	v = append(v[:size-2], `"}`...)
	return v
}

func value(rng *rand.Rand, seq, size int) []byte {
	v := make([]byte, 0, size)
	v = append(v, `{"seq":`...)
	v = strconv.AppendInt(v, int64(seq), 10)
	v = append(v, `,"payload":"`...)
	for len(v) < size-2 {
		v = append(v, hexDigits[rng.IntN(16)])
	}
	v = append(v, `"}`...)
	return v[:max(size, len(v))]
}

// waitLeaders waits until every partition of topic has a leader.
func waitLeaders(ctx context.Context, adm *kadm.Client, topic string, parts int32) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && int32(len(td.Partitions)) == parts {
				ready := true
				for _, p := range td.Partitions {
					ready = ready && p.Leader >= 0
				}
				if ready {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s: partitions without a leader after 30s (%v)", topic, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// deleteTopics deletes the run's topics from a cluster it was given.
func deleteTopics(seeds []string, topics *[]string) {
	if len(*topics) == 0 {
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).DeleteTopics(ctx, *topics...); err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: deleting topics %v: %v\n", *topics, err)
	}
}
