package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kbatch-dev/kbatch/filter"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/replay"
	"github.com/kbatch-dev/kbatch/schema"
)

const benchPaymentAvsc = `{"type":"record","name":"Payment","namespace":"shop","fields":[{"name":"id","type":"long"},
 {"name":"amount","type":"double"},{"name":"country","type":"string"},{"name":"type","type":"string"},
 {"name":"customer","type":"string"},{"name":"note","type":["null","string"],"default":null}]}`

// benchPayment is payment i of the filter benchmark: about 190 B as JSON,
// 110 B as Avro; the filter keeps about one in twelve.
func benchPayment(i int) map[string]any {
	return map[string]any{"id": int64(i), "amount": float64(i%200) + 0.5, "country": []string{"FR", "DE", "ES"}[i%3],
		"type": []string{"sale", "refund"}[i%2], "customer": "customer-" + strconv.Itoa(i%5000) + "-with-a-longer-name",
		"note": map[string]any{"string": "a note of some length for the record"}}
}

// BenchmarkReplayWhere replays one partition of payments to io.Discard,
// with and without refundsWhere, as JSON values and as Avro values framed
// for a (fake) registry; "decode" is the Avro replay with --decode, which
// decodes every value as --where must. It reports records/s; the ratio of
// a "where" row to its "none" row is what a filter costs
// (BENCHMARKS.md); the "ratio" rows measure it pair by pair.
// KBATCH_BENCH_WHERE_RECORDS sets the number of records (default 200,000).
func BenchmarkReplayWhere(b *testing.B) {
	records := 200_000
	if n, err := strconv.Atoi(os.Getenv("KBATCH_BENCH_WHERE_RECORDS")); err == nil && n > 0 {
		records = n
	}
	tc := testkafka.New(b)
	reg := srfake.New()
	b.Cleanup(reg.Close)
	id := registered(b, reg, "payments-value", benchPaymentAvsc)
	avsc := avro.MustParse(benchPaymentAvsc)
	jsonTopic, avroTopic := tc.Topic("bench-json", 1), tc.Topic("bench-avro", 1)
	var matched int64
	for start := 0; start < records; start += 50_000 {
		var recs []*kgo.Record
		for i := start; i < min(start+50_000, records); i++ {
			p := benchPayment(i)
			a, err := avro.Marshal(avsc, p)
			if err != nil {
				b.Fatal(err)
			}
			p["note"] = "a note of some length for the record"
			j, _ := json.Marshal(p)
			key := []byte("user-" + strconv.Itoa(i))
			recs = append(recs, &kgo.Record{Topic: jsonTopic, Key: key, Value: j}, &kgo.Record{Topic: avroTopic, Key: key, Value: framed(id, a)})
			if p["amount"].(float64) > 90 && p["country"] == "FR" && p["type"] == "refund" {
				matched++
			}
		}
		tc.Produce(recs...)
	}
	client, err := kafka.Dial(kafka.ClientConfig{Brokers: tc.Brokers})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	prog, err := filter.Compile(refundsWhere)
	if err != nil {
		b.Fatal(err)
	}
	dec, err := schema.New(schema.Options{RegistryURL: reg.URL()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(dec.Close)
	// replayOnce replays topic, with --where or with --decode, and checks
	// the counts.
	replayOnce := func(b *testing.B, topic string, where, decode bool) {
		spec, err := replay.ParseRange(topic+":0:earliest-latest", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		tasks, err := replay.Plan(client, []replay.RangeSpec{spec})
		if err != nil {
			b.Fatal(err)
		}
		js := replay.NewJSONSink(io.Discard)
		if decode {
			js.SetEncoder(&decodingAppender{inner: &record.JSONEncoder{}, dec: dec})
		}
		var sink replay.Sink = js
		var w *filter.Where
		if where {
			w = filter.NewWhere(prog, filter.Schemas(dec))
			sink = &whereSink{Sink: js, where: w}
		}
		rep, err := replay.Run(context.Background(), client, tasks, sink, replay.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Records != int64(records) {
			b.Fatalf("read %d records, want %d", rep.Records, records)
		}
		if w != nil {
			if _, m, failed := w.Counts(); m != matched || failed != 0 {
				b.Fatal(fmt.Sprintf("%d matched, %d failed; want %d matched", m, failed, matched))
			}
		}
	}
	for _, c := range []struct {
		name, topic   string
		where, decode bool
	}{
		{"json/none", jsonTopic, false, false},
		{"json/where", jsonTopic, true, false},
		{"avro/none", avroTopic, false, false},
		{"avro/decode", avroTopic, false, true},
		{"avro/where", avroTopic, true, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				replayOnce(b, c.topic, c.where, c.decode)
			}
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
	// The "ratio" rows replay without and with the filter in turn, so
	// that both see about the same load on a shared machine, and report
	// the median over the pairs of the speed with the filter over the
	// speed without (the line is 0.5); -benchtime sets the pairs. cpu-
	// is the same ratio in the process's CPU time, which other programs
	// on the machine do not move (where the system tells it).
	for _, c := range []struct{ name, topic string }{{"json/ratio", jsonTopic}, {"avro/ratio", avroTopic}} {
		b.Run(c.name, func(b *testing.B) {
			var ratios, cpuRatios []float64
			for b.Loop() {
				start, startCPU := time.Now(), processCPU()
				replayOnce(b, c.topic, false, false)
				mid, midCPU := time.Now(), processCPU()
				replayOnce(b, c.topic, true, false)
				ratios = append(ratios, mid.Sub(start).Seconds()/time.Since(mid).Seconds())
				if cpu := processCPU() - midCPU; cpu > 0 {
					cpuRatios = append(cpuRatios, (midCPU-startCPU).Seconds()/cpu.Seconds())
				}
			}
			b.ReportMetric(median(ratios), "where/none")
			if len(cpuRatios) > 0 {
				b.ReportMetric(median(cpuRatios), "cpu-where/none")
			}
		})
	}
}

func median(l []float64) float64 {
	slices.Sort(l)
	return l[len(l)/2]
}
