package sparkwatch

import (
	"testing"

	"github.com/kbatch-dev/kbatch/record"
)

// TestSamplesShareNoBytesWithTheAnswer: the records a replay hands the
// sampler point into its fetch answers; the samples are copies
// (consumer.Batch.Samples), so the screen can keep them as they are
// without pinning an answer, and nothing the replay does to its buffers
// afterwards changes them.
func TestSamplesShareNoBytesWithTheAnswer(t *testing.T) {
	answer := []byte("key1value1hkhv")
	recs := []record.Record{{Topic: "t", Offset: 7, Key: answer[0:4], Value: answer[4:10],
		Headers: []*record.Header{{Key: answer[10:12], Value: answer[12:14]}}}}
	s := &collectSink{}
	if err := s.Write(recs); err != nil {
		t.Fatal(err)
	}
	for i := range answer {
		answer[i] = 'x'
	}
	recs[0] = record.Record{}
	got := s.recs[0]
	if got.Offset != 7 || string(got.Key) != "key1" || string(got.Value) != "value1" ||
		string(got.Headers[0].Key) != "hk" || string(got.Headers[0].Value) != "hv" {
		t.Fatalf("sample changed with the answer: offset %d key %q value %q header %q=%q",
			got.Offset, got.Key, got.Value, got.Headers[0].Key, got.Headers[0].Value)
	}
}
