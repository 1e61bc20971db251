package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complete runs "kbatch __complete args..." (what the shell scripts of
// kbatch completion call) and returns the candidates and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, errOut, code := runKbatch(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d: %s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %v: no directive line in %q", args, out)
	}
	return lines[:len(lines)-1], last
}

const (
	directiveNoFile        = ":4" // cobra.ShellCompDirectiveNoFileComp
	directiveNoSpaceNoFile = ":6" // ... | ShellCompDirectiveNoSpace
)

func TestCompletionFromTheCluster(t *testing.T) {
	kc, topic := filledTopic(t, "compl", 3, 10, 0, 25)
	kc.DeleteRecords(topic, 1, 5)
	b := strings.Join(kc.Brokers, ",")

	check := func(args []string, wantDirective string, want ...string) {
		t.Helper()
		got, dir := complete(t, args...)
		if dir != wantDirective || !slices.Equal(got, want) {
			t.Errorf("complete %v:\n got %q %s\nwant %q %s", args, got, dir, want, wantDirective)
		}
	}
	// Topic names: -t, the root's -t, kbatch topics, --to-topic.
	for _, args := range [][]string{
		{"watch", "-b", b, "-t", topic[:4]},
		{"-b", b, "-t", topic[:4]},
		{"topics", "-b", b, topic[:4]},
		{"replay", "-b", b, "x:0:0-1", "--to-topic", topic[:4]},
	} {
		got, dir := complete(t, args...)
		if dir != directiveNoFile || !slices.Contains(got, topic) {
			t.Errorf("complete %v: %q %s, want %s among them", args, got, dir, topic)
		}
	}
	// Offset SPECs, part by part.
	check([]string{"watch", "-b", b, "-o", topic}, directiveNoSpaceNoFile, topic+":", topic+"=")
	check([]string{"watch", "-b", b, "-o", topic + ":"}, directiveNoSpaceNoFile, topic+":0=", topic+":1=", topic+":2=")
	check([]string{"watch", "-b", b, "-o", topic + ":2=e"}, directiveNoFile) // see offsetSpecs: bash cannot take it
	check([]string{"watch", "-b", b, "-o", topic + "=l"}, directiveNoFile, topic+"=latest")
	check([]string{"offsets", "set", "-b", b, topic + "="}, directiveNoFile, topic+"=earliest", topic+"=latest")
	// Replay RANGEs, part by part; a single partition offers its bounds.
	check([]string{"replay", "-b", b, topic}, directiveNoSpaceNoFile, topic+":")
	check([]string{"replay", "-b", b, topic + ":"}, directiveNoSpaceNoFile, topic+":*:", topic+":0:", topic+":1:", topic+":2:")
	check([]string{"replay", "-b", b, topic + ":1:"}, directiveNoFile, topic+":1:earliest-latest", topic+":1:5-25")
	check([]string{"replay", "-b", b, topic + ":*:"}, directiveNoFile, topic+":*:earliest-latest")
}

// TestCompletionWithoutACluster: no brokers, or brokers that do not
// answer, give no candidates and no noise; static choices still work.
func TestCompletionWithoutACluster(t *testing.T) {
	for _, args := range [][]string{
		{"-t", ""},
		{"watch", "-b", "127.0.0.1:1", "-t", ""},
		{"replay", "-b", "127.0.0.1:1", "ev"},
		{"watch", "-b", "127.0.0.1:1", "-o", "events:"},
	} {
		got, dir := complete(t, args...)
		if len(got) != 0 || !strings.HasPrefix(dir, ":") {
			t.Errorf("complete %v: %q %s, want nothing", args, got, dir)
		}
	}
	if got, _ := complete(t, "watch", "--reset", ""); !slices.Equal(got, []string{"earliest", "latest"}) {
		t.Errorf("--reset: %q", got)
	}
	if got, _ := complete(t, "replay", "--format", ""); !slices.Equal(got, []string{"json", "kcat"}) {
		t.Errorf("replay --format: %q", got)
	}
}

func TestCompletionOfProfilesAndStreams(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.toml", `
[clusters.prod-eu]
brokers = ["kafka-1:9092"]
[clusters.staging]
brokers = ["kafka-s:9092"]
`, 0o600)
	got, dir2 := complete(t, "--config", cfg, "--cluster", "")
	if !slices.Equal(got, []string{"prod-eu", "staging"}) || dir2 != directiveNoFile {
		t.Errorf("--cluster: %q %s", got, dir2)
	}
	if got, _ := complete(t, "--config", cfg, "--cluster", "st"); !slices.Equal(got, []string{"staging"}) {
		t.Errorf("--cluster st: %q", got)
	}

	// Stream names come from the store, read while this process holds it
	// for writing, as a running watch does.
	path := filepath.Join(dir, "offsets.db")
	st := offsetsOpenTestStore(t, path)
	defer st.close()
	st.stream("events", "events")
	st.stream("orders+payments", "orders", "payments")
	st.batch("events", 1, true, offsetsBR("events", 0, 0, 10, ""))
	for _, args := range [][]string{
		{"--store", path, "--name", ""},
		{"offsets", "show", "--store", path, "--name", ""},
	} {
		got, d := complete(t, args...)
		if !slices.Equal(got, []string{"events", "orders+payments"}) || d != directiveNoFile {
			t.Errorf("complete %v: %q %s", args, got, d)
		}
	}
	if got, _ := complete(t, "--store", filepath.Join(dir, "missing.db"), "--name", ""); len(got) != 0 {
		t.Errorf("--name with no store: %q", got)
	}
}

// TestCompletionSkipsShellMetacharacters: a completion is pasted into the
// command line as it is, so a stream or profile name a shell would act on
// (; | & * ( ) space, quotes, $, backslash, controls) is not offered: a
// stream named "a;rm" is not.
func TestCompletionSkipsShellMetacharacters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "offsets.db")
	st := offsetsOpenTestStore(t, path)
	defer st.close()
	for _, name := range []string{"events", "a;rm", "x|y", "sp ace", "b&", "(c)", "glob*", "$(x)", "e\x1b[2J", "t+u"} {
		st.stream(name, "events")
	}
	if got, _ := complete(t, "--store", path, "--name", ""); !slices.Equal(got, []string{"events", "t+u"}) {
		t.Errorf("--name: %q, want only the names a shell takes as they are", got)
	}
	cfg := writeFile(t, dir, "config.toml", "[clusters.prod-eu]\nbrokers = [\"k:1\"]\n[clusters.\"a;b\"]\nbrokers = [\"k:1\"]\n", 0o600)
	if got, _ := complete(t, "--config", cfg, "--cluster", ""); !slices.Equal(got, []string{"prod-eu"}) {
		t.Errorf("--cluster: %q, want [prod-eu]", got)
	}
}
