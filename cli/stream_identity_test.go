package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// fakeCluster starts a one-broker kfake with cluster id id and the topics,
// each holding one record on partition 0.
func fakeCluster(t *testing.T, id string, topics ...string) string {
	t.Helper()
	fake := testkafka.Fake(t, kfake.ClusterID(id), kfake.SeedTopics(1, topics...))
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range topics {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return fake.ListenAddrs()[0]
}

// TestStreamIdentity: a stream remembers its cluster id and topics. The
// same (derived) name on another cluster is refused, since its offsets
// belong to the other cluster; an explicit --name takes it over, and an
// event says what changed.
func TestStreamIdentity(t *testing.T) {
	prod := fakeCluster(t, "prod-cluster", "events", "more")
	staging := fakeCluster(t, "staging-cluster", "events")
	store := filepath.Join(t.TempDir(), "offsets.db")
	watch := func(brokers string, extra ...string) cliRun {
		return execKbatch(t, nil, append([]string{"watch", "--no-tui", "--until-end", "--store", store, "-b", brokers, "--interval", "100ms"}, extra...)...)
	}
	if r := watch(prod, "-t", "events"); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	r := watch(staging, "-t", "events")
	checkOneLine(t, r, exitUsage, []string{"events", "prod-cluster", "staging-cluster", "--name"})

	r = watch(staging, "-t", "events", "--name", "events")
	if r.code != 0 {
		t.Fatalf("explicit --name: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"code":"stream-changed"`) || !strings.Contains(r.stdout, "staging-cluster") {
		t.Errorf("no stream-changed event naming the new cluster:\n%s", r.stdout)
	}

	show := execKbatch(t, nil, "offsets", "show", "--store", store, "--name", "events")
	if !strings.Contains(show.stdout, "cluster id") || !strings.Contains(show.stdout, "staging-cluster") {
		t.Errorf("offsets show does not name the stream's cluster:\n%s%s", show.stdout, show.stderr)
	}
	if r := watch(prod, "-t", "events", "--name", "mine"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = watch(prod, "-t", "events", "-t", "more", "--name", "mine")
	if r.code != 0 {
		t.Fatalf("explicit --name, more topics: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, `"code":"stream-changed"`) || !strings.Contains(r.stdout, "events → events,more") {
		t.Errorf("no stream-changed event naming the topics:\n%s", r.stdout)
	}
}

// TestEmptyStoreRefused: a 0-byte store (a truncated one, as often as a
// new one) is refused by watch and offsets show with one line saying how
// to start anew, and stays 0 bytes.
func TestEmptyStoreRefused(t *testing.T) {
	addr := fakeCluster(t, "c", "events")
	store := writeFile(t, t.TempDir(), "offsets.db", "", 0o600)
	for _, args := range [][]string{
		{"watch", "--no-tui", "--until-end", "--store", store, "-b", addr, "-t", "events", "--reset", "latest"},
		{"offsets", "show", "--store", store},
	} {
		r := execKbatch(t, nil, args...)
		checkOneLine(t, r, exitFailure, []string{store, "empty", "remove it", "--store"})
		if fi, err := os.Stat(store); err != nil || fi.Size() != 0 {
			t.Fatalf("the empty store changed: %v %v", fi, err)
		}
	}
}
