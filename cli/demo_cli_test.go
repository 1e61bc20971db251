package cli

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestDemoBrokerOnlyServesTheDemoTopics(t *testing.T) {
	cmd := exec.Command(kbatchBinary(t), "demo", "--broker-only")
	cmd.Env = isolatedEnv(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewReader(stdout)
	line, err := lines.ReadString('\n')
	if err != nil {
		t.Fatalf("no bootstrap line: %v", err)
	}
	addr := strings.TrimSpace(line)
	line, err = lines.ReadString('\n')
	registry, ok := strings.CutPrefix(strings.TrimSpace(line), "registry ")
	if err != nil || !ok || !strings.HasPrefix(registry, "http://127.0.0.1:") {
		t.Fatalf("registry line %q (%v), want registry http://127.0.0.1:PORT", line, err)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("bootstrap %q is not on 127.0.0.1", addr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "events", "sensor-data")
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]int{}
	ends.Each(func(o kadm.ListedOffset) {
		parts[o.Topic]++
		if o.Topic == "events" && o.Offset < 1000 {
			t.Errorf("events[%d] has %d records, want >= 1000 before the first screen", o.Partition, o.Offset)
		}
	})
	if parts["events"] != 2 || parts["sensor-data"] != 3 {
		t.Fatalf("partitions %v, want events:2 sensor-data:3", parts)
	}
	// The orders are Avro through the demo's registry: --decode reads them.
	out, errOut, code := runKbatch(t, "replay", "orders:0:0-3", "-b", addr, "--decode", "--registry", registry)
	if code != 0 || strings.Count(out, `"value_decoded":{"order_id":"o-`) != 3 || !strings.Contains(out, `"value_schema_id":1`) {
		t.Fatalf("replay --decode of the demo's orders: exit %d\n%s\n%s", code, out, errOut)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("demo --broker-only after Ctrl-C: %v", err)
	}
}

func TestDemoHeadless(t *testing.T) {
	out, errOut, code := runKbatch(t, "demo", "--no-tui", "--batches", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := parseLines(t, []byte(out))
	if lines[0].Type != "start" || len(lines[0].Partitions) != 7 { // orders 2, events 2, sensor-data 3
		t.Fatalf("start line %+v", lines[0])
	}
	if end := lines[len(lines)-1]; end.Type != "end" || end.Batches != 2 || end.Records < 2000 {
		t.Fatalf("end line %+v", end)
	}
}
