package cli

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	store := offsetsEnv(t)
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
			offsetsOK(t)(offsetsRun(t, "", args...))

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
	next, _ := offsetsStored(t, store, "s")
	offsetsSameNext(t, "the store after the exports", next, map[offsets.Partition]int64{
		offsetsTP(topic, 0): 45, offsetsTP(topic, 1): 40, offsetsTP(topic, 2): 10})
}
