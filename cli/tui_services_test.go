package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kbatch-dev/kbatch/config"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/tui"
)

// After c on the screen, the profile's brokers win over -b and
// KBATCH_BROKERS given at start, and the stream name is derived again.
func TestSwitchProfileUsesTheProfileBrokers(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "config.toml", `
[clusters.blue]
brokers = ["blue:9092"]
[clusters.green]
brokers = ["green-1:9092", "green-2:9092"]
`, 0o600)
	g, _ := testOptions(t, map[string]string{"KBATCH_BROKERS": "env:9092"}, "--config", cfg, "-b", "flag:9092", "--name", "mine")
	cc, err := g.clientConfig()
	if err != nil || strings.Join(cc.Brokers, ",") != "flag:9092" {
		t.Fatalf("before the switch: %v %v", cc.Brokers, err)
	}
	if got := g.screenProfiles(); len(got) != 2 || got[0].Name != "blue" || got[1].Name != "green" || len(got[1].Brokers) != 2 {
		t.Errorf("profiles %+v", got)
	}
	g.switchProfile("green")
	cc, err = g.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cc.Brokers, ",") != "green-1:9092,green-2:9092" || g.conn.Cluster != "green" || g.name != "" {
		t.Errorf("after the switch: brokers %v cluster %q name %q", cc.Brokers, g.conn.Cluster, g.name)
	}
}

// The screen's trial connection before c switches: a reachable profile
// answers nil, a closed port an error, a profile whose password would be
// typed is not tried (and nothing is prompted or printed), and the
// options in use are left as they were.
func TestProbeProfile(t *testing.T) {
	kc := testkafka.New(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.toml", fmt.Sprintf(`
[clusters.up]
brokers = [%q]
[clusters.down]
brokers = ["127.0.0.1:1"]
[clusters.secret]
brokers = [%q]
[clusters.secret.sasl]
mechanism = "PLAIN"
username = "alice"
`, kc.Brokers[0], kc.Brokers[0]), 0o600)
	g, stderr := testOptions(t, nil, "--config", cfg, "-b", "flag:9092")
	prompted := false
	g.prompt = func(string) (config.Secret, error) { prompted = true; return "pw", nil }
	ctx := context.Background()
	if err := g.probeProfile(ctx, "up"); err != nil {
		t.Errorf("up: %v", err)
	}
	if err := g.probeProfile(ctx, "down"); err == nil {
		t.Errorf("down: no error")
	}
	if err := g.probeProfile(ctx, "secret"); !errors.Is(err, tui.ErrProbeSkipped) {
		t.Errorf("secret: %v, want ErrProbeSkipped", err)
	}
	if prompted {
		t.Errorf("a probe prompted for a password")
	}
	if cc, err := g.clientConfig(); err != nil || strings.Join(cc.Brokers, ",") != "flag:9092" || g.profileOnly {
		t.Errorf("after the probes: brokers %v, profileOnly %v, err %v", cc.Brokers, g.profileOnly, err)
	}
	if stderr.Len() != 0 {
		t.Errorf("probes wrote to stderr: %q", stderr.String())
	}
}

// The adapters the screen's p and C use, against a cluster.
func TestScreenWriterAndGroupReader(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("screen", 3)
	w := &screenWriter{cc: kafka.ClientConfig{Brokers: kc.Brokers}}
	defer w.Close()
	res, err := w.Write(context.Background(), tui.WriteRequest{Topic: topic, Partition: tui.ByKey, Key: []byte("k1"), Value: []byte("v1")})
	if err != nil {
		t.Fatal(err)
	}
	if want := kafka.KeyPartition([]byte("k1"), 3); res.Partition != want || res.Offset != 0 {
		t.Errorf("wrote to %d@%d, want %d@0", res.Partition, res.Offset, want)
	}
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: res.Partition, At: 1})
	if r, err := kc.Admin().CommitOffsets(context.Background(), "billing", o); err != nil || r.Error() != nil {
		t.Fatalf("commit: %v %v", err, r.Error())
	}
	c, err := kafka.Dial(kafka.ClientConfig{Brokers: kc.Brokers})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := offsets.Partition{Topic: topic, Partition: res.Partition}
	groups, _, err := groupReader{client: c}.TopicGroups(context.Background(), []offsets.Partition{p})
	if err != nil || len(groups) != 1 || groups[0].Name != "billing" || groups[0].Offsets[p] != 1 {
		t.Errorf("groups %+v, %v", groups, err)
	}
}

// The real binary in tmux against a cluster: p writes a record where the
// Java client would put its key, C shows a group's commit, c switches to
// another profile through the topic picker.
func TestTUIProduceGroupsSwitchInTmux(t *testing.T) {
	if testkafka.Real() {
		t.Skip("writes a record and commits a group")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end TUI test needs it")
	}
	kc, topic := filledTopic(t, "orders", 3, 10, 5)
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: 0, At: 2})
	if r, err := kc.Admin().CommitOffsets(context.Background(), "billing", o); err != nil || r.Error() != nil {
		t.Fatalf("commit: %v %v", err, r.Error())
	}
	dir := t.TempDir()
	brokers := `"` + strings.Join(kc.Brokers, `","`) + `"`
	cfg := writeFile(t, dir, "config.toml", "[clusters.blue]\nbrokers = ["+brokers+"]\n[clusters.green]\nbrokers = ["+brokers+"]\n", 0o600)
	bin := kbatchBinary(t)
	tm := startTmux(t, dir, 140, 40, fmt.Sprintf(`%s --config %s --cluster blue -t %s --reset earliest --store %s; echo "kbatch exited with status $?"`,
		bin, cfg, topic, filepath.Join(dir, "offsets.db")))
	tm.waitFor("the stream", func(s string) bool { return strings.Contains(s, "Partitions 3") && strings.Contains(s, "cluster blue") })

	tm.keys("p")
	tm.waitFor("the produce form", func(s string) bool { return strings.Contains(s, "Produce a record") })
	tm.keys("Tab", "Tab") // from the topic, where the focus starts, to the key
	tm.waitFor("the key field", func(s string) bool { return strings.Contains(s, "> key") })
	tm.tmux("send-keys", "-t", "kbatch", "-l", "k1")
	tm.keys("Tab")
	tm.tmux("send-keys", "-t", "kbatch", "-l", "v1")
	tm.keys("Enter")
	tm.waitFor("the confirmation", func(s string) bool {
		return strings.Contains(s, `Write this record to topic "`+topic+`" on cluster blue`)
	})
	tm.keys("y")
	s := tm.waitFor("the result", func(s string) bool { return strings.Contains(s, "wrote 1 record to") })
	m := regexp.MustCompile(`wrote 1 record to ` + regexp.QuoteMeta(topic) + `\[(\d)\] at offset (\d+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no result line:\n%s", s)
	}
	p, _ := strconv.Atoi(m[1])
	off, _ := strconv.ParseInt(m[2], 10, 64)
	if want := kafka.KeyPartition([]byte("k1"), 3); int32(p) != want {
		t.Errorf("k1 went to partition %d, the Java client puts it in %d", p, want)
	}
	rec := kc.RecordAt(topic, int32(p), off)
	if string(rec.Key) != "k1" || string(rec.Value) != "v1" {
		t.Errorf("read back key %q value %q", rec.Key, rec.Value)
	}
	// Each esc is waited out: esc and a key sent in one write read as alt+key.
	tm.keys("Escape")
	tm.waitFor("the form closed", func(s string) bool { return !strings.Contains(s, "Produce a record") })

	tm.keys("C")
	tm.waitFor("the groups view", func(s string) bool {
		return strings.Contains(s, "Consumer groups on "+topic) && regexp.MustCompile(`billing +`+regexp.QuoteMeta(topic)+`\[0\] +2 +3`).MatchString(s)
	})
	tm.keys("Escape")
	tm.waitFor("the groups view closed", func(s string) bool { return !strings.Contains(s, "Consumer groups on") })

	tm.keys("c")
	tm.waitFor("the profiles", func(s string) bool { return strings.Contains(s, "blue (current)") && strings.Contains(s, "> green") })
	tm.keys("Enter")
	tm.waitFor("the switch confirmation", func(s string) bool { return strings.Contains(s, "connect to cluster green") })
	tm.keys("y")
	tm.waitFor("the topic picker of green", func(s string) bool { return strings.Contains(s, "PICK TOPICS") && strings.Contains(s, "cluster green") })
	tm.keys("Enter")
	// The picker asks where the stream starts: resume where it stopped.
	tm.waitFor("the start question", func(s string) bool { return strings.Contains(s, "Where to start") && strings.Contains(s, "> resume") })
	tm.keys("Enter")
	tm.waitFor("the stream on green", func(s string) bool {
		return strings.Contains(s, "Partitions 3") && strings.Contains(s, "cluster green")
	})
	tm.keys("q")
	if status := tm.waitExit(); status != "0" {
		t.Fatalf("kbatch exited with status %s:\n%s", status, tm.capture(true))
	}
}
