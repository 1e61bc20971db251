//go:build unix

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Kafka's own tools read a group kbatch wrote: kafka-consumer-groups
// --describe shows the stream's offsets, and kafka-console-consumer
// --group starts exactly there. It runs against the broker of make
// kafka-up (KBATCH_TEST_BROKERS) with its jars, through
// scripts/kafka-tool.sh; without a broker or java it is skipped.

// kafkaTool runs the first of classes (CLI classes moved between Kafka
// releases) that the broker's jars hold, with args.
func kafkaTool(t *testing.T, classes []string, args ...string) string {
	t.Helper()
	tool, err := filepath.Abs(filepath.Join("..", "scripts", "kafka-tool.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range classes {
		cmd := exec.Command(tool, append([]string{class}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if strings.Contains(errOut.String(), "Could not find or load main class") {
			continue
		}
		if err != nil {
			t.Fatalf("%s %v: %v\n%s\n%s", class, args, err, out.String(), errOut.String())
		}
		return out.String()
	}
	t.Fatalf("none of %v is in the Kafka jars", classes)
	return ""
}

func TestGroupWrittenByKbatchIsReadByKafkasTools(t *testing.T) {
	if !testkafka.Real() {
		t.Skip("needs a real broker (make kafka-up; KBATCH_TEST_BROKERS)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("needs java for Kafka's own tools")
	}
	store := isolatedStore(t)
	kc := testkafka.New(t)
	topic := kc.Topic("handover", 3)
	counts := []int{60, 40, 25}
	for p, n := range counts {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "p%d-o%d", p, i)}
		}
		kc.Produce(recs...)
	}
	// The stream stands at {0: 45, 1: 40, 2: 10}; batch 2 read p0 30–45.
	s := offsetsOpenTestStore(t, store)
	s.stream("s", topic)
	s.batch("s", 1, true, offsetsBR(topic, 0, 0, 30, ""), offsetsBR(topic, 1, 0, 40, ""), offsetsBR(topic, 2, 0, 10, ""))
	s.batch("s", 2, true, offsetsBR(topic, 0, 30, 45, ""))
	s.close()
	b := strings.Join(kc.Brokers, ",")

	for _, tc := range []struct {
		name  string
		extra []string
		want  map[int32]int64
	}{
		{"next", nil, map[int32]int64{0: 45, 1: 40, 2: 10}},
		{"batch2from", []string{"--batch", "2", "--at", "from"}, map[int32]int64{0: 30, 1: 40, 2: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group := tc.name + "-" + topic
			args := append([]string{"offsets", "export", "--to-group", group, "--execute", "-b", b, "--store", store}, tc.extra...)
			offsetsOK(t)(runInProcess(t, "", args...))

			described := kafkaTool(t, []string{"org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "kafka.admin.ConsumerGroupCommand"},
				"--bootstrap-server", b, "--describe", "--group", group)
			got := map[int32]int64{}
			for _, line := range strings.Split(described, "\n") {
				f := strings.Fields(line)
				// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
				if len(f) < 4 || f[0] != group || f[1] != topic {
					continue
				}
				p, err1 := strconv.Atoi(f[2])
				off, err2 := strconv.ParseInt(f[3], 10, 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("kafka-consumer-groups line %q", line)
				}
				got[int32(p)] = off
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("kafka-consumer-groups --describe reads %v, want %v:\n%s", got, tc.want, described)
			}

			// The Java consumer of the group starts exactly there: it
			// reads every record from the written offsets to the end,
			// and nothing before them.
			total := 0
			for p, n := range counts {
				total += n - int(tc.want[int32(p)])
			}
			out := kafkaTool(t, []string{"org.apache.kafka.tools.consumer.ConsoleConsumer", "kafka.tools.ConsoleConsumer"},
				"--bootstrap-server", b, "--topic", topic, "--group", group, "--max-messages", strconv.Itoa(total), "--timeout-ms", "30000")
			first := map[int32]int64{}
			seen := 0
			for _, v := range strings.Fields(out) {
				var p int32
				var o int64
				if _, err := fmt.Sscanf(v, "p%d-o%d", &p, &o); err != nil {
					continue
				}
				seen++
				if f, ok := first[p]; !ok || o < f {
					first[p] = o
				}
			}
			for p, n := range counts {
				want, ok := tc.want[int32(p)]
				if int(want) == n {
					if _, read := first[int32(p)]; read {
						t.Errorf("partition %d: the console consumer read a record at or past the end", p)
					}
					continue
				}
				if f := first[int32(p)]; !ok || f != want {
					t.Errorf("partition %d: the console consumer started at %d, want %d", p, f, want)
				}
			}
			if seen != total {
				t.Errorf("the console consumer read %d records, want %d:\n%s", seen, total, out)
			}
		})
	}
	t.Run("live", func(t *testing.T) { liveJavaGroupIsNeverMoved(t, kc, topic, store, b) })
	next, _ := offsetsStored(t, store, "s")
	offsetsSameNext(t, "the store after the exports", next, map[offsets.Partition]int64{
		offsetsTP(topic, 0): 45, offsetsTP(topic, 1): 40, offsetsTP(topic, 2): 10})
}

// liveJavaGroupIsNeverMoved runs Kafka's console consumer in a group, with
// the consumer protocol of Kafka 4 (KIP-848) where the broker has it, else
// the classic one, and checks that --to-group --execute refuses the group
// (exit 1, one line) and leaves it without a commit.
func liveJavaGroupIsNeverMoved(t *testing.T, kc *testkafka.Cluster, topic, store, b string) {
	group := "live-" + topic
	tool, err := filepath.Abs(filepath.Join("..", "scripts", "kafka-tool.sh"))
	if err != nil {
		t.Fatal(err)
	}
	type attempt struct{ protocol, class string }
	var attempts []attempt
	for _, protocol := range []string{"consumer", "classic"} {
		for _, class := range []string{"org.apache.kafka.tools.consumer.ConsoleConsumer", "kafka.tools.ConsoleConsumer"} {
			attempts = append(attempts, attempt{protocol, class})
		}
	}
	for _, at := range attempts {
		protocol := at.protocol
		args := []string{at.class, "--bootstrap-server", b, "--topic", topic,
			"--group", group + "-" + protocol, "--timeout-ms", "60000"}
		if protocol == "consumer" {
			args = append(args, "--consumer-property", "group.protocol=consumer")
		}
		cmd := exec.Command(tool, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the JVM is the script's child: stop both
		var errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exited }
		g := group + "-" + protocol
		joined := false
	wait:
		for i := 0; i < 300 && !joined; i++ {
			select {
			case <-exited:
				break wait // no such class, or no such protocol: try the next
			case <-time.After(100 * time.Millisecond):
			}
			// A broker without KIP-848 ignores group.protocol: the
			// member is then a classic one, live all the same.
			ds, err := kc.Admin().DescribeGroups(context.Background(), g)
			joined = err == nil && len(ds[g].Members) > 0
			if protocol == "consumer" && !joined {
				cs, err := kc.Admin().DescribeConsumerGroups(context.Background(), g)
				joined = err == nil && cs[g].Err == nil && len(cs[g].Members) > 0
			}
		}
		if !joined {
			stop()
			t.Logf("no %s-protocol member of %s joined group %s: %s", protocol, at.class, g, lastLine(errOut.String()))
			continue
		}
		stdout, stderr, code := runInProcess(t, "", "offsets", "export", "--to-group", g, "--execute", "-b", b, "--store", store)
		stop()
		if code != exitFailure || strings.Count(stderr, "kbatch: ") != 1 || !strings.Contains(stderr, "its offsets are written only while it is inactive") {
			t.Errorf("%s protocol: exit %d, want 1 with one refusal line; stdout %q stderr %q", protocol, code, stdout, stderr)
		}
		if got := kc.GroupOffsets(g); len(got) != 0 {
			t.Errorf("%s protocol: the live group was moved to %v", protocol, got)
		}
		t.Logf("%s protocol refused: %s", protocol, strings.TrimSpace(stderr))
		return
	}
	t.Fatal("no live group could be made with Kafka's console consumer")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
