package config

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
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
//
// The syntax is checked whole first (TOML's errors come before kbatch's):
// go-toml decodes onto a struct as it parses, so a value that does not
// fit would hide a syntax error further down. checkKeys then checks the
// keys with exact case and the values' types, go-toml decodes the
// document onto rawFile, and the code below checks the values and turns
// them into a File.
func Parse(data []byte, path string) (*File, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(path, data, err)
	}
	keys := scanKeys(data)
	d := &decoder{path: path, lines: keys.lines, f: &File{Path: path, Clusters: map[string]Connection{}}}
	if err := d.checkKeys(keys); err != nil {
		return nil, err
	}
	var raw rawFile
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&raw); err != nil {
		return nil, syntaxError(path, data, err)
	}
	if err := d.top(&raw); err != nil {
		return nil, err
	}
	return d.f, nil
}

// rawFile is the configuration file as written: the toml tags are its
// keys, with exact case. A pointer tells a key that is set to "" from one
// that is absent, where the two differ.
type rawFile struct {
	DefaultCluster string                `toml:"default_cluster"`
	Clusters       map[string]rawCluster `toml:"clusters"`
	Watch          rawWatch              `toml:"watch"`
	Store          rawStore              `toml:"store"`
}

type rawCluster struct {
	Brokers        any                 `toml:"brokers"` // "h:1,h:2" or ["h:1", "h:2"]
	KafkaVersion   string              `toml:"kafka_version"`
	DialTimeout    *durationText       `toml:"dial_timeout"`
	MaxRecordBytes string              `toml:"max_record_bytes"`
	Rack           string              `toml:"rack"`
	TLS            rawTLS              `toml:"tls"`
	SASL           rawSASL             `toml:"sasl"`
	Registry       rawRegistry         `toml:"registry"`
	Topics         map[string]rawTopic `toml:"topics"`
}

type rawRegistry struct {
	URL                *string `toml:"url"`
	Username           string  `toml:"username"`
	PasswordEnv        string  `toml:"password_env"`
	PasswordFile       *string `toml:"password_file"`
	CAFile             *string `toml:"ca_file"`
	CertFile           *string `toml:"cert_file"`
	KeyFile            *string `toml:"key_file"`
	InsecureSkipVerify *bool   `toml:"insecure_skip_verify"`
}

type rawTopic struct {
	KeyAvro            *string `toml:"key_avro"`
	KeyProto           *string `toml:"key_proto"`
	KeyDescriptorSet   *string `toml:"key_descriptor_set"`
	KeyMessage         string  `toml:"key_message"`
	ValueAvro          *string `toml:"value_avro"`
	ValueProto         *string `toml:"value_proto"`
	ValueDescriptorSet *string `toml:"value_descriptor_set"`
	ValueMessage       string  `toml:"value_message"`
	ProtoPath          any     `toml:"proto_path"` // a file or an array of files
}

type rawTLS struct {
	Enabled            *bool   `toml:"enabled"`
	CAFile             *string `toml:"ca_file"`
	CertFile           *string `toml:"cert_file"`
	KeyFile            *string `toml:"key_file"`
	KeyPasswordEnv     string  `toml:"key_password_env"`
	KeyPasswordFile    *string `toml:"key_password_file"`
	KeyPasswordCommand string  `toml:"key_password_command"`
	ServerName         string  `toml:"server_name"`
	InsecureSkipVerify *bool   `toml:"insecure_skip_verify"`
}

type rawSASL struct {
	Mechanism           *string           `toml:"mechanism"`
	Username            string            `toml:"username"`
	Password            *string           `toml:"password"`
	PasswordEnv         string            `toml:"password_env"`
	PasswordFile        *string           `toml:"password_file"`
	PasswordCommand     string            `toml:"password_command"`
	TokenEnv            string            `toml:"token_env"`
	TokenFile           *string           `toml:"token_file"`
	TokenCommand        string            `toml:"token_command"`
	TokenEndpoint       *string           `toml:"token_endpoint"`
	ClientID            string            `toml:"client_id"`
	ClientSecretEnv     string            `toml:"client_secret_env"`
	ClientSecretFile    *string           `toml:"client_secret_file"`
	ClientSecretCommand string            `toml:"client_secret_command"`
	Scope               string            `toml:"scope"`
	Extensions          map[string]string `toml:"extensions"`
	TokenEndpointCA     *string           `toml:"token_endpoint_ca"`
	AWSRegion           string            `toml:"aws_region"`
	AWSProfile          string            `toml:"aws_profile"`
	KerberosConfig      *string           `toml:"kerberos_config"`
	KerberosServiceName string            `toml:"kerberos_service_name"`
	KerberosRealm       string            `toml:"kerberos_realm"`
	KerberosKeytab      *string           `toml:"kerberos_keytab"`
	KerberosCCache      *string           `toml:"kerberos_ccache"`
	KerberosDisableFAST *bool             `toml:"kerberos_disable_fast"`
}

type rawWatch struct {
	Interval        *durationText `toml:"interval"`
	Reset           *string       `toml:"reset"`
	MaxPerPartition *int64        `toml:"max_per_partition"`
	Samples         *int64        `toml:"samples"`
	TailRecords     *int64        `toml:"tail_records"`
	Ack             *string       `toml:"ack"`
	FailOnDataLoss  *bool         `toml:"fail_on_data_loss"`
	StrictOffsets   *bool         `toml:"strict_offsets"`
	Isolation       *string       `toml:"isolation"`
}

type rawStore struct {
	Path *string `toml:"path"`
}

// The keys of each table, for suggestions and for the example file's test.
var (
	topKeys      = tagsOf(rawFileType)
	clusterKeys  = tagsOf(reflect.TypeFor[rawCluster]())
	registryKeys = tagsOf(reflect.TypeFor[rawRegistry]())
	topicKeys    = tagsOf(reflect.TypeFor[rawTopic]())
	tlsKeys      = tagsOf(reflect.TypeFor[rawTLS]())
	saslKeys     = tagsOf(reflect.TypeFor[rawSASL]())
	watchKeys    = tagsOf(reflect.TypeFor[rawWatch]())
	storeKeys    = tagsOf(reflect.TypeFor[rawStore]())
)

// decoder checks the values of a rawFile and turns them into File; its
// errors name the line of the key at fault.
type decoder struct {
	path  string
	lines map[string]int
	f     *File
}

func (d *decoder) errAt(path []string, format string, args ...any) *Error {
	return &Error{Path: d.path, Line: lineAt(d.lines, path), Msg: fmt.Sprintf(format, args...)}
}

// has reports whether the document holds path (a table that is written,
// even empty).
func (d *decoder) has(path []string) bool {
	_, ok := d.lines[joinPath(path)]
	return ok
}

// at is path with key appended.
func at(path []string, key string) []string {
	return append(append([]string(nil), path...), key)
}

// inFileOrder returns m's keys in the order they appear in the file.
func inFileOrder[V any](d *decoder, m map[string]V, prefix []string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	line := func(k string) int {
		if l := lineAt(d.lines, at(prefix, k)); l > 0 {
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

func (d *decoder) top(raw *rawFile) error {
	if err := d.watch(&raw.Watch, []string{"watch"}); err != nil {
		return err
	}
	store, err := d.file(raw.Store.Path, []string{"store", "path"})
	if err != nil {
		return err
	}
	d.f.Store.Path = store
	d.f.DefaultCluster = raw.DefaultCluster
	for _, name := range inFileOrder(d, raw.Clusters, []string{"clusters"}) {
		path := []string{"clusters", name}
		if strings.TrimSpace(name) == "" {
			return d.errAt(path, "a cluster needs a name: [clusters.NAME]")
		}
		c, err := d.cluster(name, raw.Clusters[name], path)
		if err != nil {
			return err
		}
		d.f.Clusters[name] = c
	}
	if n := d.f.DefaultCluster; n != "" {
		if _, ok := d.f.Clusters[n]; !ok {
			return d.errAt([]string{"default_cluster"}, "default_cluster %q is not defined: add [clusters.%s]%s", n, n, d.clusterList())
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

func (d *decoder) cluster(name string, r rawCluster, path []string) (Connection, error) {
	c := Connection{Name: name, KafkaVersion: r.KafkaVersion, Rack: r.Rack, MaxRecordBytes: r.MaxRecordBytes}
	var err error
	if r.Brokers != nil {
		if c.Brokers, err = d.brokers(r.Brokers, at(path, "brokers")); err != nil {
			return c, err
		}
	}
	if c.DialTimeout, err = d.duration(r.DialTimeout, at(path, "dial_timeout")); err != nil {
		return c, err
	}
	if p := at(path, "tls"); d.has(p) {
		if c.TLS, err = d.tls(r.TLS, p); err != nil {
			return c, err
		}
	}
	if p := at(path, "sasl"); d.has(p) {
		if c.SASL, err = d.sasl(r.SASL, p); err != nil {
			return c, err
		}
	}
	if p := at(path, "registry"); d.has(p) {
		if c.Registry, err = d.registry(r.Registry, p); err != nil {
			return c, err
		}
	}
	if p := at(path, "topics"); d.has(p) {
		if c.Topics, err = d.topics(r.Topics, p); err != nil {
			return c, err
		}
	}
	return c, nil
}

// files runs file over each named field, in order, stopping at the first
// error.
func (d *decoder) files(path []string, fields ...fileField) error {
	for _, f := range fields {
		s, err := d.file(f.raw, at(path, f.key))
		if err != nil {
			return err
		}
		*f.dst = s
	}
	return nil
}

// fileField is a file name's key, its value as written, and where it
// goes.
type fileField struct {
	key string
	raw *string
	dst *string
}

func (d *decoder) tls(r rawTLS, path []string) (TLS, error) {
	t := TLS{Enabled: r.Enabled, ServerName: r.ServerName, InsecureSkipVerify: r.InsecureSkipVerify,
		KeyPassword: SecretSource{Env: r.KeyPasswordEnv, Command: r.KeyPasswordCommand}}
	if err := d.files(path, fileField{"ca_file", r.CAFile, &t.CAFile}, fileField{"cert_file", r.CertFile, &t.CertFile},
		fileField{"key_file", r.KeyFile, &t.KeyFile}, fileField{"key_password_file", r.KeyPasswordFile, &t.KeyPassword.File}); err != nil {
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

func (d *decoder) sasl(r rawSASL, path []string) (SASL, error) {
	s := SASL{User: r.Username, PasswordEnv: r.PasswordEnv, PasswordCommand: r.PasswordCommand,
		OAuth: OAuth{Token: SecretSource{Env: r.TokenEnv, Command: r.TokenCommand}, ClientID: r.ClientID,
			ClientSecret: SecretSource{Env: r.ClientSecretEnv, Command: r.ClientSecretCommand}, Scope: r.Scope},
		AWS:      AWS{Region: r.AWSRegion, Profile: r.AWSProfile},
		Kerberos: Kerberos{ServiceName: r.KerberosServiceName, Realm: r.KerberosRealm, DisableFAST: r.KerberosDisableFAST}}
	if r.Mechanism != nil {
		var err error
		if s.Mechanism, err = normalizeMechanism(*r.Mechanism); err != nil {
			p := at(path, "mechanism")
			return s, d.errAt(p, "%s: %v", dotted(p), err)
		}
	}
	if r.Password != nil {
		s.Password = Secret(*r.Password)
		d.f.hasSecret = true
	}
	if r.TokenEndpoint != nil {
		s.OAuth.TokenEndpoint = *r.TokenEndpoint
		if !strings.HasPrefix(s.OAuth.TokenEndpoint, "https://") && !strings.HasPrefix(s.OAuth.TokenEndpoint, "http://") {
			p := at(path, "token_endpoint")
			return s, d.errAt(p, "%s: want an https:// URL (the value is not shown: it may hold a secret)", dotted(p))
		}
	}
	if err := d.files(path, fileField{"password_file", r.PasswordFile, &s.PasswordFile}, fileField{"token_file", r.TokenFile, &s.OAuth.Token.File},
		fileField{"client_secret_file", r.ClientSecretFile, &s.OAuth.ClientSecret.File}, fileField{"token_endpoint_ca", r.TokenEndpointCA, &s.OAuth.TokenEndpointCA},
		fileField{"kerberos_config", r.KerberosConfig, &s.Kerberos.Config}, fileField{"kerberos_keytab", r.KerberosKeytab, &s.Kerberos.Keytab},
		fileField{"kerberos_ccache", r.KerberosCCache, &s.Kerberos.CCache}); err != nil {
		return s, err
	}
	if p := at(path, "extensions"); d.has(p) {
		var err error
		if s.OAuth.Extensions, err = d.extensions(r.Extensions, p); err != nil {
			return s, err
		}
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

// extensions checks the SASL extensions table (KIP-342): keys of letters
// only, values of printable ASCII; "auth" is the token itself.
func (d *decoder) extensions(m map[string]string, path []string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range inFileOrder(d, m, path) {
		p, val := at(path, k), m[k]
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

func (d *decoder) registry(raw rawRegistry, path []string) (Registry, error) {
	r := Registry{Username: raw.Username, PasswordEnv: raw.PasswordEnv, TLS: TLS{InsecureSkipVerify: raw.InsecureSkipVerify}}
	if raw.URL != nil {
		r.URL = *raw.URL
		if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
			p := at(path, "url")
			return r, d.errAt(p, "%s: want an http:// or https:// URL (the value is not shown: it may hold a password)", dotted(p))
		}
	}
	if err := d.files(path, fileField{"password_file", raw.PasswordFile, &r.PasswordFile}, fileField{"ca_file", raw.CAFile, &r.TLS.CAFile},
		fileField{"cert_file", raw.CertFile, &r.TLS.CertFile}, fileField{"key_file", raw.KeyFile, &r.TLS.KeyFile}); err != nil {
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
func (d *decoder) topics(m map[string]rawTopic, path []string) (map[string]TopicSchemas, error) {
	out := map[string]TopicSchemas{}
	for _, name := range inFileOrder(d, m, path) {
		p := at(path, name)
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
func (d *decoder) topic(r rawTopic, path []string) (TopicSchemas, error) {
	ts := TopicSchemas{Key: LocalSchema{Message: r.KeyMessage}, Value: LocalSchema{Message: r.ValueMessage}}
	if err := d.files(path, fileField{"key_avro", r.KeyAvro, &ts.Key.Avro}, fileField{"key_proto", r.KeyProto, &ts.Key.Proto},
		fileField{"key_descriptor_set", r.KeyDescriptorSet, &ts.Key.DescriptorSet}, fileField{"value_avro", r.ValueAvro, &ts.Value.Avro},
		fileField{"value_proto", r.ValueProto, &ts.Value.Proto}, fileField{"value_descriptor_set", r.ValueDescriptorSet, &ts.Value.DescriptorSet}); err != nil {
		return ts, err
	}
	if r.ProtoPath != nil {
		var err error
		if ts.ProtoPaths, err = d.fileList(r.ProtoPath, at(path, "proto_path")); err != nil {
			return ts, err
		}
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

// fileList reads a file name or an array of them, each as file does.
func (d *decoder) fileList(v any, path []string) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var out []string
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, d.errAt(path, "%s must be a string, not %s", dotted(path), tomlType(e))
		}
		f, err := d.file(&s, path)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (d *decoder) watch(r *rawWatch, path []string) error {
	w := &d.f.Watch
	var err error
	if w.Interval, err = d.duration(r.Interval, at(path, "interval")); err != nil {
		return err
	}
	for _, e := range []struct {
		key  string
		raw  *string
		dst  *string
		want []string
	}{
		{"reset", r.Reset, &w.Reset, []string{"earliest", "latest"}},
		{"ack", r.Ack, &w.Ack, []string{"auto", "manual"}},
		{"isolation", r.Isolation, &w.Isolation, []string{"committed", "uncommitted"}},
	} {
		if e.raw == nil {
			continue
		}
		if *e.raw != e.want[0] && *e.raw != e.want[1] {
			p := at(path, e.key)
			return d.errAt(p, "%s = %q: want %q or %q", dotted(p), *e.raw, e.want[0], e.want[1])
		}
		*e.dst = *e.raw
	}
	for _, e := range []struct {
		key         string
		raw         *int64
		least, most int64
		dst         func(n int)
	}{
		{"max_per_partition", r.MaxPerPartition, 1, 1<<31 - 1, func(n int) { w.MaxPerPartition = n }},
		{"samples", r.Samples, 0, maxSamples, func(n int) { w.Samples = &n }},
		{"tail_records", r.TailRecords, 0, maxTailRecords, func(n int) { w.TailRecords = &n }},
	} {
		if e.raw == nil {
			continue
		}
		p := at(path, e.key)
		switch n := *e.raw; {
		case n < e.least || n > 1<<31-1:
			return d.errAt(p, "%s = %d: must be at least %d", dotted(p), n, e.least)
		case n > e.most:
			return d.errAt(p, "%s = %d: must be at most %d", dotted(p), n, e.most)
		}
		e.dst(int(*e.raw))
	}
	w.FailOnDataLoss, w.StrictOffsets = r.FailOnDataLoss, r.StrictOffsets
	return nil
}

// Value readers. Messages name the key; only non-secret values are quoted.

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

func (d *decoder) duration(v *durationText, path []string) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	dur, err := time.ParseDuration(string(*v))
	if err != nil || dur <= 0 {
		return 0, d.errAt(path, "%s = %q: want a positive duration like \"500ms\" or \"2s\"", dotted(path), string(*v))
	}
	return dur, nil
}

// file reads a file name (none when v is nil); a relative one is taken
// relative to the config file's folder.
func (d *decoder) file(v *string, path []string) (string, error) {
	if v == nil {
		return "", nil
	}
	s := *v
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
