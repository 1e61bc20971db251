package cli

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// runRoot runs root in process with stdin and args, its stderr written to
// stderr, and returns stdout, stderr (ending with the error line main
// prints) and the exit code.
func runRoot(root *cobra.Command, stderr *bytes.Buffer, stdin string, args ...string) (string, string, int) {
	var stdout bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		stderr.WriteString("kbatch: " + oneLine(err) + "\n")
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

// runInProcess runs kbatch's root command in process with stdin and args,
// and returns stdout, stderr (with the error line main prints) and the
// exit code.
func runInProcess(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var stderr bytes.Buffer
	return runRoot(newRootCommand(), &stderr, stdin, args...)
}

// isolatedStore isolates a test from the user's environment and config
// (no KBATCH_* connection settings, fresh config and state folders), and
// returns a store path in a fresh folder.
func isolatedStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"KBATCH_BROKERS", "KBATCH_CLUSTER", "KBATCH_CONFIG", "KBATCH_STORE", "KBATCH_KAFKA_VERSION",
		"KBATCH_SASL_MECHANISM", "KBATCH_SASL_USER", "KBATCH_SASL_PASSWORD"} {
		t.Setenv(v, "")
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	return filepath.Join(dir, "offsets.db")
}

// recordLine is a record line of kbatch's JSON output (docs/design.md §4).
type recordLine = fixtures.RecordLine

// startLines starts cmd and decodes each stdout line that is JSON into a
// T on the returned channel, closed when stdout ends; lines that do not
// decode are skipped. stderr collects the process's stderr. The process is
// killed and waited for when the test ends.
func startLines[T any](t *testing.T, cmd *exec.Cmd) (lines <-chan T, stderr *strings.Builder) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ch := make(chan T, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var l T
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				ch <- l
			}
		}
	}()
	return ch, stderr
}

// basicAuthDecodeTopic is registryDecodeTopic behind a registry that takes
// only user:pass by HTTP basic authentication.
func basicAuthDecodeTopic(t *testing.T, user, pass string) (*testkafka.Cluster, *srfake.Registry, string, int) {
	t.Helper()
	return registryDecodeTopic(t, srfake.WithAuth("Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass))))
}

// registryDecodeTopic is decodeTopic on a new test cluster and a fake
// Schema Registry made with opts (closed when the test ends): it returns
// the cluster, the registry, the topic and the schema id.
func registryDecodeTopic(t *testing.T, opts ...srfake.Option) (*testkafka.Cluster, *srfake.Registry, string, int) {
	t.Helper()
	tc := testkafka.New(t)
	reg := srfake.New(opts...)
	t.Cleanup(reg.Close)
	topic, id := decodeTopic(t, tc, reg)
	return tc, reg, topic, id
}

// filledTopic creates a topic of the given partitions on the test cluster
// (kfake, or KBATCH_TEST_BROKERS) and produces counts[p] records of size
// bytes to partition p, in partition order; it returns the cluster and the
// topic.
func filledTopic(t *testing.T, prefix string, partitions int32, size int, counts ...int) (*testkafka.Cluster, string) {
	t.Helper()
	kc := testkafka.New(t)
	topic := kc.Topic(prefix, partitions)
	for p, n := range counts {
		if n > 0 {
			kc.ProduceN(topic, int32(p), n, size)
		}
	}
	return kc, topic
}

// waitForOutput polls out until it holds want. The test fails when
// deadline fires first, or when the run ends first (done yields how: an
// error or an exit code); what names the awaited output in the failure.
func waitForOutput[T any](t *testing.T, out *testkafka.SyncBuffer, want string, deadline <-chan time.Time, done <-chan T, what string) {
	t.Helper()
	for !strings.Contains(out.String(), want) {
		select {
		case <-deadline:
			t.Fatalf("no %s before the deadline:\n%s", what, out.String())
		case r := <-done:
			t.Fatalf("kbatch ended (%v) before %s:\n%s", r, what, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// parsedWatchOptions is watch's options after parsing args as its flags.
func parsedWatchOptions(t *testing.T, args []string) *watchOptions {
	t.Helper()
	o := &watchOptions{}
	cmd := &cobra.Command{}
	addWatchFlags(cmd, o)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return o
}

// readFile is path's content; the test fails if it cannot be read.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// registered registers schema under subject on reg and returns its id.
func registered(tb testing.TB, reg *srfake.Registry, subject, schema string) int {
	tb.Helper()
	id, _, err := reg.RegisterSchema(subject, sr.Schema{Schema: schema})
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// newTestStore opens (creating) the store at a new path, closed when the
// test ends, and returns it with its path.
func newTestStore(t *testing.T) (*offsets.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "offsets.db")
	st, err := offsets.Open(path, offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, path
}

// screenCommands are command lines that would draw the screen, for dir, a
// folder that exists: the refusals without a usable terminal come before
// any cluster is reached (the broker at 127.0.0.1:1 is never dialled).
func screenCommands(dir string) [][]string {
	return [][]string{
		{"-b", "127.0.0.1:1", "-t", "events"},
		{"demo"},
		{"spark", dir},
	}
}
