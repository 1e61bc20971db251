package schema

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// TestRealRegistryRecords decodes records that Confluent's Python
// serializers wrote through a real registry (scripts/schema-records.sh,
// Apicurio Registry of `make registry-up`): the bytes are the real wire
// format, not this package's idea of it. It runs when
// KBATCH_TEST_REGISTRY (the registry URL) and KBATCH_TEST_SCHEMA_RECORDS
// (the dump file) are set; with KBATCH_TEST_BROKERS it also reads the
// topics back from Kafka and checks they hold the dumped bytes.
func TestRealRegistryRecords(t *testing.T) {
	url, dump := os.Getenv("KBATCH_TEST_REGISTRY"), os.Getenv("KBATCH_TEST_SCHEMA_RECORDS")
	if url == "" || dump == "" {
		t.Skip("KBATCH_TEST_REGISTRY and KBATCH_TEST_SCHEMA_RECORDS not set (make registry-up kafka-up; scripts/schema-records.sh)")
	}
	type rec struct {
		Topic     string  `json:"topic"`
		Key       *string `json:"key"`
		Value     string  `json:"value"`
		WantKey   *string `json:"want_key"`
		WantValue string  `json:"want_value"`
	}
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []rec
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r rec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		t.Fatalf("%s holds no records", dump)
	}
	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	d := newDecoder(t, Options{RegistryURL: url, CacheDir: t.TempDir()})
	formats := map[Format]int{}
	for i, r := range recs {
		v := d.Decode(r.Topic, false, dec(r.Value))
		t.Logf("%s value: schema id %d, %s %s v%d: %s", r.Topic, v.SchemaID, v.Format, v.Subject, v.Version, v.JSON)
		if v.Status != Decoded || v.Reason != "" || v.JSON != r.WantValue {
			t.Errorf("record %d of %s: %+v\nwant JSON %s", i, r.Topic, v, r.WantValue)
		}
		if v.Subject != r.Topic+"-value" {
			t.Errorf("record %d of %s: subject %q", i, r.Topic, v.Subject)
		}
		formats[v.Format]++
		if r.Key != nil {
			k := d.Decode(r.Topic, true, dec(*r.Key))
			if k.Status != Decoded || r.WantKey == nil || k.JSON != *r.WantKey || k.Subject != r.Topic+"-key" {
				t.Errorf("record %d of %s key: %+v", i, r.Topic, k)
			}
		}
	}
	if formats[Avro] == 0 || formats[Protobuf] == 0 || formats[JSON] == 0 {
		t.Errorf("formats seen %v, want all three", formats)
	}

	brokers := os.Getenv("KBATCH_TEST_BROKERS")
	if brokers == "" {
		return
	}
	byTopic := map[string][]rec{}
	for _, r := range recs {
		byTopic[r.Topic] = append(byTopic[r.Topic], r)
	}
	topics := make([]string, 0, len(byTopic))
	for tp := range byTopic {
		topics = append(topics, tp)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := map[string][][]byte{}
	for n := 0; n < len(recs); {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records from %v", n, len(recs), topics)
		}
		fs.EachRecord(func(kr *kgo.Record) {
			got[kr.Topic] = append(got[kr.Topic], kr.Value)
			n++
		})
	}
	for tp, rs := range byTopic {
		// The dump holds this run's records; the topic may hold earlier runs' too.
		vals := got[tp]
		if len(vals) < len(rs) {
			t.Fatalf("%s: %d records, want at least %d", tp, len(vals), len(rs))
		}
		tail := vals[len(vals)-len(rs):]
		for i, r := range rs {
			if !bytes.Equal(tail[i], dec(r.Value)) {
				t.Errorf("%s record %d: Kafka holds %x, dump %s", tp, i, tail[i], r.Value)
			}
			if v := d.Decode(tp, false, tail[i]); v.JSON != r.WantValue {
				t.Errorf("%s record %d read from Kafka: %+v", tp, i, v)
			}
		}
	}
}

// TestRealRegistryTextSchemas registers .proto text with a reference and
// a JSON Schema (as Confluent's Java serializers and most tools do) in
// the real registry of KBATCH_TEST_REGISTRY, then decodes with it: nested
// message index, the reference fetched, a record that does not match its
// JSON Schema, and an id the registry does not know.
func TestRealRegistryTextSchemas(t *testing.T) {
	url := os.Getenv("KBATCH_TEST_REGISTRY")
	if url == "" {
		t.Skip("KBATCH_TEST_REGISTRY not set (make registry-up)")
	}
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	refs := registerRefSchemas(t, refSubjects{
		common: "text-" + run + "-common", order: "text-" + run + "-value", address: "text-" + run + "-address", customer: "text-" + run + "-key",
	}, func(subject string, s sr.Schema) (sr.SubjectSchema, error) {
		return cl.CreateSchema(ctx, subject, s)
	})
	d := newDecoder(t, Options{RegistryURL: url})
	line := protoFiles(t).Messages().ByName("Order").Messages().ByName("Line")
	r := d.Decode("text-"+run, false, frame(refs.order.ID, append(protoIndexes(1, 0), protoBytes(t, line, `{"sku":"T","qty":9,"price":{"currency":"CHF"}}`)...)))
	wantDecoded(t, r, `{"sku":"T","qty":9,"price":{"currency":"CHF"}}`)
	if r.Subject != "text-"+run+"-value" || r.Version != 1 {
		t.Fatalf("%+v", r)
	}
	r = d.Decode("text-"+run, true, frame(refs.customer.ID, []byte(`{"name":"Ada","age":-1}`)))
	if r.Status != Decoded || r.Subject != "text-"+run+"-key" || !strings.Contains(r.Reason, "minimum") {
		t.Fatalf("%+v", r)
	}
	wantFailed(t, d.Decode("text-"+run, false, frame(1<<30, nil)), "not in the registry")
}
