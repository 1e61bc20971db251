package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// TestBrokerRestartMidStream kills the real broker with SIGKILL while kbatch
// streams, starts it again, and checks that kbatch kept running, reported
// the trouble as an event, and that the acked ranges stay contiguous with
// every produced record in the sink. It needs the real broker of
// `make kafka-up` (make test-kafka sets KBATCH_TEST_KAFKA_RESTART).
func TestBrokerRestartMidStream(t *testing.T) {
	restart := os.Getenv("KBATCH_TEST_KAFKA_RESTART")
	if restart == "" || !testkafka.Real() {
		t.Skip("needs a real broker it may restart: run via make test-kafka")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("restart", 3)
	dir := t.TempDir()
	sink := filepath.Join(dir, "sink.jsonl")
	cmd := exec.Command(kbatchBinary(t), "watch", "--no-tui", "-b", strings.Join(kc.Brokers, ","), "-t", topic,
		"--store", filepath.Join(dir, "o.db"), "--sink", sink, "--reset", "earliest", "--interval", "100ms")
	cmd.Env = isolatedEnv(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan jsonLine, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var l jsonLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				lines <- l
			}
		}
	}()

	const perPartition = 400
	produced := make(chan error, 1)
	go func() { produced <- produceSequence(kc.Client(), topic, perPartition) }()

	covered := map[int32]int64{}
	events := map[string]int{}
	restarted := false
	total := func() (n int64) {
		for _, u := range covered {
			n += u
		}
		return n
	}
	deadline := time.After(3 * time.Minute)
	for total() < 3*perPartition {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kbatch ended: %s", stderr.String())
			}
			switch l.Type {
			case "event":
				events[l.Code]++
			case "batch":
				for _, r := range l.Ranges {
					if r.From != covered[r.Partition] {
						t.Fatalf("p%d: batch %d starts at %d, previous ended at %d", r.Partition, l.Batch, r.From, covered[r.Partition])
					}
					covered[r.Partition] = r.Until
				}
			}
			if !restarted && total() > 300 {
				restarted = true
				out, err := exec.Command(restart).CombinedOutput()
				if err != nil {
					t.Fatalf("restarting the broker: %v\n%s", err, out)
				}
				t.Logf("restarting the broker:\n%s", out) // a retried start says why
			}
		case <-deadline:
			t.Fatalf("kbatch covered %v of %d per partition after the restart; events %v; stderr %s", covered, perPartition, events, stderr.String())
		}
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kbatch after SIGTERM: %v: %s", err, stderr.String())
	}
	seen := map[offsets.Partition]map[int64]bool{}
	for _, r := range readSink(t, sink) {
		p := offsets.Partition{Topic: r.Topic, Partition: r.Partition}
		if seen[p] == nil {
			seen[p] = map[int64]bool{}
		}
		seen[p][r.Offset] = true
	}
	for p := int32(0); p < 3; p++ {
		if n := len(seen[offsets.Partition{Topic: topic, Partition: p}]); n != perPartition {
			t.Errorf("partition %d: %d distinct records in the sink, want %d", p, n, perPartition)
		}
	}
	t.Logf("events during the restart: %v", events)
	if events["broker-error"] == 0 {
		t.Errorf("no broker-error event reported during the restart (events %v)", events)
	}
}
