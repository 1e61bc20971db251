package cli

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// watch --isolation: committed (the default) never delivers the records of
// an aborted transaction; uncommitted delivers them with "aborted":true on
// their --sink lines, and a later committed transaction of the same
// producer unmarked.
func TestWatchIsolation(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("isolation", 1)
	kc.ProduceN(topic, 0, 2, 10) // 0, 1
	tp := kc.TxnProducer()
	tp.Produce(false, testkafka.Values(topic, 0, "a0", "a1")...) // 2, 3, abort marker 4
	tp.Produce(true, testkafka.Values(topic, 0, "c0")...)        // 5, commit marker 6
	kc.WaitVisible(topic, 0, 5)
	b := strings.Join(kc.Brokers, ",")
	for _, tc := range []struct {
		flags           []string
		offsets, marked []int64
	}{
		{nil, []int64{0, 1, 5}, nil},
		{[]string{"--isolation", "committed"}, []int64{0, 1, 5}, nil},
		{[]string{"--isolation", "uncommitted"}, []int64{0, 1, 2, 3, 5}, []int64{2, 3}},
	} {
		t.Run(strings.Join(append([]string{"default"}, tc.flags...), " "), func(t *testing.T) {
			sink := filepath.Join(t.TempDir(), "sink.jsonl")
			args := append([]string{"watch", "--no-tui", "-b", b, "-t", topic, "--no-store", "--sink", sink, "--reset", "earliest", "--until-end"}, tc.flags...)
			_, errOut, code := runKbatch(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			data := readFile(t, sink)
			var got, marked []int64
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var r struct {
					Offset  int64 `json:"offset"`
					Aborted bool  `json:"aborted"`
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				got = append(got, r.Offset)
				if r.Aborted {
					marked = append(marked, r.Offset)
				}
			}
			if !reflect.DeepEqual(got, tc.offsets) || !reflect.DeepEqual(marked, tc.marked) {
				t.Fatalf("sink offsets %v, aborted %v; want %v, %v", got, marked, tc.offsets, tc.marked)
			}
		})
	}
}
