package sparkwatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// sparkFixtures is testdata/spark-checkpoint in the repository root.
func sparkFixtures(t *testing.T) string { return fixtures.SparkCheckpoint(t) }

// sparkCheckpointWriter writes checkpoint files the way Spark does (FORMAT.md
// §7.1): "v1\n" + metadata + "\n" + one line per source, no final newline,
// into a temporary file renamed into place, so a poll never sees half a
// file (and the ignored .tmp names are exercised).
type sparkCheckpointWriter struct {
	t   *testing.T
	dir string
}

func newSparkCheckpoint(t *testing.T) *sparkCheckpointWriter {
	c := &sparkCheckpointWriter{t: t, dir: t.TempDir()}
	c.write("metadata", `{"id":"5b0d6b9e-0c41-4d1c-9d3e-2f0c7b1a9e11"}`)
	return c
}

func (c *sparkCheckpointWriter) write(rel, content string) {
	c.t.Helper()
	fixtures.WriteLikeSpark(c.t, c.dir, rel, content)
}

// kafkaJSON renders {"topic":{"p":off,...}} with partitions in reverse, as
// Spark's hash map might order them.
func sparkKafkaJSON(topic string, offs ...int64) string {
	parts := make([]string, len(offs))
	for p, o := range offs {
		parts[len(offs)-1-p] = fmt.Sprintf(`"%d":%d`, p, o)
	}
	return fmt.Sprintf(`{%q:{%s}}`, topic, strings.Join(parts, ","))
}

func (c *sparkCheckpointWriter) initial(topic string, offs ...int64) {
	c.write("sources/0/0", "\x00v1\n"+sparkKafkaJSON(topic, offs...))
}

func (c *sparkCheckpointWriter) offsets(id int64, at time.Time, topic string, offs ...int64) {
	c.write(fmt.Sprintf("offsets/%d", id), fmt.Sprintf(`v1`+"\n"+`{"batchWatermarkMs":0,"batchTimestampMs":%d,"conf":{"spark.sql.shuffle.partitions":"5"}}`+"\n%s",
		at.UnixMilli(), sparkKafkaJSON(topic, offs...)))
}

func (c *sparkCheckpointWriter) commit(id int64) {
	c.write(fmt.Sprintf("commits/%d", id), `v1`+"\n"+`{"nextBatchWatermarkMs":0}`)
}

// collect reads every event of w until it ends.
func sparkCollect(t *testing.T, w *Watch) []consumer.Event {
	t.Helper()
	var evs []consumer.Event
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatal("the watch did not end")
		}
	}
}

func sparkBatchesOf(evs []consumer.Event) []*consumer.Batch {
	var out []*consumer.Batch
	for _, ev := range evs {
		if b, ok := ev.(*consumer.BatchEvent); ok {
			out = append(out, b.Batch)
		}
	}
	return out
}

func sparkNoticesOf(evs []consumer.Event) []offsets.Event {
	var out []offsets.Event
	for _, ev := range evs {
		if n, ok := ev.(*consumer.Notice); ok {
			out = append(out, n.Event)
		}
	}
	return out
}

func TestSparkWatchFixtures(t *testing.T) {
	fx := sparkFixtures(t)
	const topic243 = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
	t.Run("2.4.3 Kafka checkpoint: batch 0 read [0, 3) of five partitions", func(t *testing.T) {
		w, err := Start(context.Background(), Config{Dir: filepath.Join(fx, "kafka-0-10-sql", "structured-streaming",
			"checkpoint-version-2.4.3-kafka-include-headers-default"), Source: -1, Last: 100, Once: true})
		if err != nil {
			t.Fatal(err)
		}
		evs := sparkCollect(t, w)
		st := evs[0].(*consumer.Started)
		if len(st.Starts) != 5 || !reflect.DeepEqual(st.Topics, []string{topic243}) {
			t.Fatalf("started %+v", st)
		}
		for _, s := range st.Starts {
			if s.NextOffset != 3 || s.HighWatermark != -1 {
				t.Errorf("start %+v", s)
			}
		}
		bs := sparkBatchesOf(evs)
		if len(bs) != 1 || bs[0].ID != 0 || bs[0].State != offsets.StateAcked || bs[0].Records != 15 || len(bs[0].Ranges) != 5 {
			t.Fatalf("batches %+v", bs)
		}
		for i, r := range bs[0].Ranges {
			if r.Partition != sparkTP(topic243, int32(i)) || r.From != 0 || r.Until != 3 {
				t.Errorf("range %+v", r)
			}
		}
		if want := time.UnixMilli(1568508285207).UTC(); !bs[0].Time.Equal(want) {
			t.Errorf("batch time %s, want %s", bs[0].Time, want)
		}
		if end := evs[len(evs)-1].(*consumer.Ended); end.Reason != "once" || end.Batches != 1 || end.Records != 15 {
			t.Errorf("end %+v", end)
		}
		if n := sparkNoticesOf(evs); len(n) != 0 {
			t.Errorf("notices %+v", n)
		}
	})

	t.Run("PR-16128 offset log 15 alone: 193 partitions, batch 15's start purged", func(t *testing.T) {
		dir := t.TempDir()
		sparkCopyFile(t, filepath.Join(fx, "sql-core", "history", "PR-16128-49e940b", "offset-log-version-2.1.0", "15"), filepath.Join(dir, "offsets", "15"))
		sparkWriteFile(t, filepath.Join(dir, "commits", "15"), "v1\n{}") // synthetic: the fixture has no commit log
		w, err := Start(context.Background(), Config{Dir: dir, Source: -1, Last: 100, Once: true})
		if err != nil {
			t.Fatal(err)
		}
		evs := sparkCollect(t, w)
		st := evs[0].(*consumer.Started)
		var sum int64
		for _, s := range st.Starts {
			sum += s.NextOffset
		}
		if len(st.Starts) != 193 || len(st.Topics) != 12 || sum != 125 {
			t.Errorf("started: %d partitions, %d topics, offsets sum %d; want 193, 12, 125", len(st.Starts), len(st.Topics), sum)
		}
		if bs := sparkBatchesOf(evs); len(bs) != 0 {
			t.Errorf("batches %+v", bs)
		}
		n := sparkNoticesOf(evs)
		if len(n) != 1 || n[0].Code != CodeSparkPurged || !strings.Contains(n[0].Message, "offsets/14") {
			t.Errorf("notices %+v", n)
		}
	})

	t.Run("offset log 2.1.0 with a file source first: the Kafka source is line 1", func(t *testing.T) {
		dir := t.TempDir()
		sparkCopyFile(t, filepath.Join(fx, "sql-core", "structured-streaming", "offset-log-version-2.1.0", "0"), filepath.Join(dir, "offsets", "0"))
		sparkWriteFile(t, filepath.Join(dir, "sources", "1", "0"), "\x00v1\n"+`{"topic-0":{"0":0}}`) // synthetic initial offsets
		w, err := Start(context.Background(), Config{Dir: dir, Source: -1, Last: 100, Once: true})
		if err != nil {
			t.Fatal(err)
		}
		evs := sparkCollect(t, w)
		bs := sparkBatchesOf(evs)
		want := []offsets.BatchRange{{Range: offsets.Range{Partition: sparkTP("topic-0", 0), From: 0, Until: 1}, Records: 1}}
		if len(bs) != 1 || bs[0].State != offsets.StatePlanned || !reflect.DeepEqual(bs[0].Ranges, want) {
			t.Fatalf("batches %+v", bs)
		}
		if w.source != 1 {
			t.Errorf("source %d, want 1", w.source)
		}
	})

	for _, name := range []string{"checkpoint-version-2.1.0", "checkpoint-version-2.3.1-for-multi-watermark-policy"} {
		t.Run(name+" has no Kafka source", func(t *testing.T) {
			_, err := Start(context.Background(), Config{Dir: filepath.Join(fx, "sql-core", "structured-streaming", name), Source: -1, Once: true})
			if !errors.Is(err, spark.ErrNoKafkaSource) {
				t.Fatalf("err %v, want ErrNoKafkaSource", err)
			}
		})
	}

	t.Run("a topic Kafka cannot have is refused, quoted", func(t *testing.T) {
		c := newSparkCheckpoint(t)
		c.write("sources/0/0", "\x00v1\n"+`{"evil\u001b]52;c;AAAA\u0007":{"0":0}}`)
		c.write("offsets/0", "v1\n{}\n"+`{"evil\u001b]52;c;AAAA\u0007":{"0":5}}`)
		_, err := Start(context.Background(), Config{Dir: c.dir, Source: -1, Once: true})
		if !errors.Is(err, spark.ErrMalformed) || strings.ContainsAny(err.Error(), "\x1b\x07") || !strings.Contains(err.Error(), `evil\x1b]52`) {
			t.Fatalf("err %q", err)
		}
	})

	t.Run("a commit log from a newer Spark is refused, naming file and version", func(t *testing.T) {
		c := newSparkCheckpoint(t)
		c.initial("e", 0)
		c.offsets(0, time.Now(), "e", 5)
		c.write("commits/0", "v99999\n{}")
		_, err := Start(context.Background(), Config{Dir: c.dir, Source: -1, Once: true})
		var uv *spark.UnsupportedVersionError
		if !errors.As(err, &uv) || !strings.Contains(err.Error(), filepath.Join("commits", "0")) || !strings.Contains(err.Error(), "v99999") {
			t.Fatalf("err %v", err)
		}
	})
}

func sparkCopyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	sparkWriteFile(t, to, string(b))
}

func sparkWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
