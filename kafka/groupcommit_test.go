package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

func TestCommitGroupOffsetsWritesWithoutJoining(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("gc", 3)
	for p := int32(0); p < 3; p++ {
		kc.ProduceN(topic, p, 50, 10)
	}
	c := dialCluster(t, kc)
	tp := func(n int32) offsets.Partition { return offsets.Partition{Topic: topic, Partition: n} }
	group := "gc-" + topic

	st, err := DescribeGroup(c, group)
	if err != nil || len(st.Members) != 0 {
		t.Fatalf("unknown group described as %+v, %v", st, err)
	}
	if err := CommitGroupOffsets(c, group, map[offsets.Partition]int64{tp(0): 10, tp(1): 20}); err != nil {
		t.Fatal(err)
	}
	// A second commit moves one partition and leaves the other as it is.
	if err := CommitGroupOffsets(c, group, map[offsets.Partition]int64{tp(0): 5, tp(2): 50}); err != nil {
		t.Fatal(err)
	}
	want := map[offsets.Partition]int64{tp(0): 5, tp(1): 20, tp(2): 50}
	got := kc.GroupOffsets(group)
	for p, off := range want {
		if got[p] != off {
			t.Errorf("committed %v, want %v", got, want)
			break
		}
	}
	back, err := GroupOffsets(c, group)
	if err != nil || len(back) != 3 || back[tp(1)] != 20 {
		t.Errorf("kbatch reads back %v (%v), want %v", back, err, want)
	}
	st, err = DescribeGroup(c, group)
	if err != nil || len(st.Members) != 0 {
		t.Errorf("after the commits the group is %+v (%v); kbatch must never join it", st, err)
	}
}

// liveGroupAt3 is a cluster with a topic of prefix name and partitions
// partitions, 20 records on partition 0 (p0), and the group name-<topic>
// that has offset 3 of p0 committed and one live member (of the client
// options opts); c is a client dialled to it.
func liveGroupAt3(t *testing.T, name string, partitions int32, opts ...kgo.Opt) (kc *testkafka.Cluster, c *Client, group string, p0 offsets.Partition) {
	t.Helper()
	kc = testkafka.New(t)
	topic := kc.Topic(name, partitions)
	kc.ProduceN(topic, 0, 20, 10)
	group = name + "-" + topic
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: 0, At: 3})
	if resp, err := kc.Admin().CommitOffsets(context.Background(), group, o); err != nil || resp.Error() != nil {
		t.Fatalf("seed commit: %v %v", err, resp.Error())
	}
	kc.LiveMember(group, topic, opts...)
	return kc, dialCluster(t, kc), group, offsets.Partition{Topic: topic, Partition: 0}
}

// stillAt3 fails the test when the offset of p0 group has committed is
// no longer 3, the one liveGroupAt3 committed.
func stillAt3(t *testing.T, kc *testkafka.Cluster, group string, p0 offsets.Partition) {
	t.Helper()
	if got := kc.GroupOffsets(group)[p0]; got != 3 {
		t.Errorf("the live group's offset moved to %d, want 3", got)
	}
}

func TestCommitGroupOffsetsRefusesALiveGroup(t *testing.T) {
	kc, c, group, p0 := liveGroupAt3(t, "live", 2)
	err := CommitGroupOffsets(c, group, map[offsets.Partition]int64{p0: 15})
	var active *GroupActiveError
	if !errors.As(err, &active) || len(active.Members) != 1 || active.State != "Stable" {
		t.Fatalf("want a GroupActiveError with one member, got %v", err)
	}
	for _, w := range []string{"1 live member on ", "state Stable", "stop its consumers"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	// The broker's own refusal, when a member joins after the check, is
	// the same error with the members named.
	err = commitGroup(c, group, map[offsets.Partition]int64{p0: 15})
	if !errors.As(err, &active) || len(active.Members) != 1 {
		t.Fatalf("a commit the broker refused: want a GroupActiveError naming the member, got %v", err)
	}
	stillAt3(t, kc, group, p0)
}

// A consumer group of Kafka 4's protocol (KIP-848), whose members
// DescribeGroups does not list, is refused all the same and not moved.
func TestCommitGroupOffsetsRefusesAConsumerProtocolGroup(t *testing.T) {
	if testkafka.Real() {
		// A real 4.x broker describes such a group as GROUP_ID_NOT_FOUND
		// ("not a classic group") and refuses the commit itself;
		// TestGroupWrittenByKbatchIsReadByKafkasTools checks that with
		// Kafka's own consumer.
		t.Skip("kfake's answers for a KIP-848 group; the real broker's are checked with Kafka's own consumer")
	}
	kc, c, group, p0 := liveGroupAt3(t, "live848", 1, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
	err := CommitGroupOffsets(c, group, map[offsets.Partition]int64{p0: 15})
	var active *GroupActiveError
	if !errors.As(err, &active) || !strings.Contains(err.Error(), "stop its consumers first") {
		t.Fatalf("want a GroupActiveError, got %v", err)
	}
	stillAt3(t, kc, group, p0)
}

// The two permissions a commit needs (READ on the group, READ on the
// topic) are each named in one line when missing.
func TestCommitGroupOffsetsWithoutPermission(t *testing.T) {
	if testkafka.Real() {
		t.Skip("needs kfake's ACLs")
	}
	const topic, group = "guarded", "billing"
	acl := func(rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: rt, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	readTopic := acl(kmsg.ACLResourceTypeTopic, topic, kmsg.ACLOperationRead)
	describeTopic := acl(kmsg.ACLResourceTypeTopic, topic, kmsg.ACLOperationDescribe)
	describeGroup := acl(kmsg.ACLResourceTypeGroup, group, kmsg.ACLOperationDescribe)
	readGroup := acl(kmsg.ACLResourceTypeGroup, group, kmsg.ACLOperationRead)
	kc := testkafka.NewWith(t, kfake.SeedTopics(1, topic), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "nogroup", "pw", readTopic, describeTopic, describeGroup),
		kfake.User("PLAIN", "notopic", "pw", describeTopic, describeGroup, readGroup),
		kfake.User("PLAIN", "both", "pw", readTopic, describeTopic, describeGroup, readGroup))
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	for _, tc := range []struct {
		user string
		want string // "" for success
	}{
		{"nogroup", `not authorized to commit offsets of consumer group "billing" (GROUP_AUTHORIZATION_FAILED): the user needs READ on the group`},
		{"notopic", `not authorized to commit offsets of consumer group "billing" on topic guarded (TOPIC_AUTHORIZATION_FAILED): the user needs READ on the topic`},
		{"both", ""},
	} {
		c, err := Dial(ClientConfig{Brokers: kc.Brokers, SASL: &SASL{Mechanism: "PLAIN", User: tc.user, Password: "pw"}})
		if err != nil {
			t.Fatal(err)
		}
		err = CommitGroupOffsets(c, group, map[offsets.Partition]int64{p0: 0})
		_ = c.Close()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.user, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want+" (Kafka ACL)"):
			t.Errorf("%s: got %v\nwant %s (Kafka ACL)", tc.user, err, tc.want)
		case tc.want != "" && !errors.As(err, new(*GroupPermissionError)):
			t.Errorf("%s: %v is not a *GroupPermissionError: a follower of the stream would ask again forever", tc.user, err)
		}
	}
}

// A consumer group of Kafka 4's protocol (KIP-848) is described with its
// members and hosts (ConsumerGroupDescribe), so the plan refuses it
// before any write, the way it refuses a classic group.
func TestDescribeGroupListsConsumerProtocolMembers(t *testing.T) {
	if testkafka.Real() {
		t.Skip("kfake's consumer protocol; a real broker's is checked with Kafka's own consumer")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("cgd", 1)
	group := "cgd-" + topic
	kc.LiveMember(group, topic, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
	c := dialCluster(t, kc)
	st, err := DescribeGroup(c, group)
	if err != nil || len(st.Members) != 1 || st.Members[0].ClientID != "live-member" || st.Members[0].Host == "" || !st.Active() {
		t.Fatalf("consumer-protocol group described as %+v, %v; want its one live member and host", st, err)
	}
	msg := (&GroupActiveError{Group: group, State: st.State, Members: st.Members}).Error()
	if !strings.Contains(msg, "1 live member on "+st.Members[0].Host) {
		t.Errorf("refusal %q does not name the member's host", msg)
	}
}

// A 4.x broker's DescribeGroups says a consumer-protocol group is not
// found; ConsumerGroupDescribe's answer then gives its state and members,
// and a group it does not know either stays a new group.
func TestWithConsumerMembersNamesMembersDescribeGroupsDoesNotKnow(t *testing.T) {
	notFound := GroupState{Name: "orders"}
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.State = "orders", "Stable"
	for _, host := range []string{"/10.0.0.7", "/10.0.0.5", "/10.0.0.7"} {
		m := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		m.ClientID, m.ClientHost = "billing", host
		g.Members = append(g.Members, m)
	}
	st, err := withConsumerMembers(notFound, g)
	if err != nil || !st.Active() || st.State != "Stable" || len(st.Members) != 3 {
		t.Fatalf("got %+v, %v; want Stable with 3 members", st, err)
	}
	msg := (&GroupActiveError{Group: "orders", State: st.State, Members: st.Members}).Error()
	if !strings.Contains(msg, `"orders" has 3 live members on /10.0.0.5, /10.0.0.7 (state Stable)`) {
		t.Errorf("refusal %q does not name the members and hosts", msg)
	}

	unknown := kmsg.NewConsumerGroupDescribeResponseGroup()
	unknown.Group, unknown.ErrorCode = "orders", kerr.GroupIDNotFound.Code
	if st, err := withConsumerMembers(notFound, unknown); err != nil || st.Active() || len(st.Members) != 0 {
		t.Errorf("a group neither protocol knows: got %+v, %v; want a new group", st, err)
	}
	off := kmsg.NewConsumerGroupDescribeResponseGroup()
	off.Group, off.ErrorCode = "orders", kerr.UnsupportedVersion.Code // Kafka 3.7-3.9 without the consumer protocol
	if st, err := withConsumerMembers(notFound, off); err != nil || st.Active() || len(st.Members) != 0 {
		t.Errorf("a broker without the consumer protocol: got %+v, %v; want what DescribeGroups said", st, err)
	}
	denied := kmsg.NewConsumerGroupDescribeResponseGroup()
	denied.Group, denied.ErrorCode = "orders", kerr.GroupAuthorizationFailed.Code
	if _, err := withConsumerMembers(notFound, denied); err == nil || !strings.Contains(err.Error(), "needs DESCRIBE on the group") {
		t.Errorf("a denied describe: got %v", err)
	}
}

// A partition the broker leaves out of its OffsetCommit answer was not
// written: the commit fails naming it, and is never reported as done.
func TestCommitGroupOffsetsNamesAPartitionTheAnswerLeavesOut(t *testing.T) {
	if testkafka.Real() {
		t.Skip("scripts the broker's answer: kfake only")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("gc-out", 2)
	c := dialCluster(t, kc)
	kc.Fake.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.Fake.KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				if rp.Partition == 1 {
					continue // the answer leaves partition 1 out
				}
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	tp := func(n int32) offsets.Partition { return offsets.Partition{Topic: topic, Partition: n} }
	err := CommitGroupOffsets(c, "gc-out-"+topic, map[offsets.Partition]int64{tp(0): 1, tp(1): 2})
	if err == nil || !strings.Contains(err.Error(), "did not answer for "+tp(1).String()) {
		t.Fatalf("commit with partition 1 left out of the answer: %v, want an error naming it", err)
	}
}
