package cli

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// An https registry: its CA from a flag, a variable or the profile; no CA
// fails each record with the certificate's reason; insecure skip verify
// works and warns.
func TestDecodeRegistryTLS(t *testing.T) {
	tc := testkafka.New(t)
	reg := srfake.NewRegistry()
	srv := httptest.NewTLSServer(reg.Handler())
	t.Cleanup(srv.Close)
	topic, id := decodeTopic(t, tc, reg)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	doc := "[clusters.dev]\nbrokers = \"" + strings.Join(tc.Brokers, ",") + "\"\n[clusters.dev.registry]\nurl = \"" + srv.URL +
		"\"\nca_file = \"ca.pem\"\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		env     map[string]string
		args    []string
		decoded bool
		warn    string
	}{
		{"flag", nil, []string{"--registry", srv.URL, "--registry-ca-file", ca}, true, ""},
		{"env", map[string]string{"KBATCH_REGISTRY": srv.URL, "KBATCH_REGISTRY_CA_FILE": ca}, nil, true, ""},
		{"profile", nil, []string{"--config", cfg, "--cluster", "dev"}, true, ""},
		{"no CA", nil, []string{"--registry", srv.URL}, false, "certificate"},
		{"insecure flag", nil, []string{"--registry", srv.URL, "--registry-insecure-skip-verify"}, true, "TLS certificate checks are off (insecure_skip_verify) for the schema registry"},
		{"insecure env", map[string]string{"KBATCH_REGISTRY_INSECURE_SKIP_VERIFY": "true"}, []string{"--registry", srv.URL}, true, "TLS certificate checks are off"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"KBATCH_REGISTRY", "KBATCH_REGISTRY_CA_FILE", "KBATCH_REGISTRY_INSECURE_SKIP_VERIFY"} {
				t.Setenv(k, tt.env[k])
			}
			args := append([]string{topic + ":0:0-1", "--decode", "--store", filepath.Join(t.TempDir(), "o.db")}, tt.args...)
			stdout, stderr, code := runReplayCLI(t, tc, args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			decoded := strings.Contains(stdout, `"value_decoded":{"id":42`)
			if decoded != tt.decoded || !strings.Contains(stdout, `"value_schema_id":`+strconv.Itoa(id)) {
				t.Fatalf("decoded %v, want %v:\n%s\n%s", decoded, tt.decoded, stdout, stderr)
			}
			if tt.warn != "" && !strings.Contains(stderr+stdout, tt.warn) {
				t.Fatalf("no %q in\n%s\n%s", tt.warn, stdout, stderr)
			}
		})
	}
}

func TestDecodeRegistryTLSUsage(t *testing.T) {
	tc := testkafka.New(t)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KBATCH_REGISTRY_INSECURE_SKIP_VERIFY", "")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"http", []string{"--decode", "--registry", "http://127.0.0.1:1", "--registry-ca-file", ca}, "need an https:// registry URL"},
		{"cert without key", []string{"--decode", "--registry", "https://127.0.0.1:1", "--registry-cert-file", ca}, "needs its key"},
		{"bad CA", []string{"--decode", "--registry", "https://127.0.0.1:1", "--registry-ca-file", ca}, "holds no PEM certificate"},
		{"without --decode", []string{"--registry-ca-file", ca}, "are for --decode"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runReplayCLI(t, tc, append([]string{"t:0:0-1", "--store", filepath.Join(t.TempDir(), "o.db")}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tt.want)
			}
		})
	}
}

// A profile's [clusters.NAME.topics.TOPIC] names a topic's local schema;
// other topics are left alone.
func TestDecodeLocalSchemaFromProfile(t *testing.T) {
	tc := testkafka.New(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "order.avsc"), []byte(decodeTestSchema), 0o600); err != nil {
		t.Fatal(err)
	}
	topic := tc.Topic("local", 1)
	other := tc.Topic("other", 1)
	tc.ProduceN(other, 0, 1, 10)
	tc.Produce(&kgo.Record{Topic: topic, Partition: 0, Value: orderPayload(t)})
	cfg := filepath.Join(dir, "config.toml")
	doc := "[clusters.dev]\nbrokers = \"" + strings.Join(tc.Brokers, ",") + "\"\n[clusters.dev.topics.\"" + topic + "\"]\nvalue_avro = \"order.avsc\"\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KBATCH_REGISTRY", "")
	stdout, stderr, code := runReplayCLI(t, tc, topic+":0:0-1", other+":0:0-1", "--config", cfg, "--cluster", "dev", "--decode", "--store", filepath.Join(dir, "o.db"))
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := jsonLines(t, stdout)
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), stdout)
	}
	for _, l := range lines {
		_, decoded := l["value_decoded"]
		if decoded != (str(t, l["topic"]) == topic) {
			t.Fatalf("line %s: decoded %v", stdout, decoded)
		}
	}
	if !strings.Contains(stdout, `"value_decoded":{"id":42,"customer":"Ada \u001b[31m\u202e","note":"door"}`) {
		t.Fatalf("the local Avro value did not decode as expected:\n%s", stdout)
	}
}
