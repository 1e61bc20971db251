package testkafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Serve is what a scripted broker holds in one partition of its topic:
// the record batches a fetch from offset gets (written as they are,
// whatever they hold), and the partition's end (its high watermark and
// last stable offset; ListOffsets says 0 for the log start and end for
// the latest offset).
type Serve func(partition int32, offset int64) (batches []byte, end int64)

// NewScripted starts a one-broker kfake cluster with topic of partitions
// partitions whose Fetch and ListOffsets answers come from serve: a
// broker that sends what a test wants, corrupt or hostile included
// (kfake's ControlKey). The caller closes it.
func NewScripted(topic string, partitions int32, serve Serve) (*kfake.Cluster, error) {
	return NewScriptedWith(topic, partitions,
		func(sp *kmsg.FetchResponseTopicPartition, offset int64) {
			batches, end := serve(sp.Partition, offset)
			sp.RecordBatches, sp.HighWatermark, sp.LastStableOffset = batches, end, end
		},
		func(sp *kmsg.ListOffsetsResponseTopicPartition, timestamp int64) {
			_, end := serve(sp.Partition, 0)
			sp.Offset, sp.LeaderEpoch = end, 0
			if timestamp == -2 {
				sp.Offset = 0
			}
		})
}

// FetchAnswer fills sp, the answer of a fetch of partition sp.Partition
// from offset.
type FetchAnswer func(sp *kmsg.FetchResponseTopicPartition, offset int64)

// ListAnswer fills sp, the answer of ListOffsets for partition
// sp.Partition at timestamp (-2: the log start, -1: the end).
type ListAnswer func(sp *kmsg.ListOffsetsResponseTopicPartition, timestamp int64)

// NewScriptedWith is NewScripted with each partition's answer to Fetch
// and ListOffsets written by fetch and list.
func NewScriptedWith(topic string, partitions int32, fetch FetchAnswer, list ListAnswer) (*kfake.Cluster, error) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		return nil, err
	}
	fake.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		return AnswerFetch(req.(*kmsg.FetchRequest), fetch), nil, true
	})
	fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		return AnswerListOffsets(req.(*kmsg.ListOffsetsRequest), list), nil, true
	})
	return fake, nil
}

// AnswerFetch is a broker's answer to req: every partition asked, in the
// order asked, each filled by fetch from the offset asked.
func AnswerFetch(req *kmsg.FetchRequest, fetch FetchAnswer) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			fetch(&sp, rp.FetchOffset)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// AnswerListOffsets is a broker's answer to req: every partition asked, in
// the order asked, each filled by list at the timestamp asked. A partition
// answered without an error also carries its offset as the one old-style
// offset that version 0 of ListOffsets reads.
func AnswerListOffsets(req *kmsg.ListOffsetsRequest, list ListAnswer) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			list(&sp, rp.Timestamp)
			if sp.ErrorCode == 0 {
				sp.OldStyleOffsets = []int64{sp.Offset}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// Fake starts a one-broker kfake cluster made with opts, for a test that
// scripts the broker's answers (which a real cluster would not give); it
// is closed when the test ends.
func Fake(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	fake, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(fake.Close)
	return fake
}
