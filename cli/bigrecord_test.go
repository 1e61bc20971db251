package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestMultiMiBRecordIsIntactInTheSink writes a 5 MiB record between small
// ones: watch --sink and replay --out both keep it byte for byte (the
// screen truncates it; see tui's record tests).
func TestMultiMiBRecordIsIntactInTheSink(t *testing.T) {
	kc := testkafka.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := fmt.Sprintf("big-%d", time.Now().UnixNano())
	max := "10485760"
	resp, err := kc.Admin().CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": &max}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = kc.Admin().DeleteTopics(context.Background(), topic) })
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
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
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
