package kafka

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Offset lookups wait out a leader failover: kbatch started a few seconds
// after a leader was SIGKILLed, before the cluster fenced it, must not
// exit with "list offsets from broker …: connection refused" after a few
// attempts. Here the leader answers NOT_LEADER_OR_FOLLOWER to the first
// eight ListOffsets requests, and the lookup must still succeed.
func TestListBoundsWaitsOutALeaderFailover(t *testing.T) {
	if testkafka.Real() {
		t.Skip("injects errors into kfake")
	}
	kc, topic := clusterWith(t, "failover", 7)
	failed := refuseListOffsets(kc, 8, 6) // NOT_LEADER_OR_FOLLOWER
	c := dialCluster(t, kc)
	p := offsets.Partition{Topic: topic, Partition: 0}
	b, err := ListBounds(c, []offsets.Partition{p})
	if err != nil {
		t.Fatalf("ListBounds after %d refused lookups: %v", failed.Load(), err)
	}
	if got := b[p]; got.LogStart != 0 || got.HighWatermark != 7 {
		t.Errorf("bounds %+v, want [0, 7)", got)
	}
}

// A topic deleted between listing the cluster's topics and looking up
// their offsets (`kbatch topics` while other clients delete theirs) must
// not retry the deleted topic's lookups for 30 s and fail with "leader of
// events-…[1]: … does not exist on this broker". The lookup tells a
// deleted topic from one in trouble (unknown to the cluster for
// goneAfter), returns
// the other topics' bounds with a TopicsGoneError, and a listing of every
// topic leaves the deleted one out.
func TestListBoundsTopicDeletedMeanwhile(t *testing.T) {
	kc := testkafka.New(t)
	kept := kc.Topic("kept", 2)
	doomed := kc.Topic("doomed", 2)
	kc.ProduceN(kept, 1, 5, 10)
	c := dialCluster(t, kc)
	parts, err := TopicPartitions(c, []string{kept, doomed})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := kc.Admin().DeleteTopics(context.Background(), doomed)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete %s: %v", doomed, err)
	}

	bounds, err := ListBounds(c, parts)
	var gone *TopicsGoneError
	if !errors.As(err, &gone) || !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("ListBounds after %s was deleted: %v, want a TopicsGoneError", doomed, err)
	}
	if len(gone.Topics) != 1 || gone.Topics[0] != doomed || !strings.Contains(err.Error(), strconv.Quote(doomed)) {
		t.Errorf("gone %v (%v), want [%s]", gone.Topics, err, doomed)
	}
	if got := bounds[offsets.Partition{Topic: kept, Partition: 1}]; got.HighWatermark != 5 || len(bounds) != 2 {
		t.Errorf("bounds %v, want those of %s only, partition 1 up to 5", bounds, kept)
	}
	left, err := DropGone(parts, err)
	if err != nil || len(left) != 2 || left[0].Topic != kept || left[1].Topic != kept {
		t.Errorf("DropGone: %v, %v; want the 2 partitions of %s", left, err, kept)
	}
	if left, err := DropGone(parts, io.EOF); err != io.EOF || len(left) != len(parts) {
		t.Errorf("DropGone of another error: %v, %v", left, err)
	}
}

// A topic the cluster does not know for a few seconds of metadata
// answers and knows again after (a new topic a lagging broker has not
// heard of yet) is waited for, not taken for deleted.
func TestListBoundsTopicMissingForAWhileIsNotGone(t *testing.T) {
	if testkafka.Real() {
		t.Skip("injects errors into kfake")
	}
	kc, topic := clusterWith(t, "late", 4)
	c := dialCluster(t, kc)
	parts, err := TopicPartitions(c, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(kc.Brokers[0])
	portN, _ := strconv.Atoi(port)
	refuseListOffsets(kc, 1, 3) // UNKNOWN_TOPIC_OR_PARTITION
	var metaRefused atomic.Int32
	// Every metadata answer for the topic says it is unknown for a time
	// shorter than goneAfter (several refreshes in a row); then it is
	// back.
	back := time.Now().Add(goneAfter * 3 / 4)
	kc.Fake.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.Fake.KeepControl()
		r := req.(*kmsg.MetadataRequest)
		if len(r.Topics) == 0 || r.Topics[0].Topic == nil || *r.Topics[0].Topic != topic || time.Now().After(back) {
			return nil, nil, false
		}
		metaRefused.Add(1)
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 0, host, int32(portN)
		resp.Brokers = append(resp.Brokers, b)
		resp.ControllerID = 0
		for _, rt := range r.Topics {
			st := kmsg.NewMetadataResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = 3
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	b, err := ListBounds(c, parts)
	if err != nil {
		t.Fatalf("ListBounds of a topic unknown to %d metadata answers, then back: %v", metaRefused.Load(), err)
	}
	if got := b[parts[0]]; got.HighWatermark != 4 {
		t.Errorf("bounds %+v, want the high watermark 4", got)
	}
	if metaRefused.Load() < 4 {
		t.Errorf("only %d metadata answers said the topic was unknown: the case (two refreshes of the topic alone) was not made", metaRefused.Load())
	}
}

// refuseListOffsets makes kc answer its first n ListOffsets requests with
// the error code for every partition asked; it counts the refused ones.
func refuseListOffsets(kc *testkafka.Cluster, n int32, code int16) *atomic.Int32 {
	var refused atomic.Int32
	kc.Fake.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.Fake.KeepControl()
		if refused.Load() >= n {
			return nil, nil, false
		}
		refused.Add(1)
		return testkafka.AnswerListOffsets(req.(*kmsg.ListOffsetsRequest), func(sp *kmsg.ListOffsetsResponseTopicPartition, _ int64) {
			sp.ErrorCode = code
		}), nil, true
	})
	return &refused
}
