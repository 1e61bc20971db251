package cli

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
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
	fake := testkafka.Fake(t, kfake.SeedTopics(2, "logged"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", password))
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
	data := readFile(t, logPath)
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

// Every string of the debug log is escaped for a terminal: messages,
// string values, errors, groups and sarama's lines.
func TestDebugLogEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "debug.log")
	log, closeLog, err := openDebugLog(path)
	if err != nil {
		t.Fatal(err)
	}
	hostile := "\x1b]0;PWN\x07\u202e\u0085\xff"
	log.Info("msg "+hostile, "s", hostile, "err", errors.New(hostile), slog.Group("g", "in", hostile))
	log.With("with", hostile).WithGroup("grp").Info("x", "k", hostile)
	sarama.Logger.Printf("broker said %s\n", hostile)
	closeLog()
	data := readFile(t, path)
	if !utf8.Valid(data) {
		t.Fatalf("log is not UTF-8: %q", data)
	}
	for _, r := range string(data) {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || r == 0x202e {
			t.Fatalf("raw %U in the log:\n%q", r, data)
		}
	}
	// The escaped text, quoted as logfmt quotes (backslashes doubled)
	// where the value holds a space.
	esc := `\x1b]0;PWN\x07\u202e\u0085\xff`
	if n := strings.Count(string(data), esc) + strings.Count(string(data), strings.ReplaceAll(esc, `\`, `\\`)); n != 7 {
		t.Fatalf("%d escaped copies, want 7:\n%s", n, data)
	}
}
