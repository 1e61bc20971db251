package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

func ptr[T any](v T) *T { return &v }

func TestParseFull(t *testing.T) {
	doc := `
# kbatch config
default_cluster = "prod"

[clusters.prod]
brokers = ["k1:9093", " k2:9093 "]
kafka_version = "3.7.0"
dial_timeout = "5s"

[clusters.prod.tls]
ca_file = "certs/ca.pem"
cert_file = "/abs/client.pem"
key_file = "~/client.key"
server_name = "kafka.internal"

[clusters.prod.sasl]
mechanism = "scram-sha-512"
username = "svc"
password_file = "prod.pw"

[clusters."lab.local"]
brokers = "l1:9092,l2:9092"
tls = { enabled = false }
sasl = { mechanism = "PLAIN", username = "u", password_env = "LAB_PW" }

[watch]
interval = "500ms"
reset = "earliest"
max_per_partition = 500
samples = 0
tail_records = 2500
ack = "manual"
fail_on_data_loss = true
strict_offsets = false
isolation = "uncommitted"

[store]
path = "/var/lib/kbatch/offsets.db"
`
	f, err := Parse([]byte(doc), "/etc/kbatch/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := &File{
		Path:           "/etc/kbatch/config.toml",
		DefaultCluster: "prod",
		Clusters: map[string]Connection{
			"prod": {
				Name: "prod", Brokers: []string{"k1:9093", "k2:9093"}, KafkaVersion: "3.7.0", DialTimeout: 5 * time.Second,
				TLS:  TLS{Enabled: ptr(true), CAFile: "/etc/kbatch/certs/ca.pem", CertFile: "/abs/client.pem", KeyFile: "~/client.key", ServerName: "kafka.internal"},
				SASL: SASL{Mechanism: "SCRAM-SHA-512", User: "svc", PasswordFile: "/etc/kbatch/prod.pw"},
			},
			"lab.local": {
				Name: "lab.local", Brokers: []string{"l1:9092", "l2:9092"},
				TLS:  TLS{Enabled: ptr(false)},
				SASL: SASL{Mechanism: "PLAIN", User: "u", PasswordEnv: "LAB_PW"},
			},
		},
		Watch: Watch{Interval: 500 * time.Millisecond, Reset: "earliest", MaxPerPartition: 500, Samples: ptr(0), TailRecords: ptr(2500), Ack: "manual", Isolation: "uncommitted",
			FailOnDataLoss: ptr(true), StrictOffsets: ptr(false)},
		Store: Store{Path: "/var/lib/kbatch/offsets.db"},
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("got  %+v\nwant %+v", f, want)
	}
	if f.Clusters["lab.local"].TLS.On() || !f.Clusters["prod"].TLS.On() {
		t.Error("TLS.On")
	}
	wantFlags := map[string]string{"interval": "500ms", "reset": "earliest", "max-per-partition": "500", "samples": "0",
		"tail-records": "2500", "ack": "manual", "fail-on-data-loss": "true", "strict-offsets": "false", "isolation": "uncommitted"}
	if got := f.Watch.FlagValues(); !reflect.DeepEqual(got, wantFlags) {
		t.Errorf("FlagValues %v", got)
	}
}

// TestParseRegistry: [clusters.NAME.registry] reaches the profile, a
// relative password_file taken from the config file's folder, and Merge
// takes it whole from the first layer with a URL.
func TestParseRegistry(t *testing.T) {
	doc := "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.registry]\nurl=\"http://r:8081\"\nusername=\"u\"\npassword_file=\"reg.pw\"\n"
	f, err := Parse([]byte(doc), "/etc/kbatch/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := Registry{URL: "http://r:8081", Username: "u", PasswordFile: "/etc/kbatch/reg.pw"}
	if got := f.Clusters["p"].Registry; got != want {
		t.Errorf("registry %+v, want %+v", got, want)
	}
	if got := Merge(Connection{}, Connection{Registry: Registry{Username: "x"}}, f.Clusters["p"]).Registry; got != want {
		t.Errorf("merged registry %+v, want %+v", got, want)
	}
}

func TestParseEmptyTLSTableTurnsTLSOn(t *testing.T) {
	f, err := Parse([]byte("[clusters.a]\nbrokers=[\"h:1\"]\n[clusters.a.tls]\n"), "c.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Clusters["a"].TLS.On() {
		t.Error("an empty [tls] table should turn TLS on (system roots)")
	}
	if f.Clusters["a"].TLS.Insecure() {
		t.Error("not insecure")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		label string
		doc   string
		line  int
		want  string
	}{
		{"syntax", "a = 1\nb = \n", 2, "invalid TOML"},
		{"duplicate key", "[store]\npath = \"a\"\npath = \"b\"\n", 3, "key path is already defined"},
		{"syntax below a bad value", "[clusters.prod]\nbrokers = [\"h:1\"]\nkafka_version = 2.8\nx = [1,\n", 4, "invalid TOML"},
		{"duplicate key after a bad value", "clusters = 1\nclusters = 2\n", 2, "key clusters is already defined"},
		{"array of inline tables for a table", "[clusters.p]\nbrokers=[\"h:1\"]\ntls = [ { ca_file = \"x\" } ]\n", 3, "clusters.p.tls must be a table ([clusters.p.tls]), not an array of tables"},
		{"unknown top key", "\n\nverbose = true\n", 3, `unknown key "verbose"`},
		{"unknown cluster key with suggestion", "[clusters.prod]\nbrokers = [\"h:1\"]\n\nbroker_list = 1\n", 4, `unknown key "clusters.prod.broker_list"`},
		{"typo suggestion", "[clusters.prod]\nbrokerz = [\"h:1\"]\n", 2, `did you mean "brokers"?`},
		{"case matters", "[clusters.prod]\nBrokers = [\"h:1\"]\n", 2, `unknown key "clusters.prod.Brokers" (did you mean "brokers"?)`},
		{"unknown sasl key", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism=\"PLAIN\"\npasswrd = \"x\"\n", 5, `unknown key "clusters.p.sasl.passwrd"`},
		{"unknown key in inline table", "[clusters.p]\nbrokers=[\"h:1\"]\ntls = { ca_file = \"x\", bogus = 1 }\n", 3, `unknown key "clusters.p.tls.bogus"`},
		{"dotted unknown key", "[clusters.p]\nbrokers=[\"h:1\"]\ntls.cafile = \"x\"\n", 3, `unknown key "clusters.p.tls.cafile" (did you mean "ca_file"?)`},
		{"unknown table", "[clusters.p]\nbrokers=[\"h:1\"]\n\n[clusters.p.ssl]\nx=1\n", 4, `unknown key "clusters.p.ssl"`},
		{"unknown watch key", "[watch]\ninterval = \"1s\"\nsample = 3\n", 3, `(did you mean "samples"?)`},
		{"quoted weird key", "[watch]\n\"a b\" = 1\n", 2, `unknown key "watch.\"a b\""`},
		{"clusters as array", "[[clusters]]\nbrokers = [\"h:1\"]\n", 1, "clusters must be a table"},
		{"cluster not a table", "clusters = { prod = 1 }\n", 1, "clusters.prod must be a table"},
		{"brokers wrong type", "[clusters.p]\nbrokers = 9092\n", 2, "clusters.p.brokers must be an array"},
		{"brokers bad entry", "[clusters.p]\nbrokers = [\"h:1\", 2]\n", 2, "holds an integer"},
		{"broker without port", "[clusters.p]\nbrokers = [\"kafka\"]\n", 2, `invalid broker address "kafka"`},
		{"no brokers", "[clusters.p]\nbrokers = []\n", 2, "no broker address"},
		{"bad mechanism", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"hunter2\"\n", 4, `unknown SASL mechanism (the value is not shown)`},
		{"OAUTHBEARER without token", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"OAUTHBEARER\"\n", 3, "OAUTHBEARER needs a token"},
		{"OAUTHBEARER two token sources", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"OAUTHBEARER\"\ntoken_env=\"T\"\ntoken_file=\"t\"\n", 3, "only one of token_file"},
		{"OAUTHBEARER endpoint without secret", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"OAUTHBEARER\"\ntoken_endpoint=\"https://idp/token\"\nclient_id=\"c\"\n", 3, "needs client_secret_env"},
		{"OAUTHBEARER CA with a static token", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"OAUTHBEARER\"\ntoken_env=\"T\"\ntoken_endpoint_ca=\"ca.pem\"\n", 3, "token_endpoint_ca is for token_endpoint"},
		{"OAUTHBEARER endpoint not a URL", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"OAUTHBEARER\"\ntoken_endpoint=\"s3cr3t\"\n", 5, "want an https:// URL"},
		{"bad extension name", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"OAUTHBEARER\"\ntoken_env=\"T\"\nextensions = { auth = \"x\" }\n", 6, "extension name is letters only"},
		{"token with SCRAM", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"SCRAM-SHA-256\"\nusername=\"u\"\ntoken_file=\"t\"\n", 3, "are for mechanism OAUTHBEARER, not SCRAM-SHA-256"},
		{"password with MSK IAM", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism = \"AWS_MSK_IAM\"\npassword_env=\"P\"\n", 3, "AWS_MSK_IAM takes no password"},
		{"two key passphrase sources", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.tls]\ncert_file=\"c\"\nkey_file=\"k\"\nkey_password_env=\"A\"\nkey_password_command=\"b\"\n", 3, "only one of key_password_env"},
		{"two password sources", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism=\"PLAIN\"\npassword_env=\"A\"\npassword_file=\"b\"\n", 3, "only one of password"},
		{"registry without url", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.registry]\nusername=\"u\"\n", 3, "clusters.p.registry: url is missing"},
		{"registry two password sources", "[clusters.p]\nbrokers=[\"h:1\"]\nregistry = { url = \"http://r:8081\", password_env=\"A\", password_file=\"b\" }\n", 3, "only one of password_env and password_file"},
		{"registry inline password", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.registry]\nurl=\"http://r:8081\"\npassword=\"x\"\n", 5, `unknown key "clusters.p.registry.password"`},
		{"registry url scheme", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.registry]\nurl=\"ftp://u:hunter2@r\"\n", 4, "clusters.p.registry.url: want an http:// or https:// URL"},
		{"sasl without mechanism", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nusername=\"u\"\n", 3, "mechanism is missing"},
		{"cert without key", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.tls]\ncert_file=\"c.pem\"\n", 3, "cert_file and key_file go together"},
		{"bool wrong type", "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.tls]\ninsecure_skip_verify = \"yes\"\n", 4, "must be true or false, not a string"},
		{"interval integer", "[watch]\ninterval = 5\n", 2, `must be a duration string like "500ms"`},
		{"interval bad", "[watch]\ninterval = \"5parsecs\"\n", 2, `interval = "5parsecs": want a positive duration`},
		{"interval negative", "[watch]\ninterval = \"-1s\"\n", 2, "positive duration"},
		{"reset", "[watch]\nreset = \"middle\"\n", 2, `want "earliest" or "latest"`},
		{"ack", "[watch]\nack = \"sometimes\"\n", 2, `want "auto" or "manual"`},
		{"isolation", "[watch]\nisolation = \"read_committed\"\n", 2, `want "committed" or "uncommitted"`},
		{"max_per_partition zero", "[watch]\nmax_per_partition = 0\n", 2, "must be at least 1"},
		{"samples negative", "[watch]\nsamples = -1\n", 2, "must be at least 0"},
		{"samples above the cap", "[watch]\nsamples = 5000\n", 2, "must be at most 1000"},
		{"tail_records above the cap", "[watch]\ntail_records = 2000000\n", 2, "must be at most 1000000"},
		{"tail_records negative", "[watch]\ntail_records = -1\n", 2, "must be at least 0"},
		{"samples float", "[watch]\nsamples = 1.5\n", 2, "must be an integer, not a float"},
		{"store path empty", "[store]\npath = \"\"\n", 2, "store.path is empty"},
		{"default cluster missing", "default_cluster = \"prod\"\n[clusters.dev]\nbrokers=[\"h:1\"]\n", 1, `default_cluster "prod" is not defined: add [clusters.prod] (defined: dev)`},
		{"empty cluster name", "[clusters.\"\"]\nbrokers=[\"h:1\"]\n", 1, "a cluster needs a name"},
		{"multiline string then unknown", "[clusters.p]\nbrokers=[\"h:1\"]\nkafka_version = \"\"\"\nnope = 1\n\"\"\"\nnope = 2\n", 6, `unknown key "clusters.p.nope"`},
		{"multiline array then unknown", "[clusters.p]\nbrokers = [\n  \"h:1\",\n  \"h:2\",\n]\nextra = true\n", 6, `unknown key "clusters.p.extra"`},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), "/x/config.toml")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if ce.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", ce.Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "config /x/config.toml:") {
				t.Errorf("error %q does not start with the file:line", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error has more than one line: %q", err)
			}
		})
	}
}

func TestParseErrorsHideSecrets(t *testing.T) {
	for _, doc := range []string{
		"[clusters.p.sasl]\npassword = hunter2\n",
		"[clusters.p.sasl]\npassword = \"hunter2\n",
		"[clusters.p.sasl]\npassword = \"hun\\qter2\"\n",
		"[clusters.p.sasl]\npassword = 12hunter2\n",
		"[clusters.p.sasl]\npassword = [\"hunter2\"]\n",
		"[clusters.p.sasl]\npassword = \"hunter2\"\nbogus = 1\n",
		"[clusters.p.sasl]\nmechanism = \"PLAIN\"\npassword = \"hunter2\"\npassword_env = \"X\"\n",
	} {
		_, err := Parse([]byte(doc), "c.toml")
		if err == nil {
			t.Fatalf("%q parsed", doc)
		}
		if strings.Contains(err.Error(), "hunter") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

func TestKeyLines(t *testing.T) {
	doc := `a = 1 # comment with [brackets] and = signs
"quoted.key" = 'x'
[t1]   # table
b.c = """
x = 1
"""
d = [ { e = 1 },
      { f = 2 } ]
[[arr]]
g = 1
[ t2 . "sub key" ]
h = { i = { j = 1 } }
`
	lines := keyLines([]byte(doc))
	for path, want := range map[string]int{
		"a": 1, "quoted.key": 2, "t1": 3, "t1\x1fb": 4, "t1\x1fb\x1fc": 4, "t1\x1fd": 7,
		"arr": 9, "arr\x1fg": 10, "t2": 11, "t2\x1fsub key": 11, "t2\x1fsub key\x1fh\x1fi\x1fj": 12,
	} {
		if lines[path] != want {
			t.Errorf("%q: line %d, want %d", path, lines[path], want)
		}
	}
	if _, ok := lines["x"]; ok {
		t.Error("a key inside a multi-line string was taken for a key")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	f, err := Load(filepath.Join(dir, "missing.toml"), false)
	if err != nil || len(f.Clusters) != 0 || f.Path != "" {
		t.Errorf("missing default file: %+v, %v", f, err)
	}
	_, err = Load(filepath.Join(dir, "missing.toml"), true)
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "missing.toml: does not exist") {
		t.Errorf("missing explicit file: %v", err)
	}
	if _, err := Load(dir, true); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("folder: %v", err)
	}

	home, _ := os.UserHomeDir()
	secret := filepath.Join(dir, "secret.toml")
	doc := "[clusters.p]\nbrokers=[\"h:1\"]\n[clusters.p.sasl]\nmechanism=\"PLAIN\"\nusername=\"u\"\npassword=\"hunter2\"\n[store]\npath=\"~/kb.db\"\n"
	if err := os.WriteFile(secret, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(secret, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Load(secret, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], secret) || !strings.Contains(f.Warnings[0], "chmod 600") {
		t.Errorf("warnings %q", f.Warnings)
	}
	if strings.Contains(strings.Join(f.Warnings, ""), "hunter2") {
		t.Error("warning shows the password")
	}
	if home != "" && f.Store.Path != filepath.Join(home, "kb.db") {
		t.Errorf("~ not expanded: %q", f.Store.Path)
	}
	if err := os.Chmod(secret, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err = Load(secret, true); err != nil || len(f.Warnings) != 0 {
		t.Errorf("0600 file: %v %q", err, f.Warnings)
	}

	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, maxConfigSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, true); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("big file: %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if p := DefaultPath(); p != "/xdg/kbatch/config.toml" {
		t.Errorf("with XDG_CONFIG_HOME: %q", p)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if p := DefaultPath(); p != "/home/u/.config/kbatch/config.toml" {
		t.Errorf("without XDG_CONFIG_HOME: %q", p)
	}
}

// FuzzLoadConfig checks that Parse never panics, and that what it accepts
// is self-consistent: every profile named, the default profile defined.
func FuzzLoadConfig(f *testing.F) {
	for _, seed := range []string{
		"",
		"default_cluster = \"a\"\n[clusters.a]\nbrokers = [\"h:1\"]\n",
		"[clusters.a]\nbrokers = \"h:1,h:2\"\ntls = { ca_file = \"ca.pem\" }\n[clusters.a.sasl]\nmechanism = \"PLAIN\"\nusername = \"u\"\npassword = \"p\"\n",
		"[watch]\ninterval = \"1s\"\nsamples = 3\n[store]\npath = \"x.db\"\n",
		"[clusters.a]\nkafka_version = \"\"\"\nx = 1\n\"\"\"\n",
		"a = [ { b = 1 },\n { c = 2 } ]\n",
		"[clusters.\"q.k\"]\n'lit' = 1\n",
		"[[clusters]]\n",
		"x = \"unterminated\n",
		"[clusters.p]\nbrokers=[\"h:99999\"]\n[clusters.p.sasl]\nmechanism = \"S3cret!\"\npassword_env = \"pw\"\n",
	} {
		f.Add([]byte(seed))
	}
	if b, err := os.ReadFile(filepath.Join("..", "config.example.toml")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "/fuzz/config.toml")
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		for name, c := range cfg.Clusters {
			if c.Name != name {
				t.Fatalf("profile %q has Name %q", name, c.Name)
			}
		}
		if cfg.DefaultCluster != "" {
			if _, ok := cfg.Clusters[cfg.DefaultCluster]; !ok {
				t.Fatalf("default cluster %q not defined", cfg.DefaultCluster)
			}
		}
		_ = keyLines(data)
	})
}

// TestExampleFile keeps config.example.toml valid and complete: it parses,
// and it mentions every key kbatch knows.
func TestExampleFile(t *testing.T) {
	data, err := os.ReadFile("../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data, "/repo/config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	if f.DefaultCluster == "" || len(f.Clusters) < 2 || !f.Clusters["prod"].TLS.On() || !f.Clusters["prod"].SASL.On() {
		t.Errorf("example profiles %+v", f.Clusters)
	}
	for _, keys := range [][]string{topKeys, clusterKeys, tlsKeys, saslKeys, registryKeys, watchKeys, storeKeys} {
		for _, k := range keys {
			if !strings.Contains(string(data), k) {
				t.Errorf("config.example.toml does not document %q", k)
			}
		}
	}
}

// TestGoTOMLAloneIgnoresCaseAndNamesGoTypes holds the reason checkKeys
// exists: go-toml v2, even with DisallowUnknownFields, decodes a key
// onto the field whose tag differs from it only in case, and its type
// errors name Go types rather than the TOML types a user wrote. If it
// fails, go-toml has changed and checkKeys may shrink.
func TestGoTOMLAloneIgnoresCaseAndNamesGoTypes(t *testing.T) {
	var raw rawFile
	if err := toml.NewDecoder(strings.NewReader("[watch]\nSamples = 3\n")).DisallowUnknownFields().Decode(&raw); err != nil || raw.Watch.Samples == nil || *raw.Watch.Samples != 3 {
		t.Errorf("go-toml refused a key of the wrong case (%v, %v): checkKeys need not check case", err, raw.Watch.Samples)
	}
	err := toml.NewDecoder(strings.NewReader("[watch]\nsamples = 1.5\n")).DisallowUnknownFields().Decode(&raw)
	if err == nil || !strings.Contains(err.Error(), "rawWatch") {
		t.Errorf("go-toml's type error %v no longer names the Go type", err)
	}
	if _, err := Parse([]byte("[watch]\nSamples = 3\n"), "/x/config.toml"); err == nil || !strings.Contains(err.Error(), `unknown key "watch.Samples" (did you mean "samples"?)`) {
		t.Errorf("Parse: %v", err)
	}
}
