package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestRealWhereAvro is the filter's whole path on a real Kafka and a
// real registry (make kafka-up registry-up): Avro payments registered
// through the registry's Confluent API, 3 partitions; replay --where
// finds the refunds over 90 from FR by their decoded fields, writes them
// to a file and re-produces them to another topic, and every count is
// the one produced. It runs when KBATCH_TEST_BROKERS and
// KBATCH_TEST_REGISTRY are set.
func TestRealWhereAvro(t *testing.T) {
	url := os.Getenv("KBATCH_TEST_REGISTRY")
	if url == "" || os.Getenv("KBATCH_TEST_BROKERS") == "" {
		t.Skip("KBATCH_TEST_BROKERS and KBATCH_TEST_REGISTRY not set (make kafka-up registry-up)")
	}
	const avsc = `{"type":"record","name":"Payment","namespace":"shop","fields":[{"name":"amount","type":"double"},
	 {"name":"country","type":"string"},{"name":"type","type":{"type":"enum","name":"Kind","symbols":["sale","refund"]}},
	 {"name":"note","type":["null","string"],"default":null}]}`
	tc := testkafka.New(t)
	topic := tc.Topic("real-payments", 3)
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := cl.CreateSchema(context.Background(), topic+"-value", sr.Schema{Type: sr.TypeAvro, Schema: avsc})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	want := map[int32]int{}
	var recs []*kgo.Record
	for i := range n {
		p := paymentOf(i)
		b, err := avro.Marshal(avro.MustParse(avsc), map[string]any{"amount": p.Amount, "country": p.Country, "type": p.Type, "note": nil})
		if err != nil {
			t.Fatal(err)
		}
		part := int32(i % 3)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: part, Key: []byte(fmt.Sprint("user-", i)), Value: framed(ss.ID, b)})
		if p.refundOver90FR() {
			want[part]++
		}
	}
	tc.Produce(recs...)
	total := want[0] + want[1] + want[2]
	dir := t.TempDir()
	out := filepath.Join(dir, "refunds.jsonl")
	_, stderr, code := runReplayCLI(t, tc, topic+":*:earliest-latest", "--out", out, "--where", refundsWhere, "--registry", url,
		"--store", filepath.Join(dir, "offsets.db"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "\n"); got != total {
		t.Errorf("%d lines in the file, want %d", got, total)
	}
	if line := fmt.Sprintf("--where: %s of %s records matched\n", grouped(total), grouped(n)); !strings.Contains(stderr, line) {
		t.Errorf("stderr %q, want %q", stderr, line)
	}
	dst := tc.Topic("real-refunds", 3)
	_, stderr, code = runReplayCLI(t, tc, topic+":*:earliest-latest", "--to-topic", dst, "--where", refundsWhere, "--registry", url,
		"--store", filepath.Join(dir, "offsets.db"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for p := range int32(3) {
		if got := tc.End(dst, p); got != int64(want[p]) {
			t.Errorf("%s[%d] holds %d records, want %d", dst, p, got, want[p])
		}
	}
	// The re-produced records are the matching ones: filtering the copy
	// again keeps every record of it.
	_, stderr, code = runReplayCLI(t, tc, dst+":*:earliest-latest", "--out", filepath.Join(dir, "again.jsonl"), "--where", refundsWhere,
		"--registry", url, "--store", filepath.Join(dir, "offsets.db"))
	if line := fmt.Sprintf("--where: %s of %s records matched\n", grouped(total), grouped(total)); code != 0 || !strings.Contains(stderr, line) {
		t.Errorf("exit %d, stderr %q; want %q", code, stderr, line)
	}
}

// grouped writes n as the summary lines do: 3,000.
func grouped(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
