package consumer

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

func storedNext(t *testing.T, st *offsets.Store, name string) map[offsets.Partition]int64 {
	t.Helper()
	info, ok, err := st.Stream(name)
	if err != nil || !ok {
		t.Fatalf("stream %s: %v %v", name, ok, err)
	}
	return info.Next
}

func sameOffsets(t *testing.T, what string, got, want map[offsets.Partition]int64) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// After the stream ends, the group holds exactly the store's next
// offsets, read back by another client; one group-commit notice says so.
func TestCommitGroupFollowsTheAckedOffsets(t *testing.T) {
	h := newHarness(t)
	topic := h.kc.Topic("gc", 3)
	h.kc.ProduceN(topic, 0, 250, 20)
	h.kc.ProduceN(topic, 1, 120, 20)
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.UntilEnd, cfg.MaxPerPartition = offsets.ResetEarliest, true, 100
	group := "follow-" + topic
	cfg.GroupCommit = kafka.NewGroupWriter(cfg.Client, group)
	evs := run(t, cfg)
	if e := ended(t, evs); e.Err != nil || e.Reason != "until-end" || e.Batches < 3 {
		t.Fatalf("ended %+v", e)
	}
	next := storedNext(t, st, "test")
	sameOffsets(t, "group after the stream", h.kc.GroupOffsets(group), next)
	if n := notices(evs, offsets.CodeGroupCommit); len(n) != 1 {
		t.Errorf("group-commit notices %+v, want one (the first commit)", n)
	}
	if n := notices(evs, offsets.CodeGroupCommitFailed); len(n) != 0 {
		t.Errorf("failures %+v", n)
	}
}

// flakyGroup fails its first failures commits, then writes to a map.
type flakyGroup struct {
	mu        sync.Mutex
	failures  int
	calls     int
	committed map[offsets.Partition]int64
	active    bool // every commit is refused with live members
}

func (f *flakyGroup) Group() string { return "flaky" }

func (f *flakyGroup) CommitGroup(next map[offsets.Partition]int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.active {
		return &kafka.GroupActiveError{Group: "flaky", State: "Stable", Members: []kafka.GroupMember{{ClientID: "c", Host: "/10.0.0.5"}}}
	}
	if f.calls <= f.failures {
		return errors.New("coordinator not available")
	}
	if f.committed == nil {
		f.committed = map[offsets.Partition]int64{}
	}
	maps.Copy(f.committed, next)
	return nil
}

// A failed commit is a notice and a retry with the positions acked by
// then; no batch waits for it and none is lost, and the group ends at the
// store's offsets.
func TestCommitGroupRetriesAFailedCommit(t *testing.T) {
	_, _, st, cfg := storedStream(t, "gcfail", 20, 300, 300)
	cfg.Reset, cfg.UntilEnd, cfg.MaxPerPartition = offsets.ResetEarliest, true, 50
	fg := &flakyGroup{failures: 3}
	cfg.GroupCommit, cfg.GroupRetry = fg, 1
	evs := run(t, cfg)
	e := ended(t, evs)
	if e.Err != nil || e.Reason != "until-end" || e.Records != 600 {
		t.Fatalf("ended %+v: every record must be acked whatever the group commits do", e)
	}
	failed := notices(evs, offsets.CodeGroupCommitFailed)
	if len(failed) != 3 || !strings.Contains(failed[0].Message, "commit to consumer group flaky failed, tried again in") ||
		!strings.Contains(failed[0].Message, "the batch stays acked") {
		t.Errorf("failure notices %+v, want 3", failed)
	}
	if n := notices(evs, offsets.CodeGroupCommit); len(n) != 1 {
		t.Errorf("group-commit notices %+v, want one after the failures", n)
	}
	next := storedNext(t, st, "test")
	fg.mu.Lock()
	sameOffsets(t, "group after the stream", fg.committed, next)
	fg.mu.Unlock()
	// The notices are in the store's event log too.
	evlog, err := st.Events("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evlog {
		if ev.Code == offsets.CodeGroupCommitFailed {
			n++
		}
	}
	if n != 3 {
		t.Errorf("the event log holds %d group-commit-failed events, want 3", n)
	}
}

// A group with live members stops the commits with one notice; the
// stream goes on and acks every batch.
func TestCommitGroupStopsAtALiveMember(t *testing.T) {
	_, _, _, cfg := storedStream(t, "gclive", 20, 300)
	cfg.Reset, cfg.UntilEnd, cfg.MaxPerPartition = offsets.ResetEarliest, true, 50
	fg := &flakyGroup{active: true}
	cfg.GroupCommit = fg
	evs := run(t, cfg)
	if e := ended(t, evs); e.Err != nil || e.Records != 300 || e.Batches != 6 {
		t.Fatalf("ended %+v", e)
	}
	stopped := notices(evs, offsets.CodeGroupCommitStopped)
	if len(stopped) != 1 || !strings.Contains(stopped[0].Message, `commits to consumer group flaky stopped: consumer group "flaky" has 1 live member on /10.0.0.5 (state Stable)`) {
		t.Errorf("stopped notices %+v, want one naming the member", stopped)
	}
	fg.mu.Lock()
	defer fg.mu.Unlock()
	if fg.calls != 1 {
		t.Errorf("%d commits tried, want 1: a live group stops them", fg.calls)
	}
}

// Against the broker: a real live member in the group, and the group's
// offset does not move.
func TestCommitGroupNeverMovesALiveGroup(t *testing.T) {
	h := newHarness(t)
	topic := h.topicWith("gcmember", 20, 100)
	group := "member-" + topic
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: 0, At: 7})
	if resp, err := h.kc.Admin().CommitOffsets(context.Background(), group, o); err != nil || resp.Error() != nil {
		t.Fatalf("seed: %v %v", err, resp.Error())
	}
	h.kc.LiveMember(group, topic)
	st := h.storeClosedAtEnd()
	cfg := h.config(st, topic)
	cfg.Reset, cfg.UntilEnd = offsets.ResetEarliest, true
	cfg.GroupCommit = kafka.NewGroupWriter(cfg.Client, group)
	evs := run(t, cfg)
	if e := ended(t, evs); e.Err != nil || e.Records != 100 {
		t.Fatalf("ended %+v", e)
	}
	if n := notices(evs, offsets.CodeGroupCommitStopped); len(n) != 1 {
		t.Errorf("stopped notices %+v, want one", n)
	}
	p0 := offsets.Partition{Topic: topic, Partition: 0}
	if got := h.kc.GroupOffsets(group)[p0]; got != 7 {
		t.Errorf("the live group moved to %d, want 7", got)
	}
}

// stuckGroup's commits wait until release is closed.
type stuckGroup struct {
	entered chan struct{} // a commit started
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	last    map[offsets.Partition]int64
}

func (s *stuckGroup) Group() string { return "stuck" }

func (s *stuckGroup) CommitGroup(next map[offsets.Partition]int64) error {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[offsets.Partition]int64{}
	}
	maps.Copy(s.last, next)
	return nil
}

// A group commit that does not answer holds no batch back: every batch
// is acked while the first commit hangs; the stream's end waits for the
// last commit, which carries the last acked offsets.
func TestCommitGroupNeverHoldsABatchBack(t *testing.T) {
	_, _, st, cfg := storedStream(t, "gcstuck", 20, 400)
	cfg.Reset, cfg.UntilEnd, cfg.MaxPerPartition = offsets.ResetEarliest, true, 50
	sg := &stuckGroup{entered: make(chan struct{}), release: make(chan struct{})}
	cfg.GroupCommit = sg
	s := start(t, cfg)
	defer s.Close()
	var records int64
	acked := 0
	for records < 400 {
		ev, ok := <-s.Events()
		if !ok {
			t.Fatalf("the stream ended after %d records", records)
		}
		if b, ok := ev.(*BatchEvent); ok && b.Batch.State == offsets.StateAcked {
			records += b.Batch.Records
			acked++
		}
		if _, ok := ev.(*Ended); ok {
			t.Fatalf("ended before the hung commit was released, after %d records", records)
		}
	}
	<-sg.entered // the first commit is hanging, and all 8 batches are acked
	if acked != 8 {
		t.Errorf("%d batches acked while the commit hung, want 8", acked)
	}
	close(sg.release)
	var end *Ended
	for ev := range s.Events() {
		if e, ok := ev.(*Ended); ok {
			end = e
		}
	}
	if end == nil || end.Err != nil || end.Records != 400 {
		t.Fatalf("ended %+v", end)
	}
	sg.mu.Lock()
	defer sg.mu.Unlock()
	sameOffsets(t, "group after the stream", sg.last, storedNext(t, st, "test"))
}

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
	dialAs := func(user, pw string) *kafka.Client {
		return dial(t, kafka.ClientConfig{Brokers: kc.Brokers, SASL: &kafka.SASL{Mechanism: "PLAIN", User: user, Password: pw}})
	}
	h := &harness{t: t, kc: kc, store: filepath.Join(t.TempDir(), "offsets.db")}
	st := h.storeClosedAtEnd()
	cfg := Config{Client: dialAs("admin", "admin"), Brokers: kc.Brokers, Topics: []string{topic}, Name: "test",
		Interval: 50 * time.Millisecond, Samples: 3, IdleDone: 300 * time.Millisecond, MetadataInterval: 200 * time.Millisecond,
		Store: st, Reset: offsets.ResetEarliest, UntilEnd: true, MaxPerPartition: 40}
	cfg.GroupCommit = kafka.NewGroupWriter(dialAs("nogroup", "pw"), group)
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
