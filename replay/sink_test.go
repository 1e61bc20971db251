package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// oddRecords are records whose bytes are easy to get wrong: absent and
// empty keys and values, binary, terminal escapes, bidi overrides, null and
// empty header values, binary header keys.
func oddRecords(topic string, base time.Time) []*kgo.Record {
	bin := make([]byte, 1000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	recs := []*kgo.Record{
		{Key: nil, Value: nil},
		{Key: []byte{}, Value: []byte{}},
		{Key: []byte{0xff, 0x00, 0x1b}, Value: []byte("\x1b[31mred\x07\x1b]0;title\x07"),
			Headers: []kgo.RecordHeader{{Key: "null", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "bin", Value: []byte{0xc3, 0x28}}, {Key: "\xff\xfea", Value: []byte("binary key")}, {Key: "\u0085\x1b[0m", Value: nil}}},
		{Key: []byte("ключ"), Value: []byte("\u202egnp.exe\u2028\u0085 \"quoted\" \\")},
		{Key: []byte("k"), Value: bin, Headers: []kgo.RecordHeader{{Key: "", Value: []byte("empty key")}, {Key: "dup", Value: []byte("1")}, {Key: "dup", Value: []byte("2")}}},
		{Key: []byte("{\"json\":true}"), Value: []byte("\xf0\x28\x8c\x28")},
	}
	for i, r := range recs {
		r.Topic, r.Partition = topic, 0
		r.Timestamp = base.Add(time.Duration(i)*time.Second + 123*time.Millisecond)
	}
	return recs
}

// sameBytes compares two byte slices including nil (absent) versus empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func checkSame(t *testing.T, what string, got, want *kgo.Record) {
	t.Helper()
	if !sameBytes(got.Key, want.Key) {
		t.Errorf("%s: key %q (nil %v), want %q (nil %v)", what, got.Key, got.Key == nil, want.Key, want.Key == nil)
	}
	if !sameBytes(got.Value, want.Value) {
		t.Errorf("%s: value %q (nil %v), want %q (nil %v)", what, got.Value, got.Value == nil, want.Value, want.Value == nil)
	}
	if !got.Timestamp.Equal(want.Timestamp) {
		t.Errorf("%s: timestamp %v, want %v", what, got.Timestamp, want.Timestamp)
	}
	if len(got.Headers) != len(want.Headers) {
		t.Errorf("%s: %d headers, want %d", what, len(got.Headers), len(want.Headers))
		return
	}
	for i := range got.Headers {
		if got.Headers[i].Key != want.Headers[i].Key || !sameBytes(got.Headers[i].Value, want.Headers[i].Value) {
			t.Errorf("%s: header %d is %q=%q (nil %v), want %q=%q (nil %v)", what, i, got.Headers[i].Key, got.Headers[i].Value,
				got.Headers[i].Value == nil, want.Headers[i].Key, want.Headers[i].Value, want.Headers[i].Value == nil)
		}
	}
}

// decodeLine decodes one docs/design.md §4 JSON line back into a record.
func decodeLine(t *testing.T, line []byte) *kgo.Record {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	field := func(obj map[string]json.RawMessage, name string) []byte {
		if raw, ok := obj[name+"_b64"]; ok {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		raw, ok := obj[name]
		if !ok {
			t.Fatalf("line %q has neither %s nor %s_b64", line, name, name)
		}
		var s *string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		if s == nil {
			return nil
		}
		return []byte(*s)
	}
	var r kgo.Record
	var ts string
	_ = json.Unmarshal(m["topic"], &r.Topic)
	_ = json.Unmarshal(m["partition"], &r.Partition)
	_ = json.Unmarshal(m["offset"], &r.Offset)
	_ = json.Unmarshal(m["timestamp"], &ts)
	var err error
	if r.Timestamp, err = time.Parse(time.RFC3339Nano, ts); err != nil {
		t.Fatalf("timestamp %q: %v", ts, err)
	}
	r.Key, r.Value = field(m, "key"), field(m, "value")
	var hs []map[string]json.RawMessage
	if err := json.Unmarshal(m["headers"], &hs); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: string(field(h, "key")), Value: field(h, "value")})
	}
	return &r
}

func TestRoundTripJSONFile(t *testing.T) {
	tc := testkafka.New(t)
	topic := tc.Topic("replay-json", 1)
	want := oddRecords(topic, time.Now().Add(-time.Hour).Truncate(time.Second))
	tc.Produce(want...)
	client := dialTest(t, tc, false)
	tasks := planRange(t, client, topic+":0:earliest-latest")
	path := filepath.Join(t.TempDir(), "out.jsonl")
	sink, err := CreateJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), client, tasks, sink, Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(data, "\x1b\x07\u202e\u2028\u0085") {
		t.Errorf("output holds raw control or bidi characters")
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	i := 0
	for ; sc.Scan(); i++ {
		got := decodeLine(t, sc.Bytes())
		if i >= len(want) {
			t.Fatalf("more lines than records: %q", sc.Bytes())
		}
		if got.Topic != topic || got.Partition != 0 || got.Offset != int64(i) {
			t.Errorf("line %d names %s[%d]@%d", i, got.Topic, got.Partition, got.Offset)
		}
		checkSame(t, fmt.Sprintf("line %d", i), got, want[i])
	}
	if i != len(want) {
		t.Errorf("%d lines, want %d", i, len(want))
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the output (no temporary file left)", len(entries))
	}
}

func TestRoundTripTopic(t *testing.T) {
	tc := testkafka.New(t)
	src := tc.Topic("replay-src", 2)
	dst := tc.Topic("replay-dst", 2)
	want := oddRecords(src, time.Now().Add(-time.Hour).Truncate(time.Second))
	for _, r := range want {
		r.Partition = 1
	}
	tc.Produce(want...)
	client := dialTest(t, tc, false)
	tasks := planRange(t, client, src+":*:earliest-latest")
	var sources []offsets.Partition
	for _, tk := range tasks {
		sources = append(sources, tk.Read.Partition)
	}
	sink, err := NewTopicSink(kafka.ClientConfig{Brokers: tc.Brokers}, dst, -1, sources)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), client, tasks, sink, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != int64(len(want)) {
		t.Fatalf("replayed %d records, want %d", rep.Records, len(want))
	}
	if tc.End(dst, 0) != 0 || tc.End(dst, 1) != int64(len(want)) {
		t.Fatalf("target ends at %d and %d, want 0 and %d (same partition number)", tc.End(dst, 0), tc.End(dst, 1), len(want))
	}
	got := consumeAll(t, tc, dst, 1, len(want))
	for i := range want {
		checkSame(t, fmt.Sprintf("record %d", i), got[i], want[i])
	}
}

// consumeAll reads n records of topic[p] from the start with franz-go.
func consumeAll(t *testing.T, tc *testkafka.Cluster, topic string, p int32, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s[%d]", len(out), n, topic, p)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

func TestTopicSinkTargets(t *testing.T) {
	tc := testkafka.New(t)
	dst := tc.Topic("replay-dst", 2)
	cc := kafka.ClientConfig{Brokers: tc.Brokers}
	src := func(ps ...int32) []offsets.Partition {
		var out []offsets.Partition
		for _, p := range ps {
			out = append(out, offsets.Partition{Topic: "src", Partition: p})
		}
		return out
	}
	for _, tt := range []struct {
		topic     string
		partition int32
		sources   []offsets.Partition
		want      string
	}{
		{"no-such-topic-kbatch", -1, src(0), `--to-topic "no-such-topic-kbatch" does not exist on this cluster; create it first`},
		{dst, -1, src(0, 1, 2), fmt.Sprintf("--to-topic %q has no partition 2 (it has partitions 0..1); pass --to-partition N to pick one", dst)},
		{dst, 5, src(0), fmt.Sprintf("--to-topic %q has no partition 5 (it has partitions 0..1)", dst)},
	} {
		_, err := NewTopicSink(cc, tt.topic, tt.partition, tt.sources)
		var ue *offsets.UsageError
		if !errors.As(err, &ue) || err.Error() != tt.want {
			t.Errorf("NewTopicSink(%s, %d): %v, want usage error %q", tt.topic, tt.partition, err, tt.want)
		}
	}
	s, err := NewTopicSink(cc, dst, 1, src(0, 1, 7))
	if err != nil {
		t.Fatalf("--to-partition 1: %v", err)
	}
	s.Abort()
}

func TestJSONFileCompleteOrUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := []record.Record{{Topic: "t", Offset: 1, Timestamp: time.UnixMilli(0), Value: []byte("v")}}

	s, err := CreateJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(rec); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if data, _ := os.ReadFile(path); string(data) != "old\n" {
		t.Errorf("after Abort the file holds %q, want the old content", data)
	}

	s, err = CreateJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(rec); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old\n" {
		t.Errorf("before Close the file holds %q, want the old content", data)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if want := `{"topic":"t","partition":0,"offset":1,"timestamp":"1970-01-01T00:00:00.000Z","key":null,"value":"v","headers":[]}` + "\n"; string(data) != want {
		t.Errorf("file holds %q, want %q", data, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want 1", len(entries))
	}

	// Not a regular file: written in place.
	s, err = CreateJSONFile(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateJSONFile(dir); err == nil {
		t.Error("a folder was accepted as --out")
	}
}

// TestJSONFileIsPrivate: a new --out file is 0600 whatever the umask, as
// the store and --sink are (docs/design.md §2.7); replayed records are production
// data on a shared host.
func TestJSONFileIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s, err := CreateJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]record.Record{{Topic: "t", Timestamp: time.UnixMilli(0), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("--out file mode %o, want 600", m)
	}
}

// An --out in a folder that does not exist names the folder, not the
// temporary file kbatch would have written beside it (not "open
// /tmp/nonexist/dir/.x.jsonl.2855628385.partial").
func TestJSONFileInAMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nonexist", "x.jsonl")
	_, err := CreateJSONFile(path)
	if err == nil || strings.Contains(err.Error(), ".partial") || !strings.Contains(err.Error(), "cannot write in its folder "+filepath.Dir(path)) {
		t.Fatalf("err %v, want one naming the folder %s and no temporary file", err, filepath.Dir(path))
	}
}
