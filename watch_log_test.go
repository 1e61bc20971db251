package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// watch --log writes a debug log a person can send with a bug report:
// connections, metadata, fetches, cuts, plans and acks, in a file only its
// owner reads, and never the SASL password nor a record's bytes.
func TestWatchDebugLog(t *testing.T) {
	const (
		password = "log-Pa55word-never-logged"
		value    = "record-value-never-logged"
		key      = "record-key-never-logged"
		header   = "header-value-never-logged"
	)
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "logged"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	addr := fake.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.SASL(plain.Auth{User: "alice", Pass: password}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 20 {
		r := &kgo.Record{Topic: "logged", Partition: int32(i % 2), Key: []byte(key), Value: []byte(value),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(header)}}}
		if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "debug.log")
	r := execKbatch(t, []string{"KBATCH_SASL_PASSWORD=" + password}, "watch", "--no-tui", "-b", addr, "--sasl-mechanism", "PLAIN", "--sasl-user", "alice",
		"-t", "logged", "--reset", "earliest", "--until-end", "--max-per-partition", "4", "--store", filepath.Join(dir, "o.db"),
		"--sink", filepath.Join(dir, "sink.jsonl"), "--log", logPath)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	fi, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("--log file mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	for _, want := range []string{"msg=connected", "msg=metadata", "msg=start", "msg=fetch", "msg=cut", `msg="ack and plan"`, "msg=ack ", "msg=process",
		"from=sarama", "logged[0]@0/", "logged[1][0,4)=4", "msg=end"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	for _, secret := range []string{password, value, key, header} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
	for i, c := range data {
		if c < 0x20 && c != '\n' || c == 0x7f {
			t.Fatalf("raw control byte %#x at %d in the log", c, i)
		}
	}
	if t.Failed() || os.Getenv("KBATCH_SHOW_LOG") != "" {
		t.Logf("log:\n%s", log)
	}
}
