package cli

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// A broker that lies beyond Fetch (offsets, throttles): kbatch ends with
// one line naming what the broker answered and exit 1, and never reads
// from, nor stores, a position the lie made up
// (docs/exit-codes-and-bad-input.md, "What a broker sends").

// TestImpossibleLogBoundsEndWithOneLine: a negative log start, or one
// above the high watermark, once made watch store -5 and then refuse its
// own store, start "earliest" past the end with exit 0, and replay retry
// for 30 s before naming an out-of-range offset.
func TestImpossibleLogBoundsEndWithOneLine(t *testing.T) {
	for name, bounds := range map[string][2]int64{
		"negative":        {-5, -3},
		"start above end": {20, 10},
	} {
		t.Run(name, func(t *testing.T) {
			fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
			fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
				fake.KeepControl()
				return testkafka.AnswerListOffsets(req.(*kmsg.ListOffsetsRequest), func(sp *kmsg.ListOffsetsResponseTopicPartition, ts int64) {
					sp.Offset = bounds[1]
					if ts == -2 {
						sp.Offset = bounds[0]
					}
				}), nil, true
			})
			addr := fake.ListenAddrs()[0]
			for _, args := range [][]string{
				{"watch", "--no-tui", "-b", addr, "-t", "events", "--reset", "earliest", "--until-end"},
				{"replay", "events:0:earliest-latest", "-b", addr},
				{"topics", "-b", addr},
			} {
				r := execKbatch(t, nil, args...)
				checkOneLine(t, r, exitFailure, []string{"events[0]", "which no log has"})
			}
		})
	}
}

// TestReplayEndsOnAThrottleOfDays: a Fetch answer asking for a wait of
// 2^31-1 ms (24 days) before the next fetch made replay sleep that long,
// without a word. It ends with exit 1 and one line naming the broker's
// throttle.
func TestReplayEndsOnAThrottleOfDays(t *testing.T) {
	fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
	fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		return testkafka.AnswerListOffsets(req.(*kmsg.ListOffsetsRequest), func(sp *kmsg.ListOffsetsResponseTopicPartition, ts int64) {
			sp.Offset = 3
			if ts == -2 {
				sp.Offset = 0
			}
		}), nil, true
	})
	fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ThrottleMillis = 1<<31 - 1 // and every partition left out
		return resp, nil, true
	})
	r := execKbatch(t, nil, "replay", "events:0:0-3", "-b", fake.ListenAddrs()[0])
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1] // after replay's summary lines
	if r.code != exitFailure || !strings.HasPrefix(last, "kbatch: read events[0] at offset 0: broker 0 asked to wait ") ||
		!strings.Contains(last, "(throttle_time_ms 2147483647)") || strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestHugeBrokerHostEndsWithOneShortLine: a broker address of 30 KB of
// escapes in the metadata made an error line of 48 KB. It is one line of
// about 2 KB, escaped, and still says what failed.
func TestHugeBrokerHostEndsWithOneShortLine(t *testing.T) {
	fake := testkafka.Fake(t, kfake.SeedTopics(1, "events"))
	host := strings.Repeat("a\x1b[2J", 6000) // a Kafka string holds at most 32 KiB
	fake.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 7, Host: host, Port: 9}}
		topic := kmsg.NewMetadataResponseTopic()
		topic.Topic = kmsg.StringPtr("events")
		part := kmsg.NewMetadataResponseTopicPartition()
		part.Leader, part.Replicas, part.ISR = 7, []int32{7}, []int32{7}
		topic.Partitions = []kmsg.MetadataResponseTopicPartition{part}
		resp.Topics = []kmsg.MetadataResponseTopic{topic}
		return resp, nil, true
	})
	r := execKbatch(t, nil, "watch", "--no-tui", "--no-store", "-t", "events", "-b", fake.ListenAddrs()[0], "--dial-timeout", "2s")
	checkOneLine(t, r, exitFailure, []string{"kbatch: cannot reach the Kafka cluster", `a\x1b[2Ja\x1b[2J`, " bytes cut]… "})
	checkNoControl(t, "stderr", r.stderr)
	if len(r.stderr) > 2200 {
		t.Errorf("an error line of %d bytes", len(r.stderr))
	}
}
