package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

// TestBadInput drives the real binary with the bad inputs of
// docs/exit-codes-and-bad-input.md: each must give exactly one line on
// stderr that names what is wrong, no Go runtime text, and the exit code of
// docs/design.md §3 (2 usage, 1 runtime). TLS and SASL rows are in
// security_test.go. It runs against kfake, or KBATCH_TEST_BROKERS.
func TestBadInput(t *testing.T) {
	kc, topic := filledTopic(t, "badinput", 2, 10, 5, 5)
	b := strings.Join(kc.Brokers, ",")
	dir := t.TempDir()

	regular := writeFile(t, dir, "regular-file", "x", 0o644)
	badTOML := writeFile(t, dir, "bad.toml", "[clusters.prod]\nbrokers = [\"h:1\"]\nkafka_version = 2.8\nx = [1,\n", 0o600)
	unknownKey := writeFile(t, dir, "unknown.toml", "[clusters.prod]\nbrokers = [\"h:1\"]\n\n[clusters.prod.sasl]\nmechanism = \"PLAIN\"\npasswd = \"x\"\n", 0o600)
	goodCfg := writeFile(t, dir, "good.toml", "[clusters.dev]\nbrokers = [\""+kc.Brokers[0]+"\"]\n", 0o600)
	badWatch := writeFile(t, dir, "badwatch.toml", "[watch]\ninterval = \"soon\"\n", 0o600)

	lockedStore := filepath.Join(dir, "locked.db")
	held, err := offsets.Open(lockedStore, offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Close() })

	corrupt := filepath.Join(dir, "corrupt.db")
	corruptBytes := bytes.Repeat([]byte("not a bbolt file \x00\xff"), 512)
	if err := os.WriteFile(corrupt, corruptBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	// A store in use by no one, and a path where a store would be made.
	store := filepath.Join(dir, "store.db")
	st, err := offsets.Open(store, offsets.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	storeBytes := readFile(t, store)
	storeLink := filepath.Join(dir, "store-link")
	if err := os.Symlink(store, storeLink); err != nil {
		t.Fatal(err)
	}
	unmade := filepath.Join(dir, "unmade.db")
	unmadeLink := filepath.Join(dir, "unmade-link") // a link to a store not made yet
	if err := os.Symlink("unmade.db", unmadeLink); err != nil {
		t.Fatal(err)
	}

	watch := func(extra ...string) []string {
		return append([]string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--no-store"}, extra...)
	}
	withStore := func(store string, extra ...string) []string {
		return append([]string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--store", store}, extra...)
	}
	tests := []struct {
		label string
		args  []string
		code  int
		want  []string
	}{
		{"malformed --offset", watch("-o", topic+":x=5"), exitUsage, []string{"invalid offset spec", topic + ":x=5"}},
		{"--offset without =", watch("-o", topic+":0"), exitUsage, []string{"invalid offset spec", `missing "="`}},
		{"non-numeric offset", watch("-o", topic+":0=abc"), exitUsage, []string{`offset "abc" is not a number`}},
		{"negative offset --5", watch("-o", topic+":0=--5"), exitUsage, []string{`"--5" is not a number`}},
		{"offset -0", watch("-o", topic+":0=-0"), exitUsage, []string{"-N must be at least 1"}},
		{"negative partition", watch("-o", topic+":-1=5"), exitUsage, []string{"invalid offset spec"}},
		{"offset too large", watch("-o", topic+":0=99999999999999999999"), exitUsage, []string{"too large"}},
		{"malformed --interval", watch("--interval", "5parsecs"), exitUsage, []string{"--interval", "5parsecs"}},
		{"zero --interval", watch("--interval", "0s"), exitUsage, []string{"--interval", "must be positive"}},
		{"bad --reset", watch("--reset", "middle"), exitUsage, []string{"middle"}},
		{"--samples above the cap", watch("--samples", "100000"), exitUsage, []string{"--samples 100000", "0 to 1000"}},
		{"spark --samples above the cap", []string{"spark", t.TempDir(), "--no-tui", "--once", "--samples", "100000"}, exitUsage, []string{"--samples 100000", "0 to 1000"}},
		{"--tail-records above the cap", watch("--tail-records", "2000000"), exitUsage, []string{"--tail-records 2000000", "0 to 1000000"}},
		{"--tail-records negative", watch("--tail-records", "-1"), exitUsage, []string{"--tail-records -1", "0 to 1000000"}},
		{"unknown flag", watch("--frobnicate"), exitUsage, []string{"--frobnicate"}},
		{"unknown topic", []string{"watch", "--no-tui", "--until-end", "--no-store", "-b", b, "-t", "no-such-topic-kb"}, exitUsage, []string{"no-such-topic-kb"}},
		{"partition out of range", watch("-o", topic+":7=0"), exitUsage, []string{"unknown partition", topic + ":7", "2 partitions"}},
		{"one partition given twice", watch("-o", topic+":0=1", "-o", topic+":0=3"), exitUsage, []string{"both set partition " + topic + ":0"}},
		{"offsets set: one topic given twice", []string{"offsets", "set", topic + "=earliest", topic + "=latest", "--store", store}, exitUsage, []string{"both set every partition of topic " + topic}},
		{"offset for an unwatched topic", watch("-o", "other:0=1"), exitUsage, []string{`"other"`}},
		{"topics: unknown topic", []string{"topics", "-b", b, "no-such-topic-kb"}, exitUsage, []string{"no-such-topic-kb"}},
		{"invalid TOML", append([]string{"--config", badTOML}, watch()...), exitUsage, []string{badTOML + ":4", "invalid TOML"}},
		{"unknown config key", append([]string{"--config", unknownKey}, watch()...), exitUsage, []string{unknownKey + ":6", `unknown key "clusters.prod.sasl.passwd"`}},
		{"bad [watch] value", append([]string{"--config", badWatch}, watch()...), exitUsage, []string{badWatch + ":2", "interval"}},
		{"missing --config file", []string{"topics", "--config", filepath.Join(dir, "nope.toml")}, exitUsage, []string{"nope.toml", "does not exist"}},
		{"unknown cluster", []string{"topics", "--config", goodCfg, "--cluster", "prod"}, exitUsage, []string{`unknown cluster "prod"`, "dev"}},
		{"unknown cluster, no config file", []string{"topics", "--cluster", "prod"}, exitUsage, []string{`unknown cluster "prod"`, "no config file"}},
		{"no brokers", []string{"topics"}, exitUsage, []string{"no brokers", "-b host:port"}},
		{"broker without port", []string{"topics", "-b", "localhost"}, exitUsage, []string{`invalid broker address "localhost"`}},
		{"unreachable broker", []string{"topics", "-b", "127.0.0.1:1", "--dial-timeout", "3s"}, exitFailure, []string{"cannot reach the Kafka cluster at 127.0.0.1:1"}},
		{"unreachable broker (watch)", []string{"watch", "--no-tui", "--no-store", "-b", "127.0.0.1:1", "-t", topic, "--dial-timeout", "3s"}, exitFailure, []string{"cannot reach"}},
		{"store locked by another kbatch", withStore(lockedStore), exitFailure, []string{lockedStore, "in use"}},
		{"corrupt store file", withStore(corrupt), exitFailure, []string{corrupt}},
		{"store under a regular file", withStore(filepath.Join(regular, "offsets.db")), exitFailure, []string{filepath.Join(regular, "offsets.db")}},
		{"store is a folder", withStore(dir), exitFailure, []string{dir, "directory"}},
		{"--sink under a regular file", watch("--sink", filepath.Join(regular, "out.jsonl")), exitFailure, []string{"--sink", filepath.Join(regular, "out.jsonl")}},
		{"--sink in a missing folder", watch("--sink", filepath.Join(dir, "missing", "out.jsonl")), exitFailure, []string{"--sink", "does not exist"}},
		{"--sink is a folder", watch("--sink", dir), exitFailure, []string{"--sink", dir}},
		{"--sink is the store", withStore(store, "--sink", store), exitUsage, []string{"--sink", store, "offset store"}},
		{"--sink is a link to the store", withStore(store, "--sink", storeLink), exitUsage, []string{"--sink", "offset store"}},
		{"--sink is the store, not made yet", withStore(unmade, "--sink", unmade), exitUsage, []string{"--sink", "offset store"}},
		{"--sink is a link to the store, not made yet", withStore(unmade, "--sink", unmadeLink), exitUsage, []string{"--sink", "offset store"}},
		{"--log is the store", withStore(store, "--log", store), exitUsage, []string{"--log", "offset store"}},
		{"--sink is the store under --no-store", []string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--no-store", "--store", store, "--sink", store}, exitUsage, []string{"--sink", "offset store"}},
		{"--sink and --log one file", watch("--sink", filepath.Join(dir, "both"), "--log", filepath.Join(dir, "both")), exitUsage, []string{"--sink", "--log", "one file"}},
		{"--name not UTF-8", watch("--name", "a\xff\xfe"), exitUsage, []string{"invalid --name", `\xff`}},
		{"replay --out is the store", []string{"replay", topic + ":0:0-5", "-b", b, "--store", store, "--out", store}, exitUsage, []string{"--out", "offset store"}},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			r := execKbatch(t, nil, tc.args...)
			checkOneLine(t, r, tc.code, tc.want)
		})
	}

	after, err := os.ReadFile(corrupt)
	if err != nil || !bytes.Equal(after, corruptBytes) {
		t.Errorf("the corrupt store file was modified (%v)", err)
	}
	if after, err := os.ReadFile(store); err != nil || !bytes.Equal(after, storeBytes) {
		t.Errorf("the store named as an output was modified (%v)", err)
	}
	if _, err := os.Stat(unmade); !os.IsNotExist(err) {
		t.Errorf("the store path named as --sink was created (%v)", err)
	}

	t.Run("store in a read-only folder", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root: a read-only folder does not stop root (the regular-file row covers an unwritable store path)")
		}
		ro := filepath.Join(dir, "readonly")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		r := execKbatch(t, nil, withStore(filepath.Join(ro, "offsets.db"))...)
		checkOneLine(t, r, exitFailure, []string{filepath.Join(ro, "offsets.db")})
	})
}

// TestImportRefusesInvalidTopicsOfADocument: a kbatch offsets document's
// "topics" are checked as "next"'s are (stored unchecked, "" or "bad name"
// would become topics of the stream and make export --format spark -b fail
// later), and a topic of "next" that "topics" does not list is added.
func TestImportRefusesInvalidTopicsOfADocument(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "s.db")
	bad := writeFile(t, dir, "bad.json", `{"stream":"s","topics":["","bad name"],"next":{"events":{"0":5}}}`, 0o600)
	r := execKbatch(t, nil, "offsets", "import", "--store", store, "--from-json", bad)
	checkOneLine(t, r, exitUsage, []string{"lists an invalid topic"})

	partial := writeFile(t, dir, "partial.json", `{"stream":"s","topics":["other"],"next":{"events":{"0":5}}}`, 0o600)
	if r := execKbatch(t, nil, "offsets", "import", "--store", store, "--from-json", partial); r.code != 0 {
		t.Fatalf("import: exit %d: %s", r.code, r.stderr)
	}
	r = execKbatch(t, nil, "offsets", "export", "--store", store, "--name", "s")
	if !strings.Contains(r.stdout, `"topics":["events","other"]`) {
		t.Errorf("export after import: %s %s, want both topics", r.stdout, r.stderr)
	}
}

// A range or an offset spec that does not parse is quoted in its error
// with its text raw, escaped once where the line is printed: quoting it
// with %q as well would double the backslashes, so the four characters
// \x1b and an ESC, the two forms the escaping rule keeps apart, would
// come out as \\\\x1b and \\x1b.
func TestBadSpecsAreEscapedOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", `a\x1b:0:0-1`}, `"a\\x1b:0:0-1"`},
		{[]string{"replay", "a\x1b:0:0-1"}, `"a\x1b:0:0-1"`},
		{[]string{"replay", "events:0:0-1\x1b"}, `"1\x1b"`},
		{[]string{"watch", "-t", "events", "-o", `events:0=1\x`, "--no-tui"}, `"1\\x"`},
		{[]string{"watch", "-t", "events", "-o", "events:\x1b=1", "--no-tui"}, `"\x1b"`},
	} {
		r := execKbatch(t, nil, append(tc.args, "-b", "127.0.0.1:1")...)
		checkOneLine(t, r, exitUsage, []string{tc.want})
		checkNoControl(t, "stderr", r.stderr)
		if strings.Contains(r.stderr, `\\\\`) || strings.Contains(r.stderr, `\\x1b`) != strings.Contains(tc.want, `\\x1b`) {
			t.Errorf("%q: stderr %q escapes its text twice", tc.args, r.stderr)
		}
	}
}

// TestInputsAcceptedButWrong: values that parse but make no sense, and
// arguments a command does not take, are usage errors (exit 2) with one
// line that says which input is wrong.
func TestInputsAcceptedButWrong(t *testing.T) {
	for _, tc := range []struct {
		label string
		args  []string
		want  []string
	}{
		{"negative --dial-timeout", []string{"topics", "-b", "127.0.0.1:1", "--dial-timeout", "-1s"}, []string{"--dial-timeout", "-1s"}},
		{"zero --dial-timeout", []string{"topics", "-b", "127.0.0.1:1", "--dial-timeout", "0s"}, []string{"--dial-timeout", "0s"}},
		{"unknown command", []string{"frobnicate"}, []string{"frobnicate"}},
		{"watch with an argument", []string{"watch", "extra", "-b", "127.0.0.1:1"}, []string{"extra"}},
		{"version with an argument", []string{"version", "extra"}, []string{"extra"}},
		{"completion for an unknown shell", []string{"completion", "tcsh"}, []string{"tcsh"}},
		{"completion with an extra argument", []string{"completion", "bash", "extra"}, []string{"extra"}},
		{"help on an unknown topic", []string{"help", "frob"}, []string{"frob"}},
		{"help on an unknown subcommand", []string{"help", "offsets", "nosuch"}, []string{"nosuch"}},
		{"broker port out of range", []string{"topics", "-b", "localhost:99999"}, []string{"localhost:99999", "port"}},
		{"broker port zero", []string{"topics", "-b", "localhost:0"}, []string{"localhost:0", "port"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			checkOneLine(t, execKbatch(t, nil, tc.args...), exitUsage, tc.want)
		})
	}
}

// TestSecretsNotEchoed: a password put where a name is expected (the
// variable of password_env, the file of password_file) is never printed
// back; a name that looks like a conventional variable name is.
func TestSecretsNotEchoed(t *testing.T) {
	const secret = "S3cret-Pa55word!"
	dir := t.TempDir()
	sasl := []string{"topics", "-b", "127.0.0.1:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u"}
	envCfg := writeFile(t, dir, "env.toml", "[clusters.a]\nbrokers = [\"127.0.0.1:1\"]\n[clusters.a.sasl]\nmechanism = \"PLAIN\"\nusername = \"u\"\npassword_env = \"S3cretPa55word\"\n", 0o600)
	fileCfg := writeFile(t, dir, "file.toml", "[clusters.a]\nbrokers = [\"127.0.0.1:1\"]\n[clusters.a.sasl]\nmechanism = \"PLAIN\"\nusername = \"u\"\npassword_file = \""+secret+"\"\n", 0o600)
	for _, tc := range []struct {
		label  string
		args   []string
		code   int
		secret string
		want   []string
	}{
		{"--sasl-password-env given a password", append(sasl, "--sasl-password-env", secret), exitUsage, secret, []string{"--sasl-password-env"}},
		{"password_env holding a password", []string{"topics", "--config", envCfg, "--cluster", "a"}, exitUsage, "S3cretPa55word", []string{"password_env"}},
		{"--sasl-password-file given a password", append(sasl, "--sasl-password-file", secret), exitUsage, secret, []string{"--sasl-password-file"}},
		{"password_file holding a password", []string{"topics", "--config", fileCfg, "--cluster", "a"}, exitUsage, secret, []string{"password_file"}},
		{"--sasl-mechanism given a password", []string{"topics", "-b", "127.0.0.1:1", "--sasl-mechanism", secret}, exitUsage, secret, []string{"--sasl-mechanism"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			r := execKbatch(t, nil, tc.args...)
			checkOneLine(t, r, tc.code, tc.want, tc.secret, "S3cret")
			if strings.Contains(strings.ToUpper(r.stderr), "S3CRET") {
				t.Errorf("stderr shows the secret in another case: %s", r.stderr)
			}
		})
	}
	t.Run("a variable name is shown", func(t *testing.T) {
		r := execKbatch(t, nil, append(sasl, "--sasl-password-env", "KAFKA_PASSWORD")...)
		checkOneLine(t, r, exitUsage, []string{"KAFKA_PASSWORD"})
	})
	t.Run("an existing file is named", func(t *testing.T) {
		empty := writeFile(t, dir, "empty.pw", "", 0o600)
		r := execKbatch(t, nil, append(sasl, "--sasl-password-file", empty)...)
		checkOneLine(t, r, exitUsage, []string{empty, "empty"})
		if strings.Contains(r.stderr, "warning") {
			t.Errorf("unexpected warning: %s", r.stderr)
		}
	})
}
