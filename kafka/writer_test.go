package kafka

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	saslplain "github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// The vectors of Kafka's own UtilsTest.testMurmur2: on math.MaxInt32
// partitions, a key's partition is its murmur2 hash made positive.
func TestKeyPartitionKafkaVectors(t *testing.T) {
	for in, hash := range map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		if got, want := KeyPartition([]byte(in), math.MaxInt32), hash&math.MaxInt32; got != want {
			t.Errorf("KeyPartition(%q, MaxInt32) = %d, want %d (murmur2 %d made positive)", in, got, want, hash)
		}
	}
	// murmur2 of no bytes is 275646681; a nil key is hashed as no bytes,
	// not sent to a random partition.
	for _, key := range [][]byte{nil, {}} {
		if got := KeyPartition(key, math.MaxInt32); got != 275646681 {
			t.Errorf("KeyPartition(%#v, MaxInt32) = %d, want murmur2 of no bytes, 275646681", key, got)
		}
	}
}

// KeyPartition puts a key where franz-go's default (Kafka-compatible)
// partitioner puts it, for every key length and partition count tried.
func TestKeyPartitionMatchesFranzGo(t *testing.T) {
	p := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, n := range []int{1, 3, 7, 12, 100} {
		for i := 0; i < 300; i++ {
			key := []byte(strings.Repeat("k", i%9) + fmt.Sprint(i*7919))
			want := p.Partition(&kgo.Record{Key: key}, n)
			if got := KeyPartition(key, int32(n)); int(got) != want {
				t.Fatalf("KeyPartition(%q, %d) = %d, franz-go says %d", key, n, got, want)
			}
		}
	}
}

func TestWriterProducesByKeyAndToAPartition(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("write", 6)
	w := dialWriter(t, kc)

	key := []byte("user-42")
	res, err := w.Write(WriteRequest{Topic: topic, Partition: ByKey, Key: key, Value: []byte(`{"a":1}`),
		Headers: []record.Header{{Key: []byte("source"), Value: []byte("kbatch")}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := KeyPartition(key, 6); res.Partition != want {
		t.Errorf("keyed record went to partition %d, want %d", res.Partition, want)
	}
	got := kc.RecordAt(topic, res.Partition, res.Offset)
	if string(got.Key) != "user-42" || string(got.Value) != `{"a":1}` || len(got.Headers) != 1 || got.Headers[0].Key != "source" || string(got.Headers[0].Value) != "kbatch" {
		t.Errorf("record read back: key %q value %q headers %v", got.Key, got.Value, got.Headers)
	}

	// An explicit partition, an absent key and an empty value.
	res2, err := w.Write(WriteRequest{Topic: topic, Partition: 4, Value: []byte{}})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Partition != 4 {
		t.Errorf("partition %d, want 4", res2.Partition)
	}
	got = kc.RecordAt(topic, 4, res2.Offset)
	if got.Key != nil || got.Value == nil || len(got.Value) != 0 {
		t.Errorf("want a null key and an empty value, got key %v value %v", got.Key, got.Value)
	}
}

func TestWriterErrorsAreOneSentence(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("werr", 2)
	w := dialWriter(t, kc)
	_, err := w.Write(WriteRequest{Topic: topic, Partition: 5, Value: []byte("x")})
	if err == nil || !strings.Contains(err.Error(), "has no partition 5: it has 2 (0 to 1)") {
		t.Errorf("partition out of range: %v", err)
	}
	_, err = w.Write(WriteRequest{Topic: "no-such-topic-here", Partition: ByKey, Value: []byte("x")})
	if err == nil || !strings.Contains(err.Error(), `topic "no-such-topic-here" does not exist`) {
		t.Errorf("missing topic: %v", err)
	}
}

func TestWriterRecordTooLarge(t *testing.T) {
	if testkafka.Real() {
		t.Skip("sets kfake's message.max.bytes")
	}
	kc := testkafka.NewWith(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": "2000"}))
	topic := kc.Topic("big", 1)
	w := dialWriter(t, kc)
	_, err := w.Write(WriteRequest{Topic: topic, Partition: 0, Value: make([]byte, 5000)})
	if err == nil || !strings.Contains(err.Error(), "is larger than topic") {
		t.Errorf("too large: %v", err)
	}
}

// A user allowed to read but not to write gets one line naming WRITE;
// nothing is written.
func TestWriterWithoutWritePermission(t *testing.T) {
	if testkafka.Real() {
		t.Skip("needs kfake's ACLs")
	}
	const topic = "guarded"
	kc := testkafka.NewWith(t, kfake.SeedTopics(1, topic), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "reader", "pw",
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: topic, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationRead, Allow: true},
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: topic, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribe, Allow: true}))
	w, err := DialWriter(ClientConfig{Brokers: kc.Brokers, SASL: &SASL{Mechanism: "PLAIN", User: "reader", Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, err = w.Write(WriteRequest{Topic: topic, Partition: 0, Value: []byte("x")})
	if err == nil || !strings.Contains(err.Error(), "needs the WRITE permission") {
		t.Errorf("want a missing WRITE permission, got %v", err)
	}
}

func TestTopicGroupsReadsCommittedOffsets(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("grp", 3)
	other := kc.Topic("grp-other", 1)
	adm := kc.Admin()
	ctx := context.Background()
	commit := func(group string, topic string, offs map[int32]int64) {
		t.Helper()
		var o kadm.Offsets
		for p, off := range offs {
			o.Add(kadm.Offset{Topic: topic, Partition: p, At: off})
		}
		resp, err := adm.CommitOffsets(ctx, group, o)
		if err != nil || resp.Error() != nil {
			t.Fatalf("commit %s: %v %v", group, err, resp.Error())
		}
	}
	commit("billing", topic, map[int32]int64{0: 5, 2: 9})
	commit("audit", other, map[int32]int64{0: 1}) // another topic: left out

	c := dialCluster(t, kc)
	parts := []offsets.Partition{{Topic: topic, Partition: 0}, {Topic: topic, Partition: 1}, {Topic: topic, Partition: 2}}
	groups, total, err := TopicGroups(c, parts)
	if err != nil {
		t.Fatal(err)
	}
	if total < 2 {
		t.Errorf("total %d, want at least the 2 groups committed", total)
	}
	if len(groups) != 1 || groups[0].Name != "billing" {
		t.Fatalf("groups %+v, want billing only", groups)
	}
	want := map[offsets.Partition]int64{parts[0]: 5, parts[2]: 9}
	if fmt.Sprint(groups[0].Offsets) != fmt.Sprint(want) {
		t.Errorf("offsets %v, want %v", groups[0].Offsets, want)
	}
}

// Kafka lists only the groups a user may DESCRIBE: without that
// permission a group that committed offsets on the topic is not seen (the
// screen says so), with it the group and its offsets are.
func TestTopicGroupsSeesOnlyDescribableGroups(t *testing.T) {
	if testkafka.Real() {
		t.Skip("needs kfake's ACLs")
	}
	const topic = "guarded"
	readTopic := kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: topic, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationRead, Allow: true}
	describeGroup := kfake.ACL{Resource: kmsg.ACLResourceTypeGroup, Name: "billing", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribe, Allow: true}
	kc := testkafka.NewWith(t, kfake.SeedTopics(1, topic), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "reader", "pw", readTopic),
		kfake.User("PLAIN", "ops", "pw", readTopic, describeGroup))
	admin, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.SASL(plainAuth("admin", "admin")))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: 0, At: 3})
	if resp, err := kadm.NewClient(admin).CommitOffsets(context.Background(), "billing", o); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	parts := []offsets.Partition{{Topic: topic, Partition: 0}}
	for _, tc := range []struct {
		user string
		want int
	}{{"reader", 0}, {"ops", 1}} {
		c, err := Dial(ClientConfig{Brokers: kc.Brokers, SASL: &SASL{Mechanism: "PLAIN", User: tc.user, Password: "pw"}})
		if err != nil {
			t.Fatal(err)
		}
		groups, _, err := TopicGroups(c, parts)
		_ = c.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.user, err)
		}
		if len(groups) != tc.want {
			t.Errorf("%s sees %+v, want %d groups", tc.user, groups, tc.want)
		}
		if tc.want == 1 && (groups[0].Err != nil || groups[0].Offsets[parts[0]] != 3) {
			t.Errorf("%s: %+v, want billing at 3", tc.user, groups[0])
		}
	}
}

func plainAuth(user, pass string) sasl.Mechanism {
	return saslplain.Auth{User: user, Pass: pass}.AsMechanism()
}
