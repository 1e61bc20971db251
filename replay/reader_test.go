package replay

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// mockClient returns a client of a sarama MockBroker that leads partition
// t[0], says t's cleanup.policy is policy ("" for an error answer), and
// answers fetches with the given responses in turn (the last one
// repeats). Broker behaviour that kfake and a real cluster do not show on
// demand (compacted gaps, a lagging high watermark, retention moving the
// log start mid-read, empty answers from tiered storage) is scripted so.
func mockClient(t *testing.T, policy string, fetches ...any) *kafka.Client {
	t.Helper()
	mb := sarama.NewMockBroker(t, 1)
	t.Cleanup(mb.Close)
	configs := &sarama.DescribeConfigsResponse{Version: 1, Resources: []*sarama.ResourceResponse{{
		Type: sarama.TopicResource, Name: "t", Configs: []*sarama.ConfigEntry{{Name: "cleanup.policy", Value: policy}}}}}
	if policy == "" {
		configs.Resources[0].Configs = nil
		configs.Resources[0].ErrorCode = int16(sarama.ErrTopicAuthorizationFailed)
	}
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest":        sarama.NewMockMetadataResponse(t).SetBroker(mb.Addr(), mb.BrokerID()).SetLeader("t", 0, mb.BrokerID()),
		"FetchRequest":           sarama.NewMockSequence(fetches...),
		"OffsetRequest":          sarama.NewMockOffsetResponse(t).SetOffset("t", 0, sarama.OffsetOldest, 6).SetOffset("t", 0, sarama.OffsetNewest, 10),
		"DescribeConfigsRequest": sarama.NewMockWrapper(configs),
	})
	conf := sarama.NewConfig()
	conf.Version = sarama.V1_1_0_0 // fetch v7: the mock's legacy message sets decode as such
	conf.ApiVersionsRequest = false
	conf.Metadata.Retry.Max = 0
	c, err := kafka.DialWith(kafka.ClientConfig{Brokers: []string{mb.Addr()}}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// fetchAnswer is a fetch answer holding records at the given offsets
// (as legacy messages) with high watermark hwm.
func fetchAnswer(t *testing.T, hwm int64, offs ...int64) *sarama.MockFetchResponse {
	r := sarama.NewMockFetchResponse(t, len(offs)+1).SetHighWaterMark("t", 0, hwm)
	for _, o := range offs {
		r.SetMessage("t", 0, o, sarama.StringEncoder("v"))
	}
	return r
}

func readAll(t *testing.T, c *kafka.Client, from, until int64) ([]int64, []chunk, error) {
	t.Helper()
	rd := newReader(c, 1<<20, newBuffered(16<<20))
	rd.attempts, rd.backoff = 5, time.Millisecond
	var offs []int64
	var chunks []chunk
	task := Task{Read: offsets.Range{Partition: tp, From: from, Until: until}}
	err := rd.read(context.Background(), 0, task, func(c chunk) error {
		rd.buffer.release(c.mem)
		for _, m := range c.msgs {
			offs = append(offs, m.Offset)
		}
		c.msgs = nil
		chunks = append(chunks, c)
		return nil
	})
	return offs, chunks, err
}

// TestReadEndsOnTrailingGap: offsets 7..9 of a compacted topic hold no
// record, so the fetch from 7 comes back empty with the high watermark at
// 10; the read must end at 10 rather than wait for a record that never
// comes. When the cleanup policy cannot be read, compaction is assumed.
func TestReadEndsOnTrailingGap(t *testing.T) {
	for _, policy := range []string{"compact", "compact,delete", ""} {
		c := mockClient(t, policy, fetchAnswer(t, 10, 0, 1, 2, 5, 6))
		offs, chunks, err := readAll(t, c, 0, 10)
		if err != nil {
			t.Fatalf("policy %q: %v", policy, err)
		}
		if !reflect.DeepEqual(offs, []int64{0, 1, 2, 5, 6}) {
			t.Errorf("policy %q: offsets %v", policy, offs)
		}
		if last := chunks[len(chunks)-1]; last.next != 10 {
			t.Errorf("policy %q: ended at %d, want 10", policy, last.next)
		}
	}
}

// TestReadEmptyAnswerNotCompacted: on a topic that is not compacted an
// empty answer below the end proves nothing (tiered storage answers empty
// when a remote read is slow): the read fetches again and gets the rest,
// and an answer that stays empty is a failure, not an early end.
func TestReadEmptyAnswerNotCompacted(t *testing.T) {
	c := mockClient(t, "delete", fetchAnswer(t, 10, 0, 1, 2), fetchAnswer(t, 10), fetchAnswer(t, 10, 3, 4, 5, 6, 7, 8, 9))
	offs, _, err := readAll(t, c, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offs, seq(0, 10)) {
		t.Errorf("offsets %v, want 0..9", offs)
	}

	c = mockClient(t, "delete", fetchAnswer(t, 10, 0, 1, 2), fetchAnswer(t, 10))
	offs, _, err = readAll(t, c, 0, 10)
	if err == nil || !strings.Contains(err.Error(), "no record batch for offsets 3 → 10") {
		t.Fatalf("read %v, err %v; want a failure naming offsets 3 → 10", offs, err)
	}
}

// TestReadWaitsForLaggingEnd: a new leader can answer with a high
// watermark below the range for a moment; the read waits, then ends.
func TestReadWaitsForLaggingEnd(t *testing.T) {
	c := mockClient(t, "compact", fetchAnswer(t, 3, 0, 1, 2), fetchAnswer(t, 3), fetchAnswer(t, 5, 3))
	offs, chunks, err := readAll(t, c, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offs, []int64{0, 1, 2, 3}) || chunks[len(chunks)-1].next != 5 {
		t.Errorf("offsets %v, chunks %+v", offs, chunks)
	}
}

// TestReadLogStartMovesDuringRead: retention deletes offsets 3..5 while
// the read is at 3; they are reported missing and the read goes on at the
// new log start (6, from the ListOffsets answer).
func TestReadLogStartMovesDuringRead(t *testing.T) {
	gone := &sarama.FetchResponse{Version: 7}
	gone.AddError("t", 0, sarama.ErrOffsetOutOfRange)
	c := mockClient(t, "delete", fetchAnswer(t, 10, 0, 1, 2), gone, fetchAnswer(t, 10, 6, 7, 8, 9))
	offs, chunks, err := readAll(t, c, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(offs, []int64{0, 1, 2, 6, 7, 8, 9}) {
		t.Errorf("offsets %v", offs)
	}
	var missing []offsets.Range
	for _, c := range chunks {
		if c.missing != nil {
			missing = append(missing, *c.missing)
		}
	}
	want := []offsets.Range{{Partition: tp, From: 3, Until: 6}}
	if !reflect.DeepEqual(missing, want) {
		t.Errorf("missing %v, want %v", missing, want)
	}
}

// TestReadFailsOnLastingError: an error that does not go away ends the
// read with an error naming the partition, instead of hanging.
func TestReadFailsOnLastingError(t *testing.T) {
	bad := &sarama.FetchResponse{Version: 7}
	bad.AddError("t", 0, sarama.ErrTopicAuthorizationFailed)
	c := mockClient(t, "delete", bad)
	_, _, err := readAll(t, c, 0, 10)
	if err == nil || !strings.Contains(err.Error(), "t[0]") {
		t.Fatalf("err %v, want a failure naming t[0]", err)
	}
}
