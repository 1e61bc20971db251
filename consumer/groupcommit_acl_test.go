package consumer

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A user without READ on the group cannot commit to it, and asking again
// does not grant it: the commits stop with one notice naming the
// permission, and the stream goes on and acks every batch.
func TestCommitGroupStopsWithoutPermission(t *testing.T) {
	if testkafka.Real() {
		t.Skip("needs kfake's ACLs")
	}
	const topic, group = "guarded", "billing"
	acl := func(rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: rt, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	kc := testkafka.NewWith(t, kfake.SeedTopics(1, topic), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "nogroup", "pw", acl(kmsg.ACLResourceTypeTopic, topic, kmsg.ACLOperationRead),
			acl(kmsg.ACLResourceTypeTopic, topic, kmsg.ACLOperationDescribe),
			acl(kmsg.ACLResourceTypeGroup, group, kmsg.ACLOperationDescribe)))
	pc, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for i := 0; i < 120; i++ {
		if err := pc.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: []byte(`{"n":1}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dial := func(user, pw string) *kafka.Client {
		cc := kafka.ClientConfig{Brokers: kc.Brokers, SASL: &kafka.SASL{Mechanism: "PLAIN", User: user, Password: pw}}
		c, err := kafka.DialWith(cc, kafka.Tuning{MaxWait: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	h := &harness{t: t, kc: kc, store: filepath.Join(t.TempDir(), "offsets.db")}
	st := h.openStore()
	defer st.Close()
	cfg := Config{Client: dial("admin", "admin"), Brokers: kc.Brokers, Topics: []string{topic}, Name: "test",
		Interval: 50 * time.Millisecond, Samples: 3, IdleDone: 300 * time.Millisecond, MetadataInterval: 200 * time.Millisecond,
		Store: st, Reset: offsets.ResetEarliest, UntilEnd: true, MaxPerPartition: 40}
	cfg.GroupCommit = kafka.NewGroupWriter(dial("nogroup", "pw"), group)
	cfg.GroupRetry = 10 * time.Millisecond
	evs := run(t, cfg)
	if e := ended(t, evs); e.Err != nil || e.Records != 120 || e.Batches != 3 {
		t.Fatalf("ended %+v", e)
	}
	stopped := notices(evs, offsets.CodeGroupCommitStopped)
	if len(stopped) != 1 || !strings.Contains(stopped[0].Message,
		`commits to consumer group billing stopped: not authorized to commit offsets of consumer group "billing" (GROUP_AUTHORIZATION_FAILED): the user needs READ on the group`) {
		t.Errorf("stopped notices %+v, want one naming the missing permission", stopped)
	}
	if n := notices(evs, offsets.CodeGroupCommitFailed); len(n) != 0 {
		t.Errorf("retry notices %+v, want none: asking again does not grant a permission", n)
	}
	sameOffsets(t, "store", storedNext(t, st, "test"), map[offsets.Partition]int64{{Topic: topic, Partition: 0}: 120})
}
