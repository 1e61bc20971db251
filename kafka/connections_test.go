package kafka

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	krb5client "github.com/jcmturner/gokrb5/v8/client"
	krb5config "github.com/jcmturner/gokrb5/v8/config"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// A client made by Another sends every request but Fetch over the first
// client's connections: reading through it opens fetch connections of
// its own and no other. Either client may be closed first; the other
// keeps working until it is closed too.
func TestAnotherSharesTheClientsConnections(t *testing.T) {
	const clientID = "another-count"
	kc, count := testkafka.Counted(t, 3)
	topic := kc.Topic("another", 3)
	for p := int32(0); p < 3; p++ {
		kc.ProduceN(topic, p, 5, 10)
	}
	c, err := Dial(ClientConfig{Brokers: kc.Brokers, ClientID: clientID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	parts, err := TopicPartitions(c, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	// read lists the bounds and fetches each partition with cl.
	read := func(cl *Client) {
		t.Helper()
		bounds, err := ListBounds(cl, parts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := TopicIDs(cl, []string{topic}); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			req := NewFetchRequest(cl.FetchOptions(), 1<<20)
			req.Add(p, 0, 1<<20)
			resp, err := cl.FetchLeader(p, req)
			if err != nil {
				t.Fatal(err)
			}
			if a := resp.Partition(p); a == nil || a.Err != nil || a.HighWatermark != bounds[p].HighWatermark {
				t.Fatalf("%s: answer %+v, want no error and high watermark %d", p, a, bounds[p].HighWatermark)
			}
		}
	}
	read(c)
	kgo0 := count.OpenedBy(clientID, "kgo")

	other, err := c.Another()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	read(other)
	// One sarama client: at most one connection open to each broker,
	// and one more opened in all, to the bootstrap address.
	for b, n := range oneSaramaConnEach(count, clientID) {
		if n > 1 {
			t.Errorf("broker %s: %d sarama connections open with both clients, want 1", b, n)
		}
	}
	opened := 0
	for _, n := range count.OpenedBy(clientID, "sarama") {
		opened += n
	}
	if opened > len(kc.Brokers)+1 {
		t.Errorf("sarama connections opened: %v, want at most one to each of the %d brokers and one to the bootstrap address", count.OpenedBy(clientID, "sarama"), len(kc.Brokers))
	}
	kgo1 := count.OpenedBy(clientID, "kgo")
	leaders := map[string]bool{}
	for _, p := range parts {
		b, err := c.Leader(p)
		if err != nil {
			t.Fatal(err)
		}
		leaders[b.Addr] = true
	}
	for b := range leaders {
		if kgo1[b] <= kgo0[b] {
			t.Errorf("broker %s: %d fetch client connections before Another, %d after; want the other client's own fetch connection to the leader", b, kgo0[b], kgo1[b])
		}
	}

	// The first closed first: the other reads on; closed in turn, every
	// connection is closed.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed twice, it does not close the other's connections.
	if err := c.Close(); err == nil {
		t.Error("a client closed twice: no error")
	}
	if _, err := c.Another(); err == nil {
		t.Error("Another of a closed client: no error")
	}
	read(other)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Another(); err == nil {
		t.Error("Another of a closed client: no error")
	}
	waitClosed(t, count, clientID)
}

// waitClosed waits until no connection of clientID is open: every
// connection of closed clients is closed, at once or as soon as the
// oneSaramaConnEach returns the sarama connections of clientID open at
// each broker once each broker holds at most one, or after 30 s: a
// broker sees a connection the client closed only when it reads its end.
func oneSaramaConnEach(count *testkafka.ConnCount, clientID string) map[string]int {
	for range 300 {
		open, over := count.OpenBy(clientID, "sarama"), false
		for _, n := range open {
			over = over || n > 1
		}
		if !over {
			return open
		}
		time.Sleep(100 * time.Millisecond)
	}
	return count.OpenBy(clientID, "sarama")
}

// broker's end sees it.
func waitClosed(t *testing.T, count *testkafka.ConnCount, clientID string) {
	t.Helper()
	for range 300 {
		if len(count.Open(clientID)) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("connections still open after every client closed: %v", count.Open(clientID))
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A process logs in to the KDC once per set of credentials: sarama's
// connections and the fetch clients (Dial's, Another's, a second
// Dial's) share the one login, which closing a client leaves alone.
func TestKerberosLogsInOncePerProcess(t *testing.T) {
	logins := 0
	saved := kerberosLogin
	forgetKerberosLogins()
	t.Cleanup(func() {
		kerberosLogin = saved
		forgetKerberosLogins()
	})
	kerberosLogin = func(g *sarama.GSSAPIConfig) (*krb5client.Client, error) {
		logins++
		return krb5client.NewWithPassword(g.Username, g.Realm, g.Password, krb5config.New()), nil
	}
	cc := ClientConfig{Brokers: []string{"127.0.0.1:1"}, SASL: &SASL{Mechanism: "GSSAPI", User: "reader", Password: "secret",
		Kerberos: &Kerberos{Realm: "LOGIN-ONCE.TEST", ServiceName: "kafka"}}}
	// sarama's connections (three brokers and the bootstrap address)
	// authenticate through the dialer of its configuration.
	conf := cc.saramaConfig()
	d, ok := conf.Net.Proxy.Dialer.(*saslDialer)
	if !ok || conf.Net.SASL.Enable || !conf.Net.Proxy.Enable {
		t.Fatalf("sarama's GSSAPI connections: dialer %T, sarama's own SASL %v; want them authenticated by the dialer", conf.Net.Proxy.Dialer, conf.Net.SASL.Enable)
	}
	for i := range 4 {
		if _, err := d.mechanism(); err != nil {
			t.Fatalf("sarama connection %d: %v", i, err)
		}
	}
	for i := range 3 {
		if _, err := saslMechanism(cc, cc.saramaConfig()); err != nil {
			t.Fatalf("mechanism %d: %v", i, err)
		}
	}
	// The fetch client made of it closes, its login stays.
	kc, err := newFetchClient(cc, cc.saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	kc.Close()
	if _, err := saslMechanism(cc, cc.saramaConfig()); err != nil {
		t.Fatal(err)
	}
	if logins != 1 {
		t.Errorf("%d logins for one principal, want 1", logins)
	}
	cl, err := kerberosClient(&cc.saramaConfig().Net.SASL.GSSAPI)
	if err != nil || cl.Credentials.UserName() != "reader" {
		t.Errorf("the shared client after a fetch client closed: %v, user %q; want the principal's", err, cl.Credentials.UserName())
	}

	other := cc
	other.SASL = &SASL{Mechanism: "GSSAPI", User: "writer", Password: "secret", Kerberos: cc.SASL.Kerberos}
	if _, err := saslMechanism(other, other.saramaConfig()); err != nil {
		t.Fatal(err)
	}
	if logins != 2 {
		t.Errorf("%d logins for two principals, want 2", logins)
	}
}

// forgetKerberosLogins empties the process's logins.
func forgetKerberosLogins() {
	kerberosLogins.mu.Lock()
	kerberosLogins.clients = nil
	kerberosLogins.mu.Unlock()
}

// Under a protocol version before 2.8 topic ids are asked by the fetch
// client, over a connection that closes when idle; a cluster whose
// Metadata cannot carry ids (before Kafka 2.8) is asked once, not at
// every metadata refresh.
func TestTopicIDsOfAnOldClusterAreAskedOnce(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.SeedTopics(1, "old"), kfake.MaxVersions(kversion.V2_7_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	c, err := Dial(ClientConfig{Brokers: fake.ListenAddrs(), Version: "2.4.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var asked atomic.Int32
	fake.ControlKey(kmsg.Metadata.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		asked.Add(1)
		return nil, nil, false
	})
	for i := range 3 {
		ids, err := TopicIDs(c, []string{"old"})
		if err != nil || len(ids) != 0 {
			t.Fatalf("ask %d: ids %v, %v; want none from a cluster before 2.8", i, ids, err)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("%d Metadata requests for three asks, want 1", n)
	}
}

// A bootstrap address that refuses connections is passed over: the
// address that answered is not kept open beside sarama's connection to the
// same broker by id, so the broker holds one sarama connection. sarama
// asks its addresses in a random order, so the dial is made several times:
// each order is met with a chance of 63 in 64.
func TestBootstrapPastADeadAddressKeepsOneConnection(t *testing.T) {
	kc, count := testkafka.Counted(t, 1)
	topic := kc.Topic("dead-seed", 2)
	kc.ProduceN(topic, 0, 3, 10)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	_ = dead.Close()
	for try := range 7 {
		clientID := fmt.Sprintf("dead-seed-count-%d", try)
		c, err := Dial(ClientConfig{Brokers: append([]string{deadAddr}, kc.Brokers...), ClientID: clientID})
		if err != nil {
			t.Fatal(err)
		}
		parts, err := TopicPartitions(c, []string{topic})
		if err != nil {
			t.Fatal(err)
		}
		// Requests to the broker by id: its own sarama connection.
		if _, err := ListBounds(c, parts); err != nil {
			t.Fatal(err)
		}
		if _, err := TopicIDs(c, []string{topic}); err != nil {
			t.Fatal(err)
		}
		for b, n := range oneSaramaConnEach(count, clientID) {
			if n > 1 {
				t.Errorf("dial %d: broker %s: %d sarama connections open, want 1 (the bootstrap one closed)", try, b, n)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, count, clientID)
	}
}

// Clients made by Another, used and closed concurrently with each other
// and with the first client, share its sarama client until the last of
// them is closed: none of them meets a closed client while open, each
// Close succeeds once, and every connection is closed at the end.
func TestAnotherClosedConcurrentlyClosesTheSharedClientOnce(t *testing.T) {
	const clientID = "another-concurrent"
	kc, count := testkafka.Counted(t, 2)
	topic := kc.Topic("another-concurrent", 2)
	kc.ProduceN(topic, 0, 3, 10)
	c, err := Dial(ClientConfig{Brokers: kc.Brokers, ClientID: clientID})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := TopicPartitions(c, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	children := make([]*Client, n)
	for i := range children {
		if children[i], err = c.Another(); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 2*n+1)
	var wg sync.WaitGroup
	for _, ch := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ListBounds(ch, parts); err != nil {
				errs <- err
			}
			req := NewFetchRequest(ch.FetchOptions(), 1<<20)
			req.Add(parts[0], 0, 1<<20)
			if _, err := ch.FetchLeader(parts[0], req); err != nil {
				errs <- err
			}
			errs <- ch.Close()
			if ch.Close() == nil {
				errs <- errors.New("a client closed twice: no error")
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs <- c.Close()
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if _, err := c.Another(); err == nil {
		t.Error("Another of a closed client: no error")
	}
	if _, err := children[0].Topics(); err == nil {
		t.Error("the shared client still open after every user closed")
	}
	waitClosed(t, count, clientID)
}

// A long poll longer than the fetch client's idle timeout keeps its
// connection: the wait at the broker is not idleness, so the connection
// is neither closed mid-request (the poll spans one of the idle checks,
// made every fetchConnIdle, at which it has been waiting longer than
// that) nor opened (and authenticated) again for the next poll.
func TestLongPollKeepsItsFetchConnection(t *testing.T) {
	const clientID = "long-poll-count"
	kc, count := testkafka.Counted(t, 1)
	topic := kc.Topic("long-poll", 1)
	c, err := DialWith(ClientConfig{Brokers: kc.Brokers, ClientID: clientID}, Tuning{MaxWait: 2*fetchConnIdle + fetchConnIdle/2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := offsets.Partition{Topic: topic, Partition: 0}
	opened := func() int {
		n := 0
		for _, k := range count.OpenedBy(clientID, "kgo") {
			n += k
		}
		return n
	}
	var first int
	for i := range 2 {
		req := NewFetchRequest(c.FetchOptions(), 1<<20)
		req.Add(p, 0, 1<<20)
		resp, err := c.FetchLeader(p, req)
		if err != nil {
			t.Fatalf("poll %d of an idle partition: %v", i, err)
		}
		if a := resp.Partition(p); a == nil || a.Err != nil {
			t.Fatalf("poll %d: answer %+v, want the partition with no error", i, a)
		}
		if i == 0 {
			// The second poll finds a record and is answered at once.
			first = opened()
			kc.ProduceN(topic, 0, 1, 10)
		}
	}
	if got := opened(); got != first {
		t.Errorf("fetch client connections opened: %d after the first long poll, %d after the second; want none more", first, got)
	}
	if open := count.OpenBy(clientID, "kgo"); len(open) != 1 {
		t.Errorf("fetch client connections open after two long polls: %v, want the broker's fetch connection", open)
	}
}
