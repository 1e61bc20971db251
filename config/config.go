package config

import (
	"fmt"
	"strconv"
	"time"
)

// File is a parsed configuration file. The zero value (no file) is valid
// and configures nothing.
type File struct {
	// Path is the file this was read from; "" when there was none.
	Path string
	// DefaultCluster names the profile used when neither --cluster,
	// KBATCH_CLUSTER, -b nor KBATCH_BROKERS is given.
	DefaultCluster string
	// Clusters are the [clusters.NAME] profiles, with Name set.
	Clusters map[string]Connection
	// Watch holds the [watch] defaults.
	Watch Watch
	// Store holds the [store] defaults.
	Store Store
	// Warnings are things the user should hear about (a secret in a file
	// others can read); each is one line without a "warning:" prefix.
	Warnings []string

	// hasSecret is set when some profile holds an inline sasl.password.
	hasSecret bool
	// missing is the default path that was looked at and not found.
	missing string
}

// Connection is how to reach one cluster. It is used both for a
// [clusters.NAME] profile and for the layers (flags, environment) that
// Merge combines: a zero field means "not set in this layer".
type Connection struct {
	// Name is the profile's name ("" for the flag and environment layers).
	Name         string
	Brokers      []string
	KafkaVersion string
	// Rack is the client's rack (KIP-392): brokers with a replica selector
	// may answer that a replica in the same rack serves its fetches.
	Rack        string
	DialTimeout time.Duration
	// MaxRecordBytes is the profile's max_record_bytes as written ("64MiB"),
	// "" for none; --max-record-bytes wins over it, and the command line
	// checks it (kafka.ParseBytes).
	MaxRecordBytes string
	TLS            TLS
	SASL           SASL
	// Registry is the profile's schema registry: the screen and --decode
	// decode with it.
	Registry Registry
	// Topics are the [clusters.NAME.topics.TOPIC] tables: local schemas
	// for topics written without a registry, by topic name.
	Topics map[string]TopicSchemas
}

// Registry is a [clusters.NAME.registry] table: the schema registry of a
// cluster. The password comes from the variable PasswordEnv names or the
// first line of PasswordFile; there is no inline password.
type Registry struct {
	URL          string
	Username     string
	PasswordEnv  string
	PasswordFile string
	// TLS holds ca_file, cert_file, key_file and insecure_skip_verify of
	// an https registry (server_name and enabled do not apply: the URL
	// says both).
	TLS TLS
}

// TopicSchemas is a [clusters.NAME.topics.TOPIC] table: the local schema
// files of one topic's keys and values, and the folders .proto imports
// are found in.
type TopicSchemas struct {
	Key, Value LocalSchema
	ProtoPaths []string
}

// LocalSchema is a schema file for the keys or the values of a topic:
// exactly one of Avro (an .avsc file), Proto (a .proto file, with Message)
// and DescriptorSet (a FileDescriptorSet, with Message); all empty when
// none is set.
type LocalSchema struct {
	Avro, Proto, DescriptorSet, Message string
}

// TLS configures TLS to the brokers. It is on when Enabled says so, or,
// with Enabled unset, when any other field is set.
type TLS struct {
	Enabled  *bool
	CAFile   string
	CertFile string
	KeyFile  string
	// KeyPassword is the passphrase of an encrypted key (PKCS#8
	// "ENCRYPTED PRIVATE KEY", or a legacy PEM with Proc-Type: 4,ENCRYPTED).
	KeyPassword SecretSource
	// ServerName overrides the host name checked in the broker certificate.
	ServerName string
	// InsecureSkipVerify turns certificate checks off; kbatch warns loudly.
	InsecureSkipVerify *bool
}

// On reports whether TLS is used.
func (t TLS) On() bool {
	if t.Enabled != nil {
		return *t.Enabled
	}
	return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify != nil
}

// Insecure reports whether TLS is on with certificate checks off.
func (t TLS) Insecure() bool {
	return t.On() && t.InsecureSkipVerify != nil && *t.InsecureSkipVerify
}

// SASL configures SASL authentication. It is on when Mechanism is set. The
// password comes from exactly one of Password (a config file or
// KBATCH_SASL_PASSWORD), PasswordEnv (the name of a variable holding it),
// PasswordFile (a file holding it) or PasswordCommand (a command printing
// it); with none, kbatch prompts on a terminal. OAUTHBEARER, AWS_MSK_IAM
// and GSSAPI take their settings from OAuth, AWS and Kerberos.
type SASL struct {
	// Mechanism is one of Mechanisms (upper case after Parse or Merge).
	Mechanism       string
	User            string
	Password        Secret
	PasswordEnv     string
	PasswordFile    string
	PasswordCommand string
	OAuth           OAuth
	AWS             AWS
	Kerberos        Kerberos
}

// NeedsPassword reports whether the mechanism authenticates with the
// password: PLAIN and SCRAM always, GSSAPI when neither a keytab nor a
// credential cache is given.
func (s SASL) NeedsPassword() bool {
	switch s.Mechanism {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		return true
	case "GSSAPI":
		return s.Kerberos.Keytab == "" && s.Kerberos.CCache == ""
	}
	return false
}

// On reports whether SASL is used.
func (s SASL) On() bool { return s.Mechanism != "" }

func (s SASL) hasPasswordSource() bool {
	return s.Password != "" || s.PasswordEnv != "" || s.PasswordFile != "" || s.PasswordCommand != ""
}

// Mechanisms are the SASL mechanisms kbatch speaks.
var Mechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM", "GSSAPI"}

// Watch holds defaults for the flags of kbatch watch; a zero field is
// unset and leaves the flag's own default.
type Watch struct {
	Interval        time.Duration
	Reset           string
	MaxPerPartition int
	Samples         *int
	TailRecords     *int
	Ack             string
	FailOnDataLoss  *bool
	StrictOffsets   *bool
	Isolation       string
}

// FlagValues returns the set fields as flag name → value text, ready for
// a flag's Set.
func (w Watch) FlagValues() map[string]string {
	out := map[string]string{}
	if w.Interval > 0 {
		out["interval"] = w.Interval.String()
	}
	if w.Reset != "" {
		out["reset"] = w.Reset
	}
	if w.MaxPerPartition > 0 {
		out["max-per-partition"] = strconv.Itoa(w.MaxPerPartition)
	}
	if w.Samples != nil {
		out["samples"] = strconv.Itoa(*w.Samples)
	}
	if w.TailRecords != nil {
		out["tail-records"] = strconv.Itoa(*w.TailRecords)
	}
	if w.Ack != "" {
		out["ack"] = w.Ack
	}
	if w.FailOnDataLoss != nil {
		out["fail-on-data-loss"] = strconv.FormatBool(*w.FailOnDataLoss)
	}
	if w.StrictOffsets != nil {
		out["strict-offsets"] = strconv.FormatBool(*w.StrictOffsets)
	}
	if w.Isolation != "" {
		out["isolation"] = w.Isolation
	}
	return out
}

// Store holds [store] defaults.
type Store struct {
	// Path is the offset store file.
	Path string
}

// Secret is a password. It formats as "[redacted]" with every fmt verb and
// in JSON, so a stray Printf or log line cannot leak it; use string(s) only
// where the password is handed to the client.
type Secret string

const redacted = "[redacted]"

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns "[redacted]".
func (Secret) GoString() string { return redacted }

// Format writes "[redacted]" whatever the verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalText returns "[redacted]" (JSON, TOML and other encoders).
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
