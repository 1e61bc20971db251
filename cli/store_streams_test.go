package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// kbatchIn runs the kbatch binary with env and args, and returns stdout,
// stderr and the exit code.
func kbatchIn(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(kbatchBinary(t), args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// stateDir is the XDG_STATE_HOME of env.
func stateDir(t *testing.T, env []string) string {
	t.Helper()
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			return v
		}
	}
	t.Fatal("no XDG_STATE_HOME")
	return ""
}

// TestWatchesOnTwoStreamsShareTheDefaultStore: with the default store (no
// --store), a watch on one topic runs while a watch on another topic
// reads to the end and stores its positions; a second watch of the first
// stream is refused in one line with exit code 1; offsets show lists both
// streams while the first runs; once it stopped its positions are stored.
func TestWatchesOnTwoStreamsShareTheDefaultStore(t *testing.T) {
	kc := testkafka.New(t)
	orders, payments := kc.Topic("orders", 1), kc.Topic("payments", 2)
	kc.ProduceN(orders, 0, 30, 10)
	kc.ProduceN(payments, 0, 20, 10)
	kc.ProduceN(payments, 1, 25, 10)
	b := strings.Join(kc.Brokers, ",")
	env := isolatedEnv(t)

	first := exec.Command(kbatchBinary(t), "watch", "--no-tui", "-b", b, "-t", orders, "--reset", "earliest", "--interval", "50ms")
	first.Env = env
	lines, firstErr := startLines[jsonLine](t, first)
	for l := range lines {
		if l.Type == "batch" && l.State == "acked" {
			break
		}
	}

	_, errOut, code := kbatchIn(t, env, "watch", "--no-tui", "-b", b, "-t", payments, "--reset", "earliest", "--until-end")
	if code != 0 {
		t.Fatalf("a watch of another stream beside a running one: exit %d: %s", code, errOut)
	}
	_, errOut, code = kbatchIn(t, env, "watch", "--no-tui", "-b", b, "-t", orders, "--until-end")
	if code != exitFailure || !strings.Contains(errOut, "stream "+orders+" is in use by another kbatch process") ||
		strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("a second watch of the running stream: exit %d, stderr %q; want exit 1 and one line saying the stream is in use", code, errOut)
	}
	out, errOut, code := kbatchIn(t, env, "offsets", "show")
	if code != 0 || !strings.Contains(out, orders) || !strings.Contains(out, payments) {
		t.Errorf("offsets show beside a running watch: exit %d\n%s%s", code, out, errOut)
	}

	if err := first.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("the first watch: %v: %s", err, firstErr)
	}
	out, errOut, code = kbatchIn(t, env, "offsets", "export", "--name", orders)
	if code != 0 || !strings.Contains(out, `"`+orders+`"`) || !strings.Contains(out, "30") {
		t.Errorf("offsets export of the stopped stream: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = kbatchIn(t, env, "offsets", "export", "--name", payments)
	if !strings.Contains(out, "20") || !strings.Contains(out, "25") {
		t.Errorf("offsets export of the second stream: %s", out)
	}
	entries, err := os.ReadDir(filepath.Join(stateDir(t, env), "kbatch", "streams"))
	if err != nil || len(entries) != 2 {
		t.Errorf("the default store folder holds %d files (%v), want one per stream", len(entries), err)
	}
}

// TestDefaultStoreMovesAnOldStoreFile: a store file where kbatch kept the
// default store before (state/kbatch/offsets.db) has its streams moved on
// the first watch with the default store, which resumes where it was; the
// old file is kept as offsets.db.moved.
func TestDefaultStoreMovesAnOldStoreFile(t *testing.T) {
	kc, topic := filledTopic(t, "moved", 2, 10, 40, 40)
	b := strings.Join(kc.Brokers, ",")
	env := isolatedEnv(t)
	old := filepath.Join(stateDir(t, env), "kbatch", "offsets.db")
	if _, errOut, code := kbatchIn(t, env, "watch", "--no-tui", "-b", b, "-t", topic, "--store", old, "--reset", "earliest", "--until-end"); code != 0 {
		t.Fatalf("filling the old store: %s", errOut)
	}
	kc.ProduceN(topic, 0, 5, 10)
	out, errOut, code := kbatchIn(t, env, "watch", "--no-tui", "-b", b, "-t", topic, "--until-end", "--interval", "50ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := parseLines(t, []byte(out))
	for _, p := range lines[0].Partitions {
		if p.Source != "stored" || p.Offset != 40 {
			t.Errorf("start after the move: %+v, want 40 stored", p)
		}
	}
	if end := lines[len(lines)-1]; end.Records != 5 {
		t.Errorf("read %d records after the move, want the 5 new ones", end.Records)
	}
	if _, err := os.Stat(old + ".moved"); err != nil {
		t.Errorf("the old store file is not kept: %v", err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("the old store file is still under its name")
	}
}

// TestDefaultStoreBadInput: the bad inputs of the default store's folder
// (docs/exit-codes-and-bad-input.md) give one line and their exit code:
// a stream another kbatch holds (watch and offsets set), a --sink in the
// folder or on the old store file, a damaged old store file, and a
// stream file copied under another stream's name.
func TestDefaultStoreBadInput(t *testing.T) {
	kc, topic := filledTopic(t, "defaultstore", 1, 10, 5)
	b := strings.Join(kc.Brokers, ",")
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	folder := filepath.Join(state, "kbatch", "streams")
	held, err := offsets.OpenFolder(folder, "", offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Close() })
	if err := held.EnsureStream(topic, []string{b}, []string{topic}); err != nil {
		t.Fatal(err)
	}
	inUse := "stream " + topic + " is in use by another kbatch process; stop it, or pass --name to use another stream"
	for _, tc := range []struct {
		label string
		args  []string
		code  int
		want  []string
	}{
		{"watch of a held stream", []string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic}, exitFailure, []string{folder, inUse}},
		{"offsets set of a held stream", []string{"offsets", "set", "-b", b, "--name", topic, topic + ":0=1"}, exitFailure, []string{inUse}},
		{"--sink in the store's folder", []string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--name", "other", "--sink", filepath.Join(folder, "out.db")}, exitUsage, []string{"--sink", "offset store's folder"}},
		{"--sink on the old store file", []string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--name", "other", "--sink", filepath.Join(state, "kbatch", "offsets.db")}, exitUsage, []string{"--sink", "offset store's folder"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			checkOneLine(t, execKbatch(t, env, tc.args...), tc.code, tc.want)
		})
	}
	// Another stream of the same folder is not held.
	r := execKbatch(t, env, "watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--name", "beside", "--reset", "earliest")
	if r.code != 0 {
		t.Errorf("a watch of another stream beside the held one: exit %d: %s", r.code, r.stderr)
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}

	// A stream file copied under another stream's name.
	copied := filepath.Join(folder, offsetsStreamFile(t, folder, "beside"))
	data := readFile(t, copied)
	held2, err := offsets.OpenFolder(folder, "", offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := held2.EnsureStream("third", nil, []string{topic}); err != nil {
		t.Fatal(err)
	}
	if err := held2.Close(); err != nil {
		t.Fatal(err)
	}
	third := filepath.Join(folder, offsetsStreamFile(t, folder, "third"))
	if err := os.WriteFile(third, data, 0o600); err != nil {
		t.Fatal(err)
	}
	checkOneLine(t, execKbatch(t, env, "offsets", "show"), exitFailure, []string{third, `holds the stream beside, whose file is`, "renamed or copied outside kbatch"})

	// A damaged old store file, where no folder is yet: refused, kept.
	state2 := t.TempDir()
	old := filepath.Join(state2, "kbatch", "offsets.db")
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Repeat([]byte("not a bbolt file \x00\xff"), 512)
	if err := os.WriteFile(old, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	checkOneLine(t, execKbatch(t, []string{"XDG_STATE_HOME=" + state2}, "watch", "--no-tui", "--until-end", "-b", b, "-t", topic), exitFailure,
		[]string{old, "is not a bbolt file or is damaged"})
	if got := readFile(t, old); !bytes.Equal(got, bad) {
		t.Error("the damaged old store file was changed")
	}
	if _, err := os.Stat(filepath.Join(state2, "kbatch", "streams")); err == nil {
		t.Error("a folder was made from a damaged old store file")
	}

	// An empty folder made by hand beside an old store file with a
	// stream: refused by writers and readers, the file kept.
	state3 := t.TempDir()
	old3, empty := filepath.Join(state3, "kbatch", "offsets.db"), filepath.Join(state3, "kbatch", "streams")
	st, err := offsets.Open(old3, offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureStream(topic, []string{b}, []string{topic}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic}, {"offsets", "show"}} {
		checkOneLine(t, execKbatch(t, []string{"XDG_STATE_HOME=" + state3}, args...), exitFailure,
			[]string{empty, "holds no stream", old3, "pass --store " + old3})
	}
	if _, err := os.Stat(old3); err != nil {
		t.Errorf("the old store file beside an empty folder: %v", err)
	}
}

// offsetsStreamFile is the name of the one file in folder that holds
// stream, found by listing: the file names are offsets' to choose.
func offsetsStreamFile(t *testing.T, folder, stream string) string {
	t.Helper()
	entries, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stream+"-") {
			return e.Name()
		}
	}
	t.Fatalf("no file of stream %s in %s", stream, folder)
	return ""
}
