package cli

import (
	"crypto/tls"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/kbatch-dev/kbatch/config"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
	"github.com/kbatch-dev/kbatch/tui"
)

// decodeFlags are --decode and the schema registry flags of watch and
// replay. There is deliberately no password or token flag: command lines
// show up in ps and shell history.
type decodeFlags struct {
	decode               bool
	registry             string
	registryUser         string
	registryPasswordEnv  string
	registryPasswordFile string
	registryTLS          registryTLSFlags
	key, value           localSchemaFlags
	protoPaths           []string
	// forWhere is set when --where needs the decoded records: the
	// registry and schema flags then apply without --decode.
	forWhere bool
}

// registryTLSFlags are the --registry-* TLS flags of an https registry.
type registryTLSFlags struct {
	caFile, certFile, keyFile string
	insecureSkipVerify        bool
	// insecureSet is whether --registry-insecure-skip-verify was given
	// (=false too), so that it beats the variable and the profile.
	insecureSet func() bool
}

// localSchemaFlags are --key-* or --value-*: a schema file for topics
// without a registry.
type localSchemaFlags struct {
	avro, proto, descriptorSet, message string
}

func addDecodeFlags(f *pflag.FlagSet, d *decodeFlags) {
	f.BoolVar(&d.decode, "decode", false, "add the decoded keys and values (Avro, Protobuf, JSON Schema through --registry) to the record lines of --sink/--out")
	f.StringVar(&d.registry, "registry", "", "schema registry URL, e.g. http://host:8081 (env KBATCH_REGISTRY): the screen decodes with it, --decode adds the decoded records to the lines")
	f.StringVar(&d.registryUser, "registry-user", "", "schema registry basic-auth user (env KBATCH_REGISTRY_USER)")
	f.StringVar(&d.registryPasswordEnv, "registry-password-env", "", "read the registry password from environment variable VAR (default KBATCH_REGISTRY_PASSWORD)")
	f.StringVar(&d.registryPasswordFile, "registry-password-file", "", "read the registry password from the first line of FILE")
	f.StringVar(&d.registryTLS.caFile, "registry-ca-file", "", "PEM file of the CAs an https registry's certificate is checked against (env KBATCH_REGISTRY_CA_FILE)")
	f.StringVar(&d.registryTLS.certFile, "registry-cert-file", "", "PEM client certificate for an https registry (env KBATCH_REGISTRY_CERT_FILE)")
	f.StringVar(&d.registryTLS.keyFile, "registry-key-file", "", "PEM key of --registry-cert-file (env KBATCH_REGISTRY_KEY_FILE)")
	f.BoolVar(&d.registryTLS.insecureSkipVerify, "registry-insecure-skip-verify", false, "do not check an https registry's certificate (unsafe; kbatch warns; env KBATCH_REGISTRY_INSECURE_SKIP_VERIFY=true)")
	d.registryTLS.insecureSet = func() bool { return f.Changed("registry-insecure-skip-verify") }
	for _, l := range []struct {
		name string
		fl   *localSchemaFlags
	}{{"key", &d.key}, {"value", &d.value}} {
		f.StringVar(&l.fl.avro, l.name+"-avro", "", "read the "+l.name+"s with the Avro schema FILE.avsc (no registry needed)")
		f.StringVar(&l.fl.proto, l.name+"-proto", "", "read the "+l.name+"s with the Protobuf message --"+l.name+"-message of FILE.proto")
		f.StringVar(&l.fl.descriptorSet, l.name+"-descriptor-set", "", "read the "+l.name+"s with the message --"+l.name+"-message of the FileDescriptorSet FILE")
		f.StringVar(&l.fl.message, l.name+"-message", "", "the full Protobuf message name of the "+l.name+"s, e.g. shop.v1.Order")
	}
	f.StringArrayVar(&d.protoPaths, "proto-path", nil, "folder where --key-proto/--value-proto and their imports are found (repeatable)")
}

// registryOptions resolves the registry settings: flags, then KBATCH_*
// variables, then the cluster profile's [clusters.NAME.registry]. The
// password and bearer token never come from a flag.
func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func (g *globalOptions) registryOptions(d *decodeFlags) (schema.Options, error) {
	var opts schema.Options
	var profile config.Registry
	if conn, err := g.connection(); err == nil {
		profile = conn.Registry
	}
	opts.RegistryURL = firstOf(d.registry, g.env("KBATCH_REGISTRY"), profile.URL)
	opts.Username = firstOf(d.registryUser, g.env("KBATCH_REGISTRY_USER"), profile.Username)
	if d.registryPasswordEnv == "" && d.registryPasswordFile == "" && g.env("KBATCH_REGISTRY_PASSWORD") == "" {
		d.registryPasswordEnv, d.registryPasswordFile = profile.PasswordEnv, profile.PasswordFile
	}
	if d.registryPasswordEnv != "" && d.registryPasswordFile != "" {
		return opts, usagef("--registry-password-env and --registry-password-file exclude each other: give one")
	}
	var pw config.Secret
	switch {
	case d.registryPasswordFile != "":
		var warnings []string
		var err error
		pw, warnings, err = config.ReadSecretFile(d.registryPasswordFile, "registry password")
		for _, w := range warnings {
			g.warn(w)
		}
		if err != nil {
			return opts, usageError{err}
		}
	case d.registryPasswordEnv != "":
		if pw = config.Secret(g.env(d.registryPasswordEnv)); pw == "" {
			return opts, usagef("the registry password variable (--registry-password-env, password_env) is not set or empty")
		}
	default:
		pw = config.Secret(g.env("KBATCH_REGISTRY_PASSWORD"))
	}
	if opts.Username == "" && pw != "" {
		return opts, usagef("a registry password was given without a user: pass --registry-user or set KBATCH_REGISTRY_USER")
	}
	if opts.Username != "" && pw == "" {
		return opts, usagef("registry user %s needs a password: set KBATCH_REGISTRY_PASSWORD, or pass --registry-password-env VAR or --registry-password-file FILE", offsets.QuoteName(opts.Username))
	}
	opts.Password = string(pw)
	opts.BearerToken = g.env("KBATCH_REGISTRY_TOKEN")
	tlsConf, err := g.registryTLS(d, profile, opts.RegistryURL)
	if err != nil {
		return opts, err
	}
	opts.TLS = tlsConf
	if opts.RegistryURL != "" {
		if path, err := g.storePath(); err == nil {
			opts.CacheDir = filepath.Join(filepath.Dir(path), "schemas")
		}
	}
	return opts, nil
}

// registryTLS resolves the TLS settings of an https registry: flags, then
// KBATCH_REGISTRY_* variables, then the profile's; nil for Go's defaults.
// Turning certificate checks off warns on stderr.
func (g *globalOptions) registryTLS(d *decodeFlags, profile config.Registry, url string) (*tls.Config, error) {
	t := config.TLS{
		CAFile:   firstOf(d.registryTLS.caFile, g.env("KBATCH_REGISTRY_CA_FILE"), profile.TLS.CAFile),
		CertFile: firstOf(d.registryTLS.certFile, g.env("KBATCH_REGISTRY_CERT_FILE"), profile.TLS.CertFile),
		KeyFile:  firstOf(d.registryTLS.keyFile, g.env("KBATCH_REGISTRY_KEY_FILE"), profile.TLS.KeyFile),
	}
	switch v := g.env("KBATCH_REGISTRY_INSECURE_SKIP_VERIFY"); {
	case d.registryTLS.insecureSet != nil && d.registryTLS.insecureSet():
		t.InsecureSkipVerify = &d.registryTLS.insecureSkipVerify
	case v != "":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, usagef("KBATCH_REGISTRY_INSECURE_SKIP_VERIFY=%s: want true or false", offsets.QuoteName(v))
		}
		t.InsecureSkipVerify = &b
	default:
		t.InsecureSkipVerify = profile.TLS.InsecureSkipVerify
	}
	if !t.On() || url == "" {
		return nil, nil
	}
	if !strings.HasPrefix(url, "https://") {
		return nil, usagef("the registry TLS settings (--registry-ca-file, --registry-cert-file, --registry-key-file, --registry-insecure-skip-verify, their KBATCH_REGISTRY_* variables or the profile's) need an https:// registry URL")
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, usagef("a registry client certificate needs its key: give both --registry-cert-file and --registry-key-file (or cert_file and key_file)")
	}
	c, err := t.TLSConfig()
	if err != nil {
		return nil, usageError{err}
	}
	if t.Insecure() {
		g.warn("TLS certificate checks are off (insecure_skip_verify) for the schema registry: anyone on the network path can read and change its answers")
	}
	return c, nil
}

// topicLocals are the profile's [clusters.NAME.topics.TOPIC] local schemas.
func (g *globalOptions) topicLocals() []schema.Local {
	conn, err := g.connection()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(conn.Topics))
	for name := range conn.Topics {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []schema.Local
	for _, name := range names {
		ts := conn.Topics[name]
		for _, s := range []struct {
			key bool
			ls  config.LocalSchema
		}{{true, ts.Key}, {false, ts.Value}} {
			if s.ls != (config.LocalSchema{}) {
				out = append(out, schema.Local{Topic: name, Key: s.key, AvroFile: s.ls.Avro, ProtoFile: s.ls.Proto,
					ProtoPaths: ts.ProtoPaths, DescriptorSet: s.ls.DescriptorSet, Message: s.ls.Message})
			}
		}
	}
	return out
}

// decodeWarnings keeps the decoder's events (one per schema id and
// problem) until the run's other writers to stderr are done: the decoder
// meets them on the sink's goroutine, while the stream's or replay's own
// lines go to the same stderr from theirs.
type decodeWarnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *decodeWarnings) add(ev schema.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, ev.Message)
}

// flush writes the kept warnings to out, one escaped line each.
func (w *decodeWarnings) flush(out io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		fmt.Fprintln(out, "kbatch: warning: "+record.String(m))
	}
	w.msgs = nil
}

// openDecoder builds the decoder of --decode, or nil without --decode.
// warnings, when not nil, keeps each schema id's problem once, for the
// caller to print when the run is over. format is the --format of the
// record lines. notes, when not nil, is the screen's: the decoder is then
// built whenever a registry (flag, KBATCH_REGISTRY, profile) or a local
// schema is configured, --decode or not, and tells the screen of each
// fetch and problem.
func (g *globalOptions) openDecoder(d *decodeFlags, format string, warnings *decodeWarnings, notes *tui.SchemaNotes) (*schema.Decoder, error) {
	if !d.decode && !d.forWhere && notes == nil {
		if d.registry != "" || d.registryTLS.caFile != "" || d.registryTLS.certFile != "" || d.registryTLS.keyFile != "" || d.registryTLS.insecureSkipVerify {
			return nil, usagef("--registry and the --registry-* flags are for --decode: add --decode")
		}
		if d.key != (localSchemaFlags{}) || d.value != (localSchemaFlags{}) || len(d.protoPaths) > 0 {
			return nil, usagef("the --key-*/--value-* schema flags and --proto-path are for --decode: add --decode")
		}
		return nil, nil
	}
	if d.decode && format != "json" {
		return nil, usagef("--decode adds fields to kbatch's JSON lines; it does not go with --format %s", format)
	}
	opts, err := g.registryOptions(d)
	if err != nil {
		return nil, err
	}
	if opts.Local, err = d.locals(); err != nil {
		return nil, err
	}
	opts.Local = append(opts.Local, g.topicLocals()...)
	if opts.RegistryURL == "" && len(opts.Local) == 0 && !d.decode {
		return nil, nil // the screen or --where without a schema source: nothing to decode
	}
	if opts.RegistryURL == "" && len(opts.Local) == 0 {
		return nil, usagef("--decode needs a schema registry or a local schema: pass --registry URL, set KBATCH_REGISTRY, add [clusters.NAME.registry] to the profile, or pass --value-avro/--value-proto/--value-descriptor-set FILE")
	}
	if warnings != nil {
		opts.Event = warnings.add
	}
	if notes != nil {
		opts.Event, opts.Ready = notes.Event, notes.Ready
	}
	dec, err := schema.New(opts)
	if err != nil {
		return nil, usageError{err}
	}
	return dec, nil
}

// locals are the local schemas of --key-* and --value-*, for every topic.
func (d *decodeFlags) locals() ([]schema.Local, error) {
	var out []schema.Local
	for _, l := range []struct {
		name string
		key  bool
		fl   localSchemaFlags
	}{{"key", true, d.key}, {"value", false, d.value}} {
		n := 0
		for _, f := range []string{l.fl.avro, l.fl.proto, l.fl.descriptorSet} {
			if f != "" {
				n++
			}
		}
		switch {
		case n > 1:
			return nil, usagef("--%[1]s-avro, --%[1]s-proto and --%[1]s-descriptor-set exclude each other: give one", l.name)
		case n == 0 && l.fl.message != "":
			return nil, usagef("--%[1]s-message names a message of --%[1]s-proto or --%[1]s-descriptor-set: add one", l.name)
		case n == 0:
			continue
		case l.fl.avro != "" && l.fl.message != "":
			return nil, usagef("--%[1]s-message is for Protobuf; --%[1]s-avro needs none", l.name)
		case l.fl.avro == "" && l.fl.message == "":
			return nil, usagef("--%[1]s-proto and --%[1]s-descriptor-set need --%[1]s-message NAME (e.g. shop.v1.Order)", l.name)
		}
		out = append(out, schema.Local{Key: l.key, AvroFile: l.fl.avro, ProtoFile: l.fl.proto, ProtoPaths: d.protoPaths,
			DescriptorSet: l.fl.descriptorSet, Message: l.fl.message})
	}
	if len(d.protoPaths) > 0 && d.key.proto == "" && d.value.proto == "" {
		return nil, usagef("--proto-path is where --key-proto/--value-proto files are found: add one")
	}
	return out, nil
}

// decodingAppender adds the decoded key and value of each record to the
// lines of a JSON encoder (docs/json-output.md): key_decoded and
// value_decoded (the JSON itself), key_schema_id and value_schema_id,
// value_decode_error (a one-line reason) when a framed value does not
// decode, and value_schema_invalid when a JSON Schema value does not
// match its schema. Records that are not in the wire format get nothing.
type decodingAppender struct {
	inner record.Appender
	dec   *schema.Decoder
}

func (a *decodingAppender) Append(buf []byte, m *record.Record) []byte {
	return a.add(buf, len(buf), a.inner.Append(buf, m), m)
}

func (a *decodingAppender) AppendAborted(buf []byte, m *record.Record) []byte {
	return a.add(buf, len(buf), a.inner.AppendAborted(buf, m), m)
}

// add appends the decoded fields to the line that starts at start in buf
// and ends with "}\n".
func (a *decodingAppender) add(_ []byte, start int, buf []byte, m *record.Record) []byte {
	var kr, vr schema.Result
	if m.Key != nil {
		kr = a.dec.Decode(m.Topic, true, m.Key)
	}
	if m.Value != nil {
		vr = a.dec.Decode(m.Topic, false, m.Value)
	}
	if kr.Status == schema.NotFramed && vr.Status == schema.NotFramed {
		return buf
	}
	if len(buf)-start < 2 || string(buf[len(buf)-2:]) != "}\n" {
		return buf // not a line this appender knows how to extend
	}
	buf = buf[:len(buf)-2]
	buf = appendDecoded(buf, "key", kr)
	buf = appendDecoded(buf, "value", vr)
	return append(buf, "}\n"...)
}

func appendDecoded(buf []byte, name string, r schema.Result) []byte {
	if r.Status == schema.NotFramed {
		return buf
	}
	if r.SchemaID != 0 {
		buf = append(buf, `,"`...)
		buf = append(buf, name...)
		buf = append(buf, `_schema_id":`...)
		buf = strconv.AppendInt(buf, int64(r.SchemaID), 10)
	}
	switch r.Status {
	case schema.Decoded:
		buf = append(buf, `,"`...)
		buf = append(buf, name...)
		buf = append(buf, `_decoded":`...)
		// The decoded text escapes what JSON must; what a terminal must
		// not see raw (bidi overrides, zero-width and format characters
		// of a string in the record) is escaped by the one rule for JSON
		// output.
		buf = record.AppendSafeJSON(buf, r.JSON)
		if r.Reason != "" {
			buf = append(buf, `,"`...)
			buf = append(buf, name...)
			buf = append(buf, `_schema_invalid":`...)
			buf = record.AppendJSONString(buf, r.Reason)
		}
	default:
		reason := r.Reason
		if reason == "" {
			reason = "not decoded: " + r.Status.String()
		}
		buf = append(buf, `,"`...)
		buf = append(buf, name...)
		buf = append(buf, `_decode_error":`...)
		buf = record.AppendJSONString(buf, reason)
	}
	return buf
}
