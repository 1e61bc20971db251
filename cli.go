package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Exit codes of DESIGN §3.
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
	if errors.As(err, &ue) || errors.As(err, &oe) || errors.Is(err, consumer.ErrUnknownTopic) {
		return exitUsage
	}
	return exitFailure
}

// oneLine flattens an error to the single stderr line kbatch promises.
func oneLine(err error) string {
	s := strings.TrimSpace(err.Error())
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", "; ")
}

// globalOptions are the flags every command shares.
type globalOptions struct {
	brokers      []string
	configFile   string
	cluster      string
	store        string
	name         string
	kafkaVersion string
	dialTimeout  time.Duration
}

func newRootCommand() *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "kbatch",
		Short: "A direct Kafka consumer that shows the stream batch by batch",
		Long: `kbatch runs a direct Kafka consumer (partitions assigned by hand, no consumer
group), cuts the stream into batches and shows each batch's offset ranges
[from, until) per partition. Offsets are stored locally only after a batch is
acknowledged. Without a command, kbatch runs "watch".`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringSliceVarP(&g.brokers, "brokers", "b", nil, "bootstrap brokers host:port,... (env KBATCH_BROKERS)")
	pf.StringVar(&g.configFile, "config", "", "config file (default $XDG_CONFIG_HOME/kbatch/config.toml)")
	pf.StringVar(&g.cluster, "cluster", "", "use [clusters.NAME] of the config file")
	pf.StringVar(&g.store, "store", "", "offset store file (default $XDG_STATE_HOME/kbatch/offsets.db)")
	pf.StringVar(&g.name, "name", "", "stream name in the store (default: derived from the topics)")
	pf.StringVar(&g.kafkaVersion, "kafka-version", "", "Kafka protocol version to speak (default 2.8.0)")
	pf.DurationVar(&g.dialTimeout, "dial-timeout", 10*time.Second, "give up reaching the cluster after this long")

	watch := newWatchCommand(g)
	root.AddCommand(watch, newDemoCommand(g), newVersionCommand())
	// "kbatch [flags]" runs watch.
	root.RunE = watch.RunE
	root.Flags().AddFlagSet(watch.Flags())
	return root
}

// clientConfig resolves brokers (flag, then env) and the protocol version.
func (g *globalOptions) clientConfig() (consumer.ClientConfig, error) {
	cc := consumer.ClientConfig{DialTimeout: g.dialTimeout}
	cc.Brokers = g.brokers
	if len(cc.Brokers) == 0 {
		if env := os.Getenv("KBATCH_BROKERS"); env != "" {
			cc.Brokers = strings.Split(env, ",")
		}
	}
	if len(cc.Brokers) == 0 {
		return cc, usagef("no brokers: pass -b host:port or set KBATCH_BROKERS")
	}
	for _, b := range cc.Brokers {
		if _, port, ok := strings.Cut(b, ":"); !ok || port == "" {
			return cc, usagef("invalid broker address %q: want host:port", b)
		}
	}
	v := g.kafkaVersion
	if v == "" {
		v = os.Getenv("KBATCH_KAFKA_VERSION")
	}
	if v != "" {
		kv, err := sarama.ParseKafkaVersion(v)
		if err != nil {
			return cc, usagef("invalid --kafka-version %q: want a version like 2.8.0", v)
		}
		cc.Version = kv
	}
	return cc, nil
}

// storePath is --store, else $KBATCH_STORE, else the XDG state location.
func (g *globalOptions) storePath() (string, error) {
	if g.store != "" {
		return g.store, nil
	}
	if env := os.Getenv("KBATCH_STORE"); env != "" {
		return env, nil
	}
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find a home folder for the store; pass --store FILE")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "kbatch", "offsets.db"), nil
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kbatch's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "kbatch "+version)
		},
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"
