package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kbatch-dev/kbatch/config"
	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/record"
)

// cliRun is one run of the binary.
type cliRun struct {
	stdout, stderr string
	code           int
}

// execKbatch runs the binary in a clean environment: HOME and the XDG
// folders point into a temporary folder (so no real config or store is
// read), env adds NAME=VALUE pairs, and the process gets its own session,
// so it has no terminal and never prompts.
func execKbatch(t *testing.T, env []string, args ...string) cliRun {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kbatchBinary(t), args...)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
	}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := cliRun{stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running kbatch %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("kbatch %s did not finish within 2 minutes", strings.Join(args, " "))
	}
	return r
}

// writeFile writes content to dir/name with mode and returns the path.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	return fixtures.WriteFile(t, filepath.Join(dir, name), content, mode)
}

// testOptions parses args with the real root command and returns its
// globalOptions, with env as the environment and stderr captured.
func testOptions(t *testing.T, env map[string]string, args ...string) (*globalOptions, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	g := &globalOptions{
		stderr: &stderr,
		getenv: func(k string) string { return env[k] },
		prompt: func(string) (config.Secret, error) { return "", config.ErrNoTerminal },
	}
	if err := newRootCommandFor(g).ParseFlags(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return g, &stderr
}

func TestConnectionPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.toml", `
default_cluster = "dev"

[clusters.dev]
brokers = ["dev:9092"]
kafka_version = "3.6.0"

[clusters.prod]
brokers = ["prod1:9093", "prod2:9093"]
dial_timeout = "3s"

[clusters.prod.tls]
server_name = "kafka.example.com"

[clusters.prod.sasl]
mechanism = "scram-sha-512"
username = "reader"
password_env = "PROD_PW"

[store]
path = "state/offsets.db"
`, 0o600)
	type want struct {
		name, brokers, version, mech, user string
		tls                                bool
		dial                               time.Duration
	}
	tests := []struct {
		label string
		env   map[string]string
		args  []string
		want  want
	}{
		{"default cluster", nil, nil, want{name: "dev", brokers: "dev:9092", version: "3.6.0", dial: 10 * time.Second}},
		{"-b skips the default cluster", nil, []string{"-b", "local:9092"}, want{brokers: "local:9092", dial: 10 * time.Second}},
		{"env brokers skip the default cluster", map[string]string{"KBATCH_BROKERS": "env:9092"}, nil, want{brokers: "env:9092", dial: 10 * time.Second}},
		{"--cluster", map[string]string{"PROD_PW": "x"}, []string{"--cluster", "prod"},
			want{name: "prod", brokers: "prod1:9093,prod2:9093", mech: "SCRAM-SHA-512", user: "reader", tls: true, dial: 3 * time.Second}},
		{"KBATCH_CLUSTER", map[string]string{"KBATCH_CLUSTER": "prod", "PROD_PW": "x"}, nil,
			want{name: "prod", brokers: "prod1:9093,prod2:9093", mech: "SCRAM-SHA-512", user: "reader", tls: true, dial: 3 * time.Second}},
		{"--cluster beats KBATCH_CLUSTER", map[string]string{"KBATCH_CLUSTER": "prod"}, []string{"--cluster", "dev"},
			want{name: "dev", brokers: "dev:9092", version: "3.6.0", dial: 10 * time.Second}},
		{"flag beats env beats profile", map[string]string{"KBATCH_BROKERS": "env:9092", "KBATCH_SASL_USER": "envuser", "KBATCH_KAFKA_VERSION": "3.0.0", "PROD_PW": "x"},
			[]string{"--cluster", "prod", "--sasl-user", "flaguser", "--dial-timeout", "7s"},
			want{name: "prod", brokers: "env:9092", version: "3.0.0", mech: "SCRAM-SHA-512", user: "flaguser", tls: true, dial: 7 * time.Second}},
		{"--tls=false turns a profile's TLS off", map[string]string{"PROD_PW": "x"}, []string{"--cluster", "prod", "--tls=false"},
			want{name: "prod", brokers: "prod1:9093,prod2:9093", mech: "SCRAM-SHA-512", user: "reader", dial: 3 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			g, _ := testOptions(t, tc.env, append([]string{"--config", cfg}, tc.args...)...)
			cc, err := g.clientConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := want{name: g.conn.Cluster, brokers: strings.Join(cc.Brokers, ","), tls: cc.TLS != nil, dial: cc.DialTimeout}
			got.version = cc.Version
			if cc.SASL != nil {
				got.mech, got.user = cc.SASL.Mechanism, cc.SASL.User
				if cc.SASL.Password != "x" {
					t.Errorf("password not taken from PROD_PW")
				}
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}

	g, _ := testOptions(t, nil, "--config", cfg)
	if p, err := g.storePath(); err != nil || p != filepath.Join(dir, "state", "offsets.db") {
		t.Errorf("store from [store] path: %q, %v", p, err)
	}
	g, _ = testOptions(t, map[string]string{"KBATCH_STORE": "/env/store.db"}, "--config", cfg)
	if p, _ := g.storePath(); p != "/env/store.db" {
		t.Errorf("KBATCH_STORE should beat [store]: %q", p)
	}
	g, _ = testOptions(t, map[string]string{"KBATCH_STORE": "/env/store.db"}, "--config", cfg, "--store", "/flag.db")
	if p, _ := g.storePath(); p != "/flag.db" {
		t.Errorf("--store should beat KBATCH_STORE: %q", p)
	}
}

func TestConnectionErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.toml", `
[clusters.prod]
brokers = ["prod:9093"]
[clusters.prod.sasl]
mechanism = "PLAIN"
username = "reader"
`, 0o600)
	tests := []struct {
		label string
		env   map[string]string
		args  []string
		want  string
	}{
		{"no brokers", nil, nil, "no brokers"},
		{"unknown cluster", nil, []string{"--cluster", "nope"}, `unknown cluster "nope"`},
		{"no password, no terminal", nil, []string{"--cluster", "prod"}, "needs a password and there is no terminal"},
		{"password env unset", nil, []string{"--cluster", "prod", "--sasl-password-env", "MISSING_PW"}, "MISSING_PW"},
		{"bad mechanism", nil, []string{"-b", "h:1", "--sasl-mechanism", "KERBEROS5", "--sasl-user", "u"}, "unknown SASL mechanism (the value is not shown)"},
		{"GSSAPI without realm", nil, []string{"-b", "h:1", "--sasl-mechanism", "GSSAPI", "--sasl-user", "u"}, "kerberos_realm"},
		{"OAUTHBEARER from flags alone", nil, []string{"-b", "h:1", "--sasl-mechanism", "oauthbearer"}, "OAUTHBEARER needs a token"},
		{"MSK IAM without a region", nil, []string{"-b", "h:1", "--sasl-mechanism", "AWS_MSK_IAM"}, "needs the cluster's AWS region"},
		{"user without mechanism", nil, []string{"-b", "h:1", "--sasl-user", "u"}, "without a mechanism"},
		{"mechanism without user", nil, []string{"-b", "h:1", "--sasl-mechanism", "PLAIN"}, "needs a user name"},
		{"bad broker", nil, []string{"-b", "nohost"}, `invalid broker address "nohost"`},
		{"bad env broker", map[string]string{"KBATCH_BROKERS": "h:x"}, nil, "KBATCH_BROKERS"},
		{"bad version", nil, []string{"-b", "h:1", "--kafka-version", "banana"}, `invalid Kafka version "banana"`},
		{"missing CA", nil, []string{"-b", "h:1", "--tls-ca", filepath.Join(dir, "nope.pem")}, "does not exist"},
		{"cert without key", nil, []string{"-b", "h:1", "--tls-cert", cfg}, "--tls-key"},
		{"CA without PEM", nil, []string{"-b", "h:1", "--tls-ca", cfg}, "holds no PEM certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			g, _ := testOptions(t, tc.env, append([]string{"--config", cfg}, tc.args...)...)
			_, err := g.clientConfig()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if exitCode(err) != exitUsage {
				t.Errorf("exit code %d, want %d", exitCode(err), exitUsage)
			}
		})
	}
	g, _ := testOptions(t, nil, "--config", cfg)
	if _, err := g.clientConfig(); !errors.Is(err, errNoBrokers) {
		t.Errorf("no brokers should wrap errNoBrokers: %v", err)
	}
}

func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.toml", `
[clusters.lab]
brokers = ["lab:9093"]
[clusters.lab.tls]
insecure_skip_verify = true
[clusters.lab.sasl]
mechanism = "PLAIN"
username = "u"
password = "inline-secret-123"
`, 0o644)
	g, stderr := testOptions(t, nil, "--config", cfg, "--cluster", "lab")
	cc, err := g.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !cc.TLS.InsecureSkipVerify || !g.conn.InsecureSkipVerify {
		t.Error("insecure_skip_verify not applied or not exposed in connectionInfo")
	}
	out := stderr.String()
	for _, want := range []string{"warning: TLS certificate checks are off", "warning: config " + cfg + " holds a SASL password and can be read by other users"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "inline-secret-123") {
		t.Error("stderr shows the password")
	}
	if _, err := g.clientConfig(); err != nil {
		t.Fatal(err)
	}
	if strings.Count(stderr.String(), "\n") != strings.Count(out, "\n") {
		t.Error("warnings repeated on a second clientConfig")
	}

	pwFile := writeFile(t, dir, "pw", "file-secret\n", 0o644)
	g, stderr = testOptions(t, nil, "-b", "h:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", pwFile)
	cc, err = g.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cc.SASL.Password != "file-secret" {
		t.Error("password file's first line not used")
	}
	if !strings.Contains(stderr.String(), "SASL password file "+pwFile+" can be read by other users") {
		t.Errorf("no warning for a readable password file: %q", stderr.String())
	}
}

func TestWatchDefaultsFromConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.toml", `
[watch]
interval = "250ms"
samples = 0
reset = "earliest"
max_per_partition = 77
`, 0o600)
	for _, sub := range []string{"watch", ""} {
		args := []string{"--config", cfg, "--interval", "2s"}
		if sub != "" {
			args = append([]string{sub}, args...)
		}
		root := newRootCommandFor(&globalOptions{getenv: func(string) string { return "" }})
		cmd, rest, err := root.Find(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatal(err)
		}
		if err := root.PersistentPreRunE(cmd, nil); err != nil {
			t.Fatal(err)
		}
		f := cmd.Flags()
		want := map[string]string{"interval": "2s", "samples": "0", "reset": "earliest", "max-per-partition": "77", "ack": "auto"}
		for name, w := range want {
			if got := f.Lookup(name).Value.String(); got != w {
				t.Errorf("%q: --%s = %s, want %s", sub, name, got, w)
			}
		}
	}
}

func TestTopicsCommand(t *testing.T) {
	kc, topic := filledTopic(t, "topicscmd", 3, 10, 7, 0, 2)
	b := strings.Join(kc.Brokers, ",")

	r := execKbatch(t, nil, "topics", "-b", b, topic)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TOPIC") || !strings.Contains(lines[0], "HIGH WATERMARK") {
		t.Fatalf("table:\n%s", r.stdout)
	}
	for i, wantHW := range []string{"7", "0", "2"} {
		f := strings.Fields(lines[i+1])
		// TOPIC PARTITIONS PARTITION LOG-START HIGH-WATERMARK CLEANUP RETENTION REPLICAS ISR LEADER-ID LEADER-ADDR
		if len(f) != 11 || f[0] != topic || f[1] != "3" || f[2] != strconv.Itoa(i) || f[3] != "0" || f[4] != wantHW ||
			f[5] != "delete" || f[6] != "7d" || f[7] == "-" || f[8] == "-" || !strings.Contains(","+f[7]+",", ","+f[9]+",") {
			t.Errorf("row %d: %q", i, lines[i+1])
		}
	}

	infos := topicsJSON(t, execKbatch(t, nil, "topics", "--json", "-b", b))
	found := false
	for _, ti := range infos {
		if ti.Topic == topic {
			found = true
			if ti.PartitionCount != 3 || len(ti.Partitions) != 3 || ti.Partitions[0].HighWatermark != 7 || ti.Partitions[0].Leader < 0 || ti.Partitions[0].LeaderAddr == "" {
				t.Errorf("topic %+v", ti)
			}
			if ti.CleanupPolicy != "delete" || ti.RetentionMs == nil || *ti.RetentionMs != 7*24*3600*1000 || ti.RetentionBytes == nil || *ti.RetentionBytes != -1 {
				t.Errorf("topic %s settings: cleanup %q, retention %v ms, %v bytes", ti.Topic, ti.CleanupPolicy, ti.RetentionMs, ti.RetentionBytes)
			}
			for _, p := range ti.Partitions {
				if len(p.Replicas) == 0 || len(p.ISR) == 0 || !slices.Contains(p.Replicas, p.Leader) {
					t.Errorf("partition %d: replicas %v, isr %v, leader %d", p.Partition, p.Replicas, p.ISR, p.Leader)
				}
			}
		}
		if strings.HasPrefix(ti.Topic, "__") {
			t.Errorf("internal topic %s listed without --all", ti.Topic)
		}
	}
	if !found {
		t.Errorf("topic %s missing from --json", topic)
	}

	// A compacted topic with a day's retention says so.
	compact, day := "compact", "86400000"
	ct := kc.TopicWith("topicscompact", 1, map[string]*string{"cleanup.policy": &compact, "retention.ms": &day})
	r = execKbatch(t, nil, "topics", "-b", b, ct)
	if f := strings.Fields(strings.Split(r.stdout, "\n")[1]); r.code != 0 || len(f) < 7 || f[5] != "compact" || f[6] != "1d" {
		t.Errorf("compacted topic (exit %d): %q", r.code, r.stdout)
	}
}

// FuzzOneLine checks the stderr line kbatch prints for any error text (a
// broker's message, a host or topic name, a file name): one line, and not a
// rune a terminal would act on.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{
		"scram: server refused: \x1b]0;PWNED\x07\x1b[2J", "dial tcp: lookup evil\u009b2J: no such host",
		"a\r\nb\nc\r", "\u202etxt.exe", "\xff\xfe", "topic \x1b]52;c;aGk=\x07 does not exist", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := oneLine(errors.New(s))
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("oneLine(%q) = %q is not one line", s, line)
		}
		if len(line) > maxLineBytes+40 || !utf8.ValidString(line) {
			t.Fatalf("oneLine of %d bytes: %d bytes, valid UTF-8 %v", len(s), len(line), utf8.ValidString(line))
		}
		for _, r := range line {
			if record.UnsafeRune(r) {
				t.Fatalf("oneLine(%q) = %q holds %U", s, line, r)
			}
		}
	})
}

// A broker's host or topic name may be 32 KiB (four times that escaped):
// an error naming one was a line of 48 KB for a 30 KB name. The line's
// middle is cut, saying how much; what failed and why stay.
func TestOneLineCutsAHugeNameInTheMiddle(t *testing.T) {
	name := strings.Repeat("a\x1b[2J€", 5000)
	line := oneLine(fmt.Errorf("cannot reach the Kafka cluster at %s: no such host", name))
	t.Logf("%d bytes: %.80s … %s", len(line), line, line[len(line)-80:])
	if len(line) > maxLineBytes+40 || !utf8.ValidString(line) || !strings.HasPrefix(line, `cannot reach the Kafka cluster at a\x1b[2J€a`) ||
		!strings.HasSuffix(line, `a\x1b[2J€: no such host`) || !strings.Contains(line, " bytes cut]… ") {
		t.Fatalf("oneLine of a %d-byte name: %d bytes, %q", len(name), len(line), line)
	}
}

// The stderr line doubles backslashes once: an ESC in an error shows as
// \x1b, the four characters \x1b as \\x1b.
func TestOneLineDoublesBackslashes(t *testing.T) {
	got := oneLine(errors.New("broker said \x1b[2J and \\x1b[2J in C:\\tmp"))
	want := `broker said \x1b[2J and \\x1b[2J in C:\\tmp`
	if got != want {
		t.Fatalf("oneLine = %q, want %q", got, want)
	}
}

// A name with a backslash shows with it doubled once, in output printed
// directly (offsets show) and in an error (an unknown stream), where it is
// quoted in the message and escaped where the line is printed.
func TestStreamNameBackslashEscapedOnce(t *testing.T) {
	store := isolatedStore(t)
	s := offsetsOpenTestStore(t, store)
	s.stream(`dc\east`, "events")
	s.close()
	out := offsetsOK(t)(runInProcess(t, "", "offsets", "show", "--store", store))
	if !strings.Contains(out, `stream "dc\\east"`+"\n") || strings.Contains(out, `\\\\`) {
		t.Errorf("offsets show:\n%s", out)
	}
	_, stderr, code := runInProcess(t, "", "offsets", "show", "--store", store, "--name", `dc\west`)
	want := `kbatch: unknown stream "dc\\west" in store ` + store + ` (it has "dc\\east")` + "\n"
	if code != exitUsage || stderr != want {
		t.Errorf("exit %d, stderr\n %q\nwant\n %q", code, stderr, want)
	}
}
