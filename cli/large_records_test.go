package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestReplayToTopicCopiesRecordsOfSeveralMiB: replay --to-topic copies
// records of 1 MiB or more between two topics that take 10 MiB. sarama's
// producer refuses more than 1 MB by default ("Attempt to produce message
// larger than configured Producer.MaxMessageBytes"); the producer takes
// what the target's max.message.bytes allows.
func TestReplayToTopicCopiesRecordsOfSeveralMiB(t *testing.T) {
	kc := testkafka.New(t)
	src, dst := "big-src", "big-dst"
	topicTaking(t, kc, src, 1, "10485760")
	topicTaking(t, kc, dst, 1, "10485760")
	produceSizes(t, kc, src, []byte("k"), 10, 3<<20, 20)
	_, stderr, code := runKbatch(t, "replay", "-b", strings.Join(kc.Brokers, ","), src+":0:earliest-latest", "--to-topic", dst)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := kc.End(dst, 0); n != 3 {
		t.Fatalf("%s has %d records, want 3: %s", dst, n, stderr)
	}
}

// TestReplayToTopicStopsAtARecordTooLarge: a record larger than the target
// takes stops the copy at that record, so the target holds the records
// before it and no hole (copying the next ones on would leave one: source
// offsets 0 and 3 copied, 1 and 2 refused).
func TestReplayToTopicStopsAtARecordTooLarge(t *testing.T) {
	kc := testkafka.New(t)
	src, dst := "stop-src", "stop-dst"
	topicTaking(t, kc, src, 1, "16777216")
	topicTaking(t, kc, dst, 1, "5242880")
	produceSizes(t, kc, src, nil, 3<<20, 6<<20, 100)
	_, stderr, code := runKbatch(t, "replay", "-b", strings.Join(kc.Brokers, ","), src+":0:earliest-latest", "--to-topic", dst)
	if code != exitFailure || !strings.Contains(stderr, "@1 is") {
		t.Fatalf("exit %d, want 1 naming offset 1: %s", code, stderr)
	}
	if n := kc.End(dst, 0); n != 1 {
		t.Fatalf("%s has %d records, want only the one before the record too large", dst, n)
	}
}

// TestMultiMiBRecordIsIntactInTheSink writes a 5 MiB record between small
// ones: watch --sink and replay --out both keep it byte for byte (the
// screen truncates it; see tui's record tests).
func TestMultiMiBRecordIsIntactInTheSink(t *testing.T) {
	kc := testkafka.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := fmt.Sprintf("big-%d", time.Now().UnixNano())
	topicTaking(t, kc, topic, 1, "10485760")
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.ProducerBatchMaxBytes(16<<20), kgo.MaxBufferedBytes(64<<20),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16)
	if err := cl.ProduceSync(ctx,
		&kgo.Record{Topic: topic, Value: []byte("small-before")},
		&kgo.Record{Topic: topic, Value: big},
		&kgo.Record{Topic: topic, Value: []byte("small-after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sink, out := filepath.Join(dir, "sink.jsonl"), filepath.Join(dir, "replay.jsonl")
	b := strings.Join(kc.Brokers, ",")
	if _, errOut, code := runKbatch(t, "watch", "--no-tui", "-b", b, "-t", topic, "--reset", "earliest", "--until-end",
		"--store", filepath.Join(dir, "o.db"), "--sink", sink); code != 0 {
		t.Fatalf("watch exit %d: %s", code, errOut)
	}
	if _, errOut, code := runKbatch(t, "replay", topic+":0:earliest-latest", "-b", b, "--out", out); code != 0 {
		t.Fatalf("replay exit %d: %s", code, errOut)
	}
	for _, f := range []string{sink, out} {
		data := readFile(t, f)
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		if len(lines) != 3 {
			t.Fatalf("%s: %d lines, want 3", filepath.Base(f), len(lines))
		}
		var r struct {
			Offset int64  `json:"offset"`
			Value  string `json:"value"`
		}
		if err := json.Unmarshal(lines[1], &r); err != nil {
			t.Fatal(err)
		}
		if r.Offset != 1 || r.Value != string(big) {
			t.Fatalf("%s: offset %d value of %d bytes, want offset 1 with the %d-byte value intact", filepath.Base(f), r.Offset, len(r.Value), len(big))
		}
	}
}

// topicTaking makes a topic of partitions partitions whose
// max.message.bytes is maxMessageBytes, deleted after the test.
func topicTaking(t *testing.T, kc *testkafka.Cluster, name string, partitions int32, maxMessageBytes string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kc.Admin().CreateTopic(ctx, partitions, 1, map[string]*string{"max.message.bytes": &maxMessageBytes}, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = kc.Admin().DeleteTopics(context.Background(), name) })
}

// produceSizes writes one record of each size (its value, zeros) to
// partition 0 of topic, with key (nil: none), through a client that sends
// records of up to 16 MiB (the set-up client's batches stop at 1 MB).
func produceSizes(t *testing.T, kc *testkafka.Cluster, topic string, key []byte, sizes ...int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.ProducerBatchMaxBytes(16<<20), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, size := range sizes {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: key, Value: make([]byte, size)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}
