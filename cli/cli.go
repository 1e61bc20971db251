package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kbatch-dev/kbatch/config"
	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// Exit codes of docs/design.md §3; 4, a replay cut short at the end of
// the log, is replay's own (replay/errors.go).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitPartial = 3
)

// usageError marks bad input given on the command line (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCoder lets an error choose its own exit code (replay's partial ranges).
type exitCoder interface{ ExitCode() int }

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	var ue usageError
	var oe *offsets.UsageError
	var ce *config.Error
	if errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &ce) || errors.Is(err, kafka.ErrUnknownTopic) {
		return exitUsage
	}
	return exitFailure
}

// oneLine flattens an error to the single stderr line kbatch promises, and
// makes it safe for a terminal (record.String, docs/design.md §2.7): an error can
// quote a broker's message, a host, topic or file name, and none of those
// came from kbatch.
//
// The line is at most about maxLineBytes: a broker's host or topic name
// may be 32 KiB, four times that once escaped, and one error would fill
// the terminal. Its middle is cut, so both what failed (the start) and
// why (the end) stay.
func oneLine(err error) string {
	s := strings.TrimSpace(err.Error())
	s = strings.ReplaceAll(s, "\r\n", "; ")
	s = strings.ReplaceAll(s, "\n", "; ")
	return record.CutMiddle(record.String(s), maxLineBytes)
}

// maxLineBytes bounds the error line oneLine makes.
const maxLineBytes = 2048

// globalOptions are the flags every command shares, and what was resolved
// from them: the configuration file (loaded once, on first use) and the
// connection clientConfig built.
type globalOptions struct {
	brokers      []string
	configFile   string
	cluster      string
	store        string
	name         string
	kafkaVersion string
	rack         string
	dialTimeout  time.Duration
	// maxRecordBytes is --max-record-bytes as given ("" for the default).
	maxRecordBytes string
	tls            tlsFlags
	sasl           saslFlags

	// flags are the root's persistent flags, for Changed.
	flags *pflag.FlagSet
	// stderr receives warnings (default os.Stderr).
	stderr io.Writer
	// getenv reads the environment (default os.Getenv).
	getenv func(string) string
	// prompt asks for a password on the terminal (default config.PromptPassword).
	prompt func(label string) (config.Secret, error)
	// terminal refuses the screen when there is no terminal for it
	// (needTerminal); nil checks nothing (tests).
	terminal func() error

	cfg    *config.File
	cfgErr error
	warned map[string]bool
	// conn describes the connection of the last clientConfig call, without
	// secrets, for the TUI header and messages.
	conn connectionInfo
	// profileOnly is set once the user switched cluster profiles on the
	// screen: brokers come from the profile alone.
	profileOnly bool
}

// tlsFlags are --tls and --tls-*.
type tlsFlags struct {
	enabled            bool
	caFile             string
	certFile           string
	keyFile            string
	serverName         string
	insecureSkipVerify bool
}

// saslFlags are --sasl-*. There is deliberately no password flag: command
// lines show up in ps and shell history.
type saslFlags struct {
	mechanism    string
	user         string
	passwordEnv  string
	passwordFile string
}

func newRootCommand() *cobra.Command {
	return newRootCommandFor(&globalOptions{stderr: os.Stderr, getenv: os.Getenv, prompt: config.PromptPassword})
}

// newRootCommandFor builds the command tree over g, which receives the
// global flags.
func newRootCommandFor(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "kbatch",
		Short: "A direct Kafka consumer that shows the stream batch by batch",
		Long: `kbatch runs a direct Kafka consumer (partitions assigned by hand, no consumer
group), cuts the stream into batches and shows each batch's offset ranges
[from, until) per partition. Offsets are stored locally only after a batch is
acknowledged. Without a command, kbatch runs "watch".

Connection settings come from flags, then KBATCH_* variables, then the
config file's [clusters.NAME] profile (see config.example.toml).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Only watch (and the root, which runs watch) take [watch] defaults;
		// a subcommand that sets its own PersistentPreRunE must call this.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if !utf8.ValidString(g.name) {
				// The store keeps bytes, but offsets export writes the
				// name as JSON text: it would not read back the same.
				return usagef("invalid --name %q: not UTF-8 text", g.name)
			}
			if !cmd.HasParent() && versionAsked(cmd) {
				return nil // --version reads no config
			}
			if cmd.Name() == "watch" || !cmd.HasParent() {
				return g.applyWatchDefaults(cmd)
			}
			return nil
		},
	}
	// --version is kbatch's own flag, not cobra's: cobra prints its version
	// through text/template, whose reflection keeps every exported method
	// of every type in the binary alive to the linker.
	root.Flags().BoolP("version", "v", false, "version for kbatch")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	g.flags = pf
	pf.StringSliceVarP(&g.brokers, "brokers", "b", nil, "bootstrap brokers host:port,... (env KBATCH_BROKERS)")
	pf.StringVar(&g.configFile, "config", "", "config file (env KBATCH_CONFIG, default $XDG_CONFIG_HOME/kbatch/config.toml)")
	pf.StringVar(&g.cluster, "cluster", "", "use [clusters.NAME] of the config file (env KBATCH_CLUSTER)")
	pf.StringVar(&g.store, "store", "", "offset store file (env KBATCH_STORE); default: one file per stream in $XDG_STATE_HOME/kbatch/streams/")
	pf.StringVar(&g.name, "name", "", "stream name in the store (default: derived from the topics)")
	pf.StringVar(&g.kafkaVersion, "kafka-version", "", "Kafka protocol version to speak (env KBATCH_KAFKA_VERSION, default 2.8.0)")
	pf.StringVar(&g.rack, "rack", "", "this client's rack: fetch from a replica in it where the brokers allow (KIP-392; env KBATCH_RACK)")
	pf.DurationVar(&g.dialTimeout, "dial-timeout", 10*time.Second, "give up reaching the cluster after this long")
	pf.StringVar(&g.maxRecordBytes, "max-record-bytes", kafka.FormatBytes(kafka.DefaultMaxRecordBytes),
		"the most one record batch (and so one record) may take decompressed and decoded, its records and headers included, up to 1GiB; a larger one is reported as too large, never read")
	pf.BoolVar(&g.tls.enabled, "tls", false, "connect with TLS (implied by any --tls-* flag; --tls=false turns a profile's TLS off)")
	pf.StringVar(&g.tls.caFile, "tls-ca", "", "PEM file of CA certificates to trust (default: the system's)")
	pf.StringVar(&g.tls.certFile, "tls-cert", "", "PEM client certificate (with --tls-key)")
	pf.StringVar(&g.tls.keyFile, "tls-key", "", "PEM key of the client certificate")
	pf.StringVar(&g.tls.serverName, "tls-server-name", "", "host name to check in the broker certificate")
	pf.BoolVar(&g.tls.insecureSkipVerify, "tls-insecure-skip-verify", false, "do not check the broker certificate (unsafe; kbatch warns)")
	pf.StringVar(&g.sasl.mechanism, "sasl-mechanism", "", saslHelp)
	pf.StringVar(&g.sasl.user, "sasl-user", "", "SASL user name (env KBATCH_SASL_USER)")
	pf.StringVar(&g.sasl.passwordEnv, "sasl-password-env", "", "name of the environment variable holding the SASL password")
	pf.StringVar(&g.sasl.passwordFile, "sasl-password-file", "", "file whose first line is the SASL password")

	watch := newWatchCommand(g)
	root.AddCommand(watch, newDemoCommand(g), newVersionCommand())
	root.AddCommand(newTopicsCommand(g))
	root.AddCommand(newReplayCommand(g), newOffsetsCommand(g))
	root.AddCommand(newSparkCommand(g))
	// "kbatch [flags]" runs watch.
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if versionAsked(cmd) {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), currentVersionLine())
			return err
		}
		return watch.RunE(cmd, args)
	}
	root.Flags().AddFlagSet(watch.Flags())
	root.Args = cobra.NoArgs // "kbatch frobnicate": an unknown command
	strictHelpAndCompletion(root)
	argsAreUsage(root)
	addCompletions(root, g)
	return root
}

// versionAsked says whether the root's --version was given.
func versionAsked(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool("version")
	return v
}

// strictHelpAndCompletion makes cobra's help and completion commands (made
// here rather than at Execute, so that argsAreUsage covers them) refuse
// what they do not know with a usage error, exit 2: cobra's own would
// print help on stdout with exit 0 for "kbatch completion tcsh" (so
// "> file" would write help) and for "kbatch help frob".
func strictHelpAndCompletion(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "completion":
			c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
		case "help":
			run := c.Run
			c.Run = nil
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if found, rest, err := cmd.Root().Find(args); err != nil || len(rest) > 0 || (len(args) > 0 && found == cmd.Root()) {
					return usagef("unknown help topic %q: kbatch help lists the commands", strings.Join(args, " "))
				}
				run(cmd, args)
				return nil
			}
		}
	}
}

// argsAreUsage makes the argument checks of c and its subcommands return
// usage errors (exit 2): an unknown command or an extra argument is bad
// input on the command line, as a bad flag is.
func argsAreUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		argsAreUsage(sub)
	}
}

// errNoBrokers is wrapped by clientConfig's error when no brokers are
// configured anywhere (flags, environment, profile); commands that can work
// without a cluster test for it with errors.Is.
var errNoBrokers = errors.New("no brokers: pass -b host:port, set KBATCH_BROKERS, or pick a config profile with --cluster NAME; to try kbatch without a cluster, run: kbatch demo")

// clientConfig resolves the connection (flags, then environment, then the
// config profile), checks it, builds TLS, finds the SASL password
// (prompting on a terminal if it must) and warns about insecure settings
// on stderr. It also records connectionInfo for the screen.
func (g *globalOptions) clientConfig() (kafka.ClientConfig, error) {
	cc := kafka.ClientConfig{DialTimeout: g.dialTimeout}
	if g.changed("dial-timeout") && g.dialTimeout <= 0 {
		return cc, usagef("--dial-timeout %s: want a positive duration like 10s", g.dialTimeout)
	}
	conn, err := g.connection()
	if err != nil {
		return cc, err
	}
	switch {
	case g.changed("max-record-bytes") || conn.MaxRecordBytes == "":
		n, err := kafka.ParseBytes(g.maxRecordBytes)
		if err != nil {
			return cc, usagef("--max-record-bytes %q: %v", g.maxRecordBytes, err)
		}
		cc.MaxRecordBytes = n
	default:
		n, err := kafka.ParseBytes(conn.MaxRecordBytes)
		if err != nil {
			return cc, usagef("max_record_bytes %q in the profile %s: %v", conn.MaxRecordBytes, conn.Name, err)
		}
		cc.MaxRecordBytes = n
	}
	cc.Brokers = conn.Brokers
	cc.Rack = conn.Rack
	if !g.changed("dial-timeout") && conn.DialTimeout > 0 {
		cc.DialTimeout = conn.DialTimeout
	}
	if v := conn.KafkaVersion; v != "" {
		kv, err := kafka.ParseVersion(v)
		if err != nil {
			return cc, usagef("invalid Kafka version %q (--kafka-version, KBATCH_KAFKA_VERSION or kafka_version): want a version like 2.8.0", v)
		}
		cc.Version = kv
	}
	if cc.TLS, err = conn.TLS.TLSConfigEnv(g.env); err != nil {
		return cc, usageError{err}
	}
	if conn.TLS.Insecure() {
		g.warn("TLS certificate checks are off (insecure_skip_verify) for " + strings.Join(conn.Brokers, ",") +
			": anyone on the network path can read and change this connection")
	}
	if conn.SASL.On() {
		if cc.SASL, err = g.saslConfig(conn); err != nil {
			return cc, err
		}
	}
	g.conn = connectionInfo{
		Cluster: conn.Name, Brokers: conn.Brokers,
		TLS: conn.TLS.On(), InsecureSkipVerify: conn.TLS.Insecure(),
		SASLMechanism: conn.SASL.Mechanism, SASLUser: conn.SASL.User,
	}
	return cc, nil
}

// dial is clientConfig, then a client on that configuration; the caller
// closes the client.
func (g *globalOptions) dial() (*kafka.Client, kafka.ClientConfig, error) {
	cc, err := g.clientConfig()
	if err != nil {
		return nil, cc, err
	}
	client, err := kafka.Dial(cc)
	return client, cc, err
}

// checkSamples refuses a --samples of watch or spark outside 0 to
// consumer.MaxSamples: samples are copies kept in memory.
func checkSamples(n int) error {
	if n < 0 || n > consumer.MaxSamples {
		return usagef("invalid --samples %d: must be 0 to %d (samples are kept in memory for every partition of every batch shown)", n, consumer.MaxSamples)
	}
	return nil
}

// storePath is where the store is (storeLocation): a file, or the
// default folder of one file per stream.
func (g *globalOptions) storePath() (string, error) {
	loc, err := g.storeLocation()
	return loc.path, err
}

// storeAt is where the offset store is. path is --store, else
// $KBATCH_STORE, else the config's [store] path: one file, which one
// kbatch process writes at a time. Else path is the folder
// $XDG_STATE_HOME/kbatch/streams, one file per stream, so kbatch
// processes on different streams run at once (offsets.OpenFolder); from
// is the file kept there before, whose streams move into the folder on
// its first writable open.
type storeAt struct {
	path   string
	folder bool
	from   string
}

// exists reports whether anything was stored there yet; a path that
// cannot be looked at (its folder's mode) counts as there, for opening it
// to say why.
func (l storeAt) exists() bool {
	if _, err := os.Stat(l.path); !errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if !l.folder {
		return false
	}
	_, err := os.Stat(l.from)
	return !errors.Is(err, fs.ErrNotExist)
}

// storeLocation is where the store is; see storeAt.
func (g *globalOptions) storeLocation() (storeAt, error) {
	if g.store != "" {
		return storeAt{path: g.store}, nil
	}
	if env := g.env("KBATCH_STORE"); env != "" {
		return storeAt{path: env}, nil
	}
	cfg, err := g.config()
	if err != nil {
		return storeAt{}, err
	}
	if cfg.Store.Path != "" {
		return storeAt{path: cfg.Store.Path}, nil
	}
	dir := g.env("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return storeAt{}, fmt.Errorf("cannot find a home folder for the store; pass --store FILE")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	dir = filepath.Join(dir, "kbatch")
	return storeAt{path: filepath.Join(dir, "streams"), folder: true, from: filepath.Join(dir, "offsets.db")}, nil
}

// openStore opens the store where storeLocation says it is.
func (g *globalOptions) openStore(opt offsets.OpenOptions) (*offsets.Store, error) {
	loc, err := g.storeLocation()
	if err != nil {
		return nil, err
	}
	if loc.folder {
		return offsets.OpenFolder(loc.path, loc.from, opt)
	}
	return offsets.Open(loc.path, opt)
}
