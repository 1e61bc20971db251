package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
)

// loopMain is a bare consumer that reads every partition of a topic from
// the earliest offset to the high watermark it had at start, counting
// records: "loop sarama|kgo BROKERS TOPIC". It prints "done N" on stdout
// as soon as it has every record, before closing its client, so its time
// compares with kbatch's last acked batch.
func loopMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: benchrun loop sarama|kgo BROKERS TOPIC")
		return 2
	}
	brokers := strings.Split(args[1], ",")
	var n int64
	var err error
	switch args[0] {
	case "sarama":
		n, err = saramaLoop(brokers, args[2])
	case "kgo":
		n, err = kgoLoop(brokers, args[2])
	default:
		err = fmt.Errorf("unknown loop %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "%d records\n", n)
	return 0
}

// done reports that the loop has every record.
func done(n int64) {
	fmt.Printf("done %d\n", n)
	_ = os.Stdout.Sync()
}

func saramaLoop(brokers []string, topic string) (int64, error) {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.Consumer.Return.Errors = true
	conf.Consumer.Fetch.Default = 4 << 20
	conf.ChannelBufferSize = 1024
	client, err := sarama.NewClient(brokers, conf)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return 0, err
	}
	defer consumer.Close()
	parts, err := client.Partitions(topic)
	if err != nil {
		return 0, err
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, len(parts))
	for _, p := range parts {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return 0, err
		}
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pc.AsyncClose()
			if end == 0 {
				return
			}
			var n int64
			for {
				select {
				case m := <-pc.Messages():
					n++
					if m.Offset+1 >= end {
						total.Add(n)
						return
					}
				case err := <-pc.Errors():
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	done(total.Load())
	return total.Load(), nil
}

func kgoLoop(brokers []string, topic string) (int64, error) {
	ctx := context.Background()
	probe, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return 0, err
	}
	ends := map[int32]int64{}
	adm := newAdmin(probe)
	endOffsets, err := adm.ListEndOffsets(ctx, topic)
	probe.Close()
	if err != nil {
		return 0, err
	}
	endOffsets.Each(func(o listedOffset) {
		if o.Offset > 0 {
			ends[o.Partition] = o.Offset
		}
	})
	assign := map[int32]kgo.Offset{}
	for p := range ends {
		assign[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}),
		kgo.FetchMaxBytes(16<<20))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var n int64
	defer func() { done(n) }()
	deadline := time.Now().Add(10 * time.Minute)
	for len(ends) > 0 && time.Now().Before(deadline) {
		fs := cl.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			return n, errs[0].Err
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if end, ok := ends[r.Partition]; ok && r.Offset+1 >= end {
				delete(ends, r.Partition)
			}
		})
	}
	return n, nil
}
