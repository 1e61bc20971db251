package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Parse reads a configuration document. path names it in errors and is
// the folder relative file names in it are resolved against ("~/" is left
// for Load to expand). Every problem is an *Error with the line; Parse
// never panics, whatever data holds.
func Parse(data []byte, path string) (*File, error) {
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil, syntaxError(path, data, err)
	}
	d := &decoder{path: path, lines: keyLines(data), f: &File{Path: path, Clusters: map[string]Connection{}}}
	if err := d.top(raw); err != nil {
		return nil, err
	}
	return d.f, nil
}

// decoder maps the generic TOML tree onto File, exactly: every key must be
// known and of the right type, with exact case.
type decoder struct {
	path  string
	lines map[string]int
	f     *File
}

func (d *decoder) errAt(path []string, format string, args ...any) *Error {
	return &Error{Path: d.path, Line: lineAt(d.lines, path), Msg: fmt.Sprintf(format, args...)}
}

// keys returns m's keys in the order they appear in the file.
func (d *decoder) keys(m map[string]any, prefix []string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	line := func(k string) int {
		if l := lineAt(d.lines, append(append([]string(nil), prefix...), k)); l > 0 {
			return l
		}
		return 1 << 30
	}
	sort.Slice(ks, func(i, j int) bool {
		li, lj := line(ks[i]), line(ks[j])
		if li != lj {
			return li < lj
		}
		return ks[i] < ks[j]
	})
	return ks
}

// fields walks a table, calling set for each key; a key set does not
// handle (returns false) is reported as unknown, with a suggestion.
func (d *decoder) fields(m map[string]any, prefix []string, known []string, set func(k string, v any, path []string) (bool, error)) error {
	for _, k := range d.keys(m, prefix) {
		path := append(append([]string(nil), prefix...), k)
		ok, err := set(k, m[k], path)
		if err != nil {
			return err
		}
		if !ok {
			return d.unknown(path, known)
		}
	}
	return nil
}

func (d *decoder) unknown(path []string, known []string) *Error {
	msg := fmt.Sprintf("unknown key %q", dotted(path))
	if s := suggest(path[len(path)-1], known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else if len(known) > 0 {
		msg += " (known here: " + strings.Join(known, ", ") + ")"
	}
	return d.errAt(path, "%s", msg)
}

func dotted(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		if p == "" || strings.IndexFunc(p, func(r rune) bool { return r > 127 || !isBare(byte(r)) }) >= 0 {
			p = fmt.Sprintf("%q", p)
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// maxSamples is consumer.MaxSamples (--samples has a cap); config does not
// import the stream.
const maxSamples = 1000

// maxTailRecords is tui.MaxTailRecords (--tail-records has a cap).
const maxTailRecords = 1_000_000

var (
	topKeys      = []string{"default_cluster", "clusters", "watch", "store"}
	clusterKeys  = []string{"brokers", "kafka_version", "dial_timeout", "max_record_bytes", "rack", "tls", "sasl", "registry", "topics"}
	registryKeys = []string{"url", "username", "password_env", "password_file", "ca_file", "cert_file", "key_file", "insecure_skip_verify"}
	topicKeys    = []string{"key_avro", "key_proto", "key_descriptor_set", "key_message", "value_avro", "value_proto", "value_descriptor_set", "value_message", "proto_path"}
	tlsKeys      = []string{"enabled", "ca_file", "cert_file", "key_file", "key_password_env", "key_password_file", "key_password_command", "server_name", "insecure_skip_verify"}
	saslKeys     = []string{"mechanism", "username", "password", "password_env", "password_file", "password_command",
		"token_env", "token_file", "token_command", "token_endpoint", "client_id", "client_secret_env", "client_secret_file", "client_secret_command", "scope", "extensions", "token_endpoint_ca",
		"aws_region", "aws_profile",
		"kerberos_config", "kerberos_service_name", "kerberos_realm", "kerberos_keytab", "kerberos_ccache", "kerberos_disable_fast"}
	watchKeys = []string{"interval", "reset", "max_per_partition", "samples", "tail_records", "ack", "fail_on_data_loss", "strict_offsets", "isolation"}
	storeKeys = []string{"path"}
)

func (d *decoder) top(raw map[string]any) error {
	var clusters map[string]any
	var defaultPath []string
	err := d.fields(raw, nil, topKeys, func(k string, v any, path []string) (bool, error) {
		var err error
		switch k {
		case "default_cluster":
			d.f.DefaultCluster, err = d.str(v, path)
			defaultPath = path
		case "clusters":
			clusters, err = d.table(v, path)
		case "watch":
			err = d.watch(v, path)
		case "store":
			err = d.store(v, path)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return err
	}
	for _, name := range d.keys(clusters, []string{"clusters"}) {
		path := []string{"clusters", name}
		if strings.TrimSpace(name) == "" {
			return d.errAt(path, "a cluster needs a name: [clusters.NAME]")
		}
		c, err := d.cluster(name, clusters[name], path)
		if err != nil {
			return err
		}
		d.f.Clusters[name] = c
	}
	if n := d.f.DefaultCluster; n != "" {
		if _, ok := d.f.Clusters[n]; !ok {
			return d.errAt(defaultPath, "default_cluster %q is not defined: add [clusters.%s]%s", n, n, d.clusterList())
		}
	}
	return nil
}

func (d *decoder) clusterList() string {
	if len(d.f.Clusters) == 0 {
		return ""
	}
	names := make([]string, 0, len(d.f.Clusters))
	for n := range d.f.Clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	return " (defined: " + strings.Join(names, ", ") + ")"
}

func (d *decoder) cluster(name string, v any, path []string) (Connection, error) {
	c := Connection{Name: name}
	m, err := d.table(v, path)
	if err != nil {
		return c, err
	}
	err = d.fields(m, path, clusterKeys, func(k string, v any, p []string) (bool, error) {
		var err error
		switch k {
		case "brokers":
			c.Brokers, err = d.brokers(v, p)
		case "kafka_version":
			c.KafkaVersion, err = d.str(v, p)
		case "dial_timeout":
			c.DialTimeout, err = d.duration(v, p)
		case "rack":
			c.Rack, err = d.str(v, p)
		case "max_record_bytes":
			c.MaxRecordBytes, err = d.str(v, p)
		case "tls":
			c.TLS, err = d.tls(v, p)
		case "sasl":
			c.SASL, err = d.sasl(v, p)
		case "registry":
			c.Registry, err = d.registry(v, p)
		case "topics":
			c.Topics, err = d.topics(v, p)
		default:
			return false, nil
		}
		return true, err
	})
	return c, err
}

func (d *decoder) tls(v any, path []string) (TLS, error) {
	var t TLS
	m, err := d.table(v, path)
	if err != nil {
		return t, err
	}
	err = d.fields(m, path, tlsKeys, func(k string, v any, p []string) (bool, error) {
		var err error
		switch k {
		case "enabled":
			t.Enabled, err = d.boolp(v, p)
		case "ca_file":
			t.CAFile, err = d.file(v, p)
		case "cert_file":
			t.CertFile, err = d.file(v, p)
		case "key_file":
			t.KeyFile, err = d.file(v, p)
		case "key_password_env":
			t.KeyPassword.Env, err = d.str(v, p)
		case "key_password_file":
			t.KeyPassword.File, err = d.file(v, p)
		case "key_password_command":
			t.KeyPassword.Command, err = d.str(v, p)
		case "server_name":
			t.ServerName, err = d.str(v, p)
		case "insecure_skip_verify":
			t.InsecureSkipVerify, err = d.boolp(v, p)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return t, err
	}
	if t.Enabled == nil {
		on := true // a [tls] table turns TLS on unless it says enabled = false
		t.Enabled = &on
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return t, d.errAt(path, "%s: cert_file and key_file go together (a client certificate needs its key)", dotted(path))
	}
	if t.KeyPassword.count() > 1 {
		return t, d.errAt(path, "%s: give only one of key_password_env, key_password_file and key_password_command", dotted(path))
	}
	if t.KeyPassword.Set() && t.KeyFile == "" {
		return t, d.errAt(path, "%s: a key passphrase (key_password_*) needs key_file", dotted(path))
	}
	return t, nil
}

func (d *decoder) sasl(v any, path []string) (SASL, error) {
	var s SASL
	m, err := d.table(v, path)
	if err != nil {
		return s, err
	}
	err = d.fields(m, path, saslKeys, func(k string, v any, p []string) (bool, error) {
		var err error
		switch k {
		case "mechanism":
			if s.Mechanism, err = d.str(v, p); err == nil {
				s.Mechanism, err = normalizeMechanism(s.Mechanism)
				if err != nil {
					err = d.errAt(p, "%s: %v", dotted(p), err)
				}
			}
		case "username":
			s.User, err = d.str(v, p)
		case "password":
			str, ok := v.(string)
			if !ok {
				return true, d.errAt(p, "%s must be a string (the value is not shown)", dotted(p))
			}
			s.Password = Secret(str)
			d.f.hasSecret = true
		case "password_env":
			s.PasswordEnv, err = d.str(v, p)
		case "password_file":
			s.PasswordFile, err = d.file(v, p)
		case "password_command":
			s.PasswordCommand, err = d.str(v, p)
		case "token_env":
			s.OAuth.Token.Env, err = d.str(v, p)
		case "token_file":
			s.OAuth.Token.File, err = d.file(v, p)
		case "token_command":
			s.OAuth.Token.Command, err = d.str(v, p)
		case "token_endpoint":
			if s.OAuth.TokenEndpoint, err = d.str(v, p); err == nil && !strings.HasPrefix(s.OAuth.TokenEndpoint, "https://") && !strings.HasPrefix(s.OAuth.TokenEndpoint, "http://") {
				err = d.errAt(p, "%s: want an https:// URL (the value is not shown: it may hold a secret)", dotted(p))
			}
		case "client_id":
			s.OAuth.ClientID, err = d.str(v, p)
		case "client_secret_env":
			s.OAuth.ClientSecret.Env, err = d.str(v, p)
		case "client_secret_file":
			s.OAuth.ClientSecret.File, err = d.file(v, p)
		case "client_secret_command":
			s.OAuth.ClientSecret.Command, err = d.str(v, p)
		case "scope":
			s.OAuth.Scope, err = d.str(v, p)
		case "token_endpoint_ca":
			s.OAuth.TokenEndpointCA, err = d.file(v, p)
		case "extensions":
			s.OAuth.Extensions, err = d.extensions(v, p)
		case "aws_region":
			s.AWS.Region, err = d.str(v, p)
		case "aws_profile":
			s.AWS.Profile, err = d.str(v, p)
		case "kerberos_config":
			s.Kerberos.Config, err = d.file(v, p)
		case "kerberos_service_name":
			s.Kerberos.ServiceName, err = d.str(v, p)
		case "kerberos_realm":
			s.Kerberos.Realm, err = d.str(v, p)
		case "kerberos_keytab":
			s.Kerberos.Keytab, err = d.file(v, p)
		case "kerberos_ccache":
			s.Kerberos.CCache, err = d.file(v, p)
		case "kerberos_disable_fast":
			s.Kerberos.DisableFAST, err = d.boolp(v, p)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return s, err
	}
	n := 0
	for _, set := range []bool{s.Password != "", s.PasswordEnv != "", s.PasswordFile != "", s.PasswordCommand != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return s, d.errAt(path, "%s: give only one of password, password_env, password_file and password_command", dotted(path))
	}
	if s.Mechanism == "" && (s.User != "" || n > 0 || !s.OAuth.zero() || s.AWS != AWS{} || !s.Kerberos.zero()) {
		return s, d.errAt(path, "%s: mechanism is missing (one of %s)", dotted(path), strings.Join(Mechanisms, ", "))
	}
	if err := s.checkSettings(); err != nil {
		return s, d.errAt(path, "%s: %v", dotted(path), err)
	}
	// The user name may come from --sasl-user; a token source only from here.
	if err := s.checkMechanism(); err != nil && s.Mechanism == "OAUTHBEARER" {
		return s, d.errAt(path, "%s: %v", dotted(path), err)
	}
	return s, nil
}

// extensions reads the SASL extensions table (KIP-342): keys of letters
// only, values of printable ASCII; "auth" is the token itself.
func (d *decoder) extensions(v any, path []string) (map[string]string, error) {
	m, err := d.table(v, path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range d.keys(m, path) {
		p := append(append([]string(nil), path...), k)
		val, err := d.str(m[k], p)
		if err != nil {
			return nil, err
		}
		if k == "" || strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" || k == "auth" {
			return nil, d.errAt(p, "%s: an extension name is letters only, and not \"auth\"", dotted(p))
		}
		for _, c := range []byte(val) {
			if c < 0x21 && c != ' ' && c != '\t' || c > 0x7e {
				return nil, d.errAt(p, "%s: an extension value is printable ASCII (the value is not shown)", dotted(p))
			}
		}
		out[k] = val
	}
	return out, nil
}

func (d *decoder) registry(v any, path []string) (Registry, error) {
	var r Registry
	m, err := d.table(v, path)
	if err != nil {
		return r, err
	}
	err = d.fields(m, path, registryKeys, func(k string, v any, p []string) (bool, error) {
		var err error
		switch k {
		case "url":
			if r.URL, err = d.str(v, p); err == nil && !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
				err = d.errAt(p, "%s: want an http:// or https:// URL (the value is not shown: it may hold a password)", dotted(p))
			}
		case "username":
			r.Username, err = d.str(v, p)
		case "password_env":
			r.PasswordEnv, err = d.str(v, p)
		case "password_file":
			r.PasswordFile, err = d.file(v, p)
		case "ca_file":
			r.TLS.CAFile, err = d.file(v, p)
		case "cert_file":
			r.TLS.CertFile, err = d.file(v, p)
		case "key_file":
			r.TLS.KeyFile, err = d.file(v, p)
		case "insecure_skip_verify":
			r.TLS.InsecureSkipVerify, err = d.boolp(v, p)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return r, err
	}
	if (r.TLS.CertFile == "") != (r.TLS.KeyFile == "") {
		return r, d.errAt(path, "%s: cert_file and key_file go together (a client certificate needs its key)", dotted(path))
	}
	if r.PasswordEnv != "" && r.PasswordFile != "" {
		return r, d.errAt(path, "%s: give only one of password_env and password_file", dotted(path))
	}
	if r.URL == "" {
		return r, d.errAt(path, "%s: url is missing", dotted(path))
	}
	return r, nil
}

// topics reads [clusters.NAME.topics]: a table per topic name.
func (d *decoder) topics(v any, path []string) (map[string]TopicSchemas, error) {
	m, err := d.table(v, path)
	if err != nil {
		return nil, err
	}
	out := map[string]TopicSchemas{}
	for _, name := range d.keys(m, path) {
		p := append(append([]string(nil), path...), name)
		if name == "" {
			return nil, d.errAt(p, "%s: a topic name is empty", dotted(path))
		}
		ts, err := d.topic(m[name], p)
		if err != nil {
			return nil, err
		}
		out[name] = ts
	}
	return out, nil
}

// topic reads one [clusters.NAME.topics.TOPIC] table.
func (d *decoder) topic(v any, path []string) (TopicSchemas, error) {
	var ts TopicSchemas
	m, err := d.table(v, path)
	if err != nil {
		return ts, err
	}
	err = d.fields(m, path, topicKeys, func(k string, v any, p []string) (bool, error) {
		side, field, _ := strings.Cut(k, "_")
		ls := &ts.Value
		if side == "key" {
			ls = &ts.Key
		}
		var err error
		switch {
		case k == "proto_path":
			ts.ProtoPaths, err = d.files(v, p)
		case field == "avro":
			ls.Avro, err = d.file(v, p)
		case field == "proto":
			ls.Proto, err = d.file(v, p)
		case field == "descriptor_set":
			ls.DescriptorSet, err = d.file(v, p)
		case field == "message":
			ls.Message, err = d.str(v, p)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return ts, err
	}
	for _, s := range []struct {
		side string
		ls   LocalSchema
	}{{"key", ts.Key}, {"value", ts.Value}} {
		n := 0
		for _, f := range []string{s.ls.Avro, s.ls.Proto, s.ls.DescriptorSet} {
			if f != "" {
				n++
			}
		}
		switch {
		case n > 1:
			return ts, d.errAt(path, "%[1]s: give one of %[2]s_avro, %[2]s_proto and %[2]s_descriptor_set", dotted(path), s.side)
		case n == 0 && s.ls.Message != "":
			return ts, d.errAt(path, "%[1]s: %[2]s_message names a message of %[2]s_proto or %[2]s_descriptor_set: add one", dotted(path), s.side)
		case s.ls.Avro != "" && s.ls.Message != "":
			return ts, d.errAt(path, "%[1]s: %[2]s_message is for Protobuf; %[2]s_avro needs none", dotted(path), s.side)
		case n == 1 && s.ls.Avro == "" && s.ls.Message == "":
			return ts, d.errAt(path, "%[1]s: %[2]s_proto and %[2]s_descriptor_set need %[2]s_message (e.g. \"shop.v1.Order\")", dotted(path), s.side)
		}
	}
	if ts.Key == (LocalSchema{}) && ts.Value == (LocalSchema{}) {
		return ts, d.errAt(path, "%s: no schema: set value_avro, value_proto or value_descriptor_set (or the key_ ones)", dotted(path))
	}
	return ts, nil
}

// files reads a path or an array of paths, each as file does.
func (d *decoder) files(v any, path []string) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var out []string
	for _, e := range list {
		f, err := d.file(e, path)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (d *decoder) watch(v any, path []string) error {
	m, err := d.table(v, path)
	if err != nil {
		return err
	}
	w := &d.f.Watch
	return d.fields(m, path, watchKeys, func(k string, v any, p []string) (bool, error) {
		var err error
		switch k {
		case "interval":
			w.Interval, err = d.duration(v, p)
		case "reset":
			if w.Reset, err = d.str(v, p); err == nil && w.Reset != "earliest" && w.Reset != "latest" {
				err = d.errAt(p, "%s = %q: want \"earliest\" or \"latest\"", dotted(p), w.Reset)
			}
		case "max_per_partition":
			var n int
			if n, err = d.integer(v, p, 1); err == nil {
				w.MaxPerPartition = n
			}
		case "samples":
			var n int
			if n, err = d.integer(v, p, 0); err == nil && n > maxSamples {
				err = d.errAt(p, "%s = %d: must be at most %d", dotted(p), n, maxSamples)
			} else if err == nil {
				w.Samples = &n
			}
		case "tail_records":
			var n int
			if n, err = d.integer(v, p, 0); err == nil && n > maxTailRecords {
				err = d.errAt(p, "%s = %d: must be at most %d", dotted(p), n, maxTailRecords)
			} else if err == nil {
				w.TailRecords = &n
			}
		case "ack":
			if w.Ack, err = d.str(v, p); err == nil && w.Ack != "auto" && w.Ack != "manual" {
				err = d.errAt(p, "%s = %q: want \"auto\" or \"manual\"", dotted(p), w.Ack)
			}
		case "fail_on_data_loss":
			w.FailOnDataLoss, err = d.boolp(v, p)
		case "strict_offsets":
			w.StrictOffsets, err = d.boolp(v, p)
		case "isolation":
			if w.Isolation, err = d.str(v, p); err == nil && w.Isolation != "committed" && w.Isolation != "uncommitted" {
				err = d.errAt(p, "%s = %q: want \"committed\" or \"uncommitted\"", dotted(p), w.Isolation)
			}
		default:
			return false, nil
		}
		return true, err
	})
}

func (d *decoder) store(v any, path []string) error {
	m, err := d.table(v, path)
	if err != nil {
		return err
	}
	return d.fields(m, path, storeKeys, func(k string, v any, p []string) (bool, error) {
		if k != "path" {
			return false, nil
		}
		var err error
		d.f.Store.Path, err = d.file(v, p)
		return true, err
	})
}

// Value readers. Messages name the key and the expected type; only
// non-secret values are quoted.

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "a date"
	case []any:
		if arrayOfTables(v) {
			return "an array of tables"
		}
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

// arrayOfTables reports whether v is a non-empty array whose elements are
// all tables ([[name]] sections, or inline tables).
func arrayOfTables(v any) bool {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return false
	}
	for _, e := range a {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func (d *decoder) table(v any, path []string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, d.errAt(path, "%s must be a table ([%s]), not %s", dotted(path), dotted(path), tomlType(v))
	}
	return m, nil
}

func (d *decoder) str(v any, path []string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", d.errAt(path, "%s must be a string, not %s", dotted(path), tomlType(v))
	}
	return s, nil
}

func (d *decoder) boolp(v any, path []string) (*bool, error) {
	b, ok := v.(bool)
	if !ok {
		return nil, d.errAt(path, "%s must be true or false, not %s", dotted(path), tomlType(v))
	}
	return &b, nil
}

func (d *decoder) integer(v any, path []string, least int64) (int, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, d.errAt(path, "%s must be an integer, not %s", dotted(path), tomlType(v))
	}
	if n < least || n > 1<<31-1 {
		return 0, d.errAt(path, "%s = %d: must be at least %d", dotted(path), n, least)
	}
	return int(n), nil
}

func (d *decoder) duration(v any, path []string) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, d.errAt(path, "%s must be a duration string like \"500ms\" or \"2s\", not %s", dotted(path), tomlType(v))
	}
	dur, err := time.ParseDuration(s)
	if err != nil || dur <= 0 {
		return 0, d.errAt(path, "%s = %q: want a positive duration like \"500ms\" or \"2s\"", dotted(path), s)
	}
	return dur, nil
}

// file reads a file name; a relative one is taken relative to the config
// file's folder.
func (d *decoder) file(v any, path []string) (string, error) {
	s, err := d.str(v, path)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", d.errAt(path, "%s is empty", dotted(path))
	}
	if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/") && d.path != "" {
		s = filepath.Join(filepath.Dir(d.path), s)
	}
	return s, nil
}

func (d *decoder) brokers(v any, path []string) ([]string, error) {
	var list []string
	switch v := v.(type) {
	case string:
		list = strings.Split(v, ",")
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, d.errAt(path, "%s must be an array of \"host:port\" strings, but holds %s", dotted(path), tomlType(e))
			}
			list = append(list, s)
		}
	default:
		return nil, d.errAt(path, "%s must be an array of \"host:port\" strings, not %s", dotted(path), tomlType(v))
	}
	out, err := ParseBrokers(list)
	if err != nil {
		return nil, d.errAt(path, "%s: %v", dotted(path), err)
	}
	return out, nil
}

// ParseBrokers trims and checks "host:port" addresses; empty entries are
// dropped, and no address at all is an error.
func ParseBrokers(list []string) ([]string, error) {
	var out []string
	for _, b := range list {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		i := strings.LastIndexByte(b, ':')
		if i <= 0 || i == len(b)-1 || strings.Trim(b[i+1:], "0123456789") != "" || len(b[i+1:]) > 5 {
			return nil, fmt.Errorf("invalid broker address %q: want host:port", b)
		}
		if port, _ := strconv.Atoi(b[i+1:]); port < 1 || port > 65535 {
			return nil, fmt.Errorf("invalid broker address %q: the port must be 1 to 65535", b)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no broker address given")
	}
	return out, nil
}

func normalizeMechanism(m string) (string, error) {
	up := strings.ToUpper(strings.TrimSpace(m))
	for _, k := range Mechanisms {
		if up == k {
			return k, nil
		}
	}
	// The value is not echoed: it may be a password given to the wrong flag.
	return "", fmt.Errorf("unknown SASL mechanism (the value is not shown): want one of %s", strings.Join(Mechanisms, ", "))
}

// suggest returns the known key closest to k when it looks like a typo.
func suggest(k string, known []string) string {
	best, bestD := "", 3
	for _, c := range known {
		if dd := editDistance(strings.ToLower(k), c); dd < bestD {
			best, bestD = c, dd
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 10
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
