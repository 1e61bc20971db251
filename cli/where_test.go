package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

const refundsWhere = `value.amount > 90.0 && value.country == "FR" && value.type == "refund"`

// payment is record i of paymentsTopic: amounts 0, 7, 14..., countries
// and kinds taking turns.
type payment struct {
	Amount  float64 `json:"amount"`
	Country string  `json:"country"`
	Type    string  `json:"type"`
}

func paymentOf(i int) payment {
	return payment{Amount: float64(i * 7), Country: []string{"FR", "DE", "FR"}[i%3], Type: []string{"sale", "refund"}[i%2]}
}

func (p payment) refundOver90FR() bool {
	return p.Amount > 90 && p.Country == "FR" && p.Type == "refund"
}

// paymentsTopic holds n JSON payments on partition 0, then one plain-text
// value that has no field to compare (it does not evaluate). It returns
// the topic and the offsets a refundsWhere filter keeps.
func paymentsTopic(t *testing.T, tc *testkafka.Cluster, n int) (string, []int64) {
	t.Helper()
	topic := tc.Topic("payments", 1)
	var recs []*kgo.Record
	var want []int64
	for i := range n {
		v, _ := json.Marshal(paymentOf(i))
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint("user-", i)), Value: v})
		if paymentOf(i).refundOver90FR() {
			want = append(want, int64(i))
		}
	}
	recs = append(recs, &kgo.Record{Topic: topic, Value: []byte("not a payment")})
	tc.Produce(recs...)
	if len(want) == 0 || len(want) == n {
		t.Fatalf("the data keeps %d of %d records: it cannot tell a filter from none", len(want), n)
	}
	return topic, want
}

// TestReplayWhere: replay --where writes only the matching records, to a
// file, to stdout and to a topic, and says how many matched and how many
// did not evaluate, once.
func TestReplayWhere(t *testing.T) {
	tc := testkafka.New(t)
	const n = 60
	topic, want := paymentsTopic(t, tc, n)
	dir := t.TempDir()
	summary := fmt.Sprintf("--where: %d of %d records matched; 1 did not evaluate and count as no match (first %s[0]@%d: no such key: amount)", len(want), n+1, topic, n)
	check := func(t *testing.T, stderr string) {
		t.Helper()
		if strings.Count(stderr, "--where:") != 1 || !strings.Contains(stderr, summary+"\n") {
			t.Errorf("stderr %q, want the line %q once", stderr, summary)
		}
	}
	t.Run("out", func(t *testing.T) {
		out := filepath.Join(dir, "refunds.jsonl")
		_, stderr, code := runReplayCLI(t, tc, topic+":0:earliest-latest", "--out", out, "--where", refundsWhere)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		data := readFile(t, out)
		if got := replayOffsetsOf(t, string(data)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("offsets %v, want %v", got, want)
		}
		check(t, stderr)
	})
	t.Run("stdout", func(t *testing.T) {
		stdout, stderr, code := runReplayCLI(t, tc, topic+":0:earliest-latest", "--where", refundsWhere)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got := replayOffsetsOf(t, stdout); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("offsets %v, want %v", got, want)
		}
		check(t, stderr)
	})
	t.Run("to-topic", func(t *testing.T) {
		dst := tc.Topic("refunds", 1)
		_, stderr, code := runReplayCLI(t, tc, topic+":0:earliest-latest", "--to-topic", dst, "--where", refundsWhere)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		check(t, stderr)
		stdout, stderr, code := runReplayCLI(t, tc, dst+":0:earliest-latest")
		if code != 0 {
			t.Fatalf("reading %s back: exit %d: %s", dst, code, stderr)
		}
		lines := jsonLines(t, stdout)
		if len(lines) != len(want) {
			t.Fatalf("%s holds %d records, want %d", dst, len(lines), len(want))
		}
		for i, l := range lines {
			var p payment
			if err := json.Unmarshal([]byte(str(t, l["value"])), &p); err != nil || p != paymentOf(int(want[i])) {
				t.Errorf("record %d of %s is %s, want payment %d", i, dst, l["value"], want[i])
			}
		}
	})
}

// TestWhereRefusedBeforeReading: a bad expression, or one that is never a
// bool, is exit 2 with one line naming the column or the type, before
// any broker is asked (the brokers given accept no connection).
func TestWhereRefusedBeforeReading(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "t:0:0-10", "--where", "value.amount > "}, "kbatch: --where: column 16: Syntax error: the expression ends too early expecting a value"},
		{[]string{"replay", "t:0:0-10", "--where", `value.amount >> 3`}, "kbatch: --where: column 15: Syntax error: extraneous input '>'"},
		{[]string{"replay", "t:0:0-10", "--where", `value.amount + 1.0`}, "kbatch: --where: the expression is a double, never a bool"},
		{[]string{"replay", "t:0:0-10", "--where", `topic`}, "kbatch: --where: the expression is a string, never a bool"},
		{[]string{"replay", "t:0:0-10", "--where", `amount > 1`}, "kbatch: --where: column 1: undeclared reference to 'amount'"},
		{[]string{"replay", "t:0:0-10", "--where", `value.x == 1 &&`, "--emit", "spark", "--out", dir, "--spark-output", "/x"}, "kbatch: --where: column 16"},
		{[]string{"watch", "--no-tui", "-t", "t", "--sink", filepath.Join(dir, "s.jsonl"), "--store", filepath.Join(dir, "o.db"), "--where", "value.a ="}, "kbatch: --where: column 9"},
		{[]string{"watch", "--no-tui", "-t", "t", "--where", "value.a == 1"}, "kbatch: --where chooses the records written to the --sink: add --sink FILE"},
	} {
		args := append(c.args, "-b", "127.0.0.1:1")
		stdout, stderr, code := runInProcess(t, "", args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestReplayWhereAvro: --where reads Avro values through the registry
// without --decode, and writes the raw records that match.
func TestReplayWhereAvro(t *testing.T) {
	const avsc = `{"type":"record","name":"Payment","namespace":"shop","fields":[{"name":"amount","type":"double"},
	 {"name":"country","type":"string"},{"name":"type","type":{"type":"enum","name":"Kind","symbols":["sale","refund"]}}]}`
	tc := testkafka.New(t)
	reg := srfake.New()
	t.Cleanup(reg.Close)
	id := registered(t, reg, "payments-value", avsc)
	topic := tc.Topic("avro-payments", 1)
	var want []int64
	var values [][]byte
	for i := range 40 {
		p := paymentOf(i)
		b, err := avro.Marshal(avro.MustParse(avsc), map[string]any{"amount": p.Amount, "country": p.Country, "type": p.Type})
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, framed(id, b))
		tc.Produce(&kgo.Record{Topic: topic, Value: values[i]})
		if p.refundOver90FR() {
			want = append(want, int64(i))
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "refunds.jsonl")
	_, stderr, code := runReplayCLI(t, tc, topic+":0:earliest-latest", "--out", out, "--where", refundsWhere,
		"--registry", reg.URL(), "--store", filepath.Join(dir, "offsets.db"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data := readFile(t, out)
	lines := jsonLines(t, string(data))
	if got := replayOffsetsOf(t, string(data)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
	for i, l := range lines {
		if raw := rawValueOf(t, l); string(raw) != string(values[want[i]]) {
			t.Errorf("line %d: raw value %x, want the record's %x", i, raw, values[want[i]])
		}
		if _, ok := l["value_decoded"]; ok {
			t.Errorf("line %d has value_decoded without --decode", i)
		}
	}
	if line := fmt.Sprintf("--where: %d of 40 records matched\n", len(want)); !strings.Contains(stderr, line) || strings.Contains(stderr, "give their schema") {
		t.Errorf("stderr %q, want %q and no hint", stderr, line)
	}
	// Without the registry the Avro bytes have no fields: no record
	// evaluates, and a hint says what is missing.
	_, stderr, code = runReplayCLI(t, tc, topic+":0:earliest-latest", "--out", out, "--where", refundsWhere)
	if code != 0 || !strings.Contains(stderr, "--where: 0 of 40 records matched; 40 did not evaluate") ||
		!strings.Contains(stderr, "kbatch: warning: --where evaluated on no record; if the values are Avro, Protobuf or JSON Schema, give their schema: --registry URL") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestWatchSinkWhere: watch --sink --where writes the matching records;
// every batch line keeps its whole ranges and says how many matched.
func TestWatchSinkWhere(t *testing.T) {
	tc := testkafka.New(t)
	const n = 60
	topic, want := paymentsTopic(t, tc, n)
	dir := t.TempDir()
	sink := filepath.Join(dir, "sink.jsonl")
	stdout, stderr, code := runKbatch(t, "watch", "--no-tui", "-b", strings.Join(tc.Brokers, ","), "-t", topic, "--reset", "earliest",
		"--store", filepath.Join(dir, "offsets.db"), "--sink", sink, "--until-end", "--interval", "100ms", "--max-per-partition", "25", "--where", refundsWhere)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data := readFile(t, sink)
	if got := replayOffsetsOf(t, string(data)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sink offsets %v, want %v", got, want)
	}
	var records, matched, batches int64
	next := int64(0)
	for _, l := range jsonLines(t, stdout) {
		if str(t, l["type"]) != "batch" {
			continue
		}
		batches++
		var b struct {
			Records int64  `json:"records"`
			Matched *int64 `json:"matched"`
			Ranges  []struct {
				From, Until int64
			} `json:"ranges"`
		}
		raw, _ := json.Marshal(l)
		if err := json.Unmarshal(raw, &b); err != nil || b.Matched == nil {
			t.Fatalf("batch line %s: no matched count (%v)", raw, err)
		}
		for _, r := range b.Ranges {
			if r.From != next {
				t.Errorf("a batch range starts at %d, want %d: ranges are whole", r.From, next)
			}
			next = r.Until
		}
		records += b.Records
		matched += *b.Matched
	}
	if batches < 2 || records != n+1 || next != n+1 || matched != int64(len(want)) {
		t.Errorf("%d batches of %d records up to %d, %d matched; want several batches of %d records up to %d, %d matched", batches, records, next, matched, n+1, n+1, len(want))
	}
	if line := fmt.Sprintf("--where: %d of %d records matched; 1 did not evaluate", len(want), n+1); !strings.Contains(stderr, line) {
		t.Errorf("stderr %q, want %q", stderr, line)
	}
}

// TestReplayEmitSparkWhere: the Spark job cannot evaluate CEL; it says so
// in both files and on stderr instead of dropping --where silently.
func TestReplayEmitSparkWhere(t *testing.T) {
	isolatedStore(t)
	c, topic := filledTopic(t, "emit-where", 1, 20, 10)
	dir := filepath.Join(t.TempDir(), "job")
	_, errOut, code := runInProcess(t, "", "replay", topic+":0:2-8", "--emit", "spark", "--out", dir, "--spark-output", "/lake/replay",
		"-b", strings.Join(c.Brokers, ","), "--where", refundsWhere)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	note := "is NOT applied by this job"
	if !strings.Contains(errOut, "kbatch: note: --where "+refundsWhere+" "+note) || !strings.Contains(errOut, "(value is decoded by kbatch") {
		t.Errorf("stderr %q does not say --where is not applied", errOut)
	}
	for _, name := range []string{emitPySpark, emitScala} {
		b := readFile(t, filepath.Join(dir, name))
		if !strings.Contains(string(b), note) || strings.Contains(string(b), ".where(") {
			t.Errorf("%s does not say --where is not applied, or filters", name)
		}
	}
	// An expression over Spark's own columns is applied by the job.
	dir = filepath.Join(t.TempDir(), "job2")
	_, errOut, code = runInProcess(t, "", "replay", topic+":0:2-8", "--emit", "spark", "--out", dir, "--spark-output", "/lake/replay",
		"-b", strings.Join(c.Brokers, ","), "--where", `offset >= 4 && timestamp > timestamp("2026-01-01T00:00:00Z")`)
	sql := "((`offset` >= 4) AND (`timestamp` > CAST('2026-01-01T00:00:00Z' AS TIMESTAMP)))"
	if code != 0 || !strings.Contains(errOut, "as the Spark SQL condition "+sql) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for name, want := range map[string]string{emitPySpark: "df = df.where(WHERE)", emitScala: ".where(where)"} {
		b := readFile(t, filepath.Join(dir, name))
		if !strings.Contains(string(b), want) || !strings.Contains(string(b), sql) {
			t.Errorf("%s does not filter by %s:\n%s", name, sql, b)
		}
	}
}

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
	data := readFile(t, out)
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
