package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/config"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/tui"
)

// connectionInfo describes the connection in use, without secrets: the
// TUI header shows Cluster, and a visible "TLS NOT VERIFIED" mark when
// InsecureSkipVerify is set.
type connectionInfo struct {
	// Cluster is the config profile's name; "" when flags or the
	// environment gave the brokers without --cluster.
	Cluster            string
	Brokers            []string
	TLS                bool
	InsecureSkipVerify bool
	SASLMechanism      string
	SASLUser           string
}

func (g *globalOptions) env(name string) string {
	if g.getenv == nil {
		return ""
	}
	return g.getenv(name)
}

func (g *globalOptions) changed(flag string) bool {
	return g.flags != nil && g.flags.Changed(flag)
}

// warn prints "kbatch: warning: msg" on stderr, once per message.
func (g *globalOptions) warn(msg string) {
	if g.warned == nil {
		g.warned = map[string]bool{}
	}
	if g.warned[msg] || g.stderr == nil {
		return
	}
	g.warned[msg] = true
	fmt.Fprintln(g.stderr, "kbatch: warning: "+record.String(msg))
}

// config loads the configuration file once: --config, else KBATCH_CONFIG,
// else the XDG default, which may be missing.
func (g *globalOptions) config() (*config.File, error) {
	if g.cfg != nil || g.cfgErr != nil {
		return g.cfg, g.cfgErr
	}
	path, explicit := g.configFile, true
	if path == "" {
		path = g.env("KBATCH_CONFIG")
	}
	if path == "" {
		path, explicit = config.DefaultPath(), false
	}
	g.cfg, g.cfgErr = config.Load(path, explicit)
	if g.cfgErr == nil {
		for _, w := range g.cfg.Warnings {
			g.warn(w)
		}
	}
	return g.cfg, g.cfgErr
}

// applyWatchDefaults sets the config's [watch] values on cmd's flags that
// were not given on the command line.
func (g *globalOptions) applyWatchDefaults(cmd *cobra.Command) error {
	cfg, err := g.config()
	if err != nil {
		return err
	}
	for name, value := range cfg.Watch.FlagValues() {
		f := cmd.Flags().Lookup(name)
		if f == nil || f.Changed {
			continue
		}
		if err := f.Value.Set(value); err != nil {
			return &config.Error{Path: cfg.Path, Msg: fmt.Sprintf("[watch] %s = %q: %v", strings.ReplaceAll(name, "-", "_"), value, err)}
		}
	}
	return nil
}

// connection merges the flag, environment and profile layers and checks
// the result. The profile is --cluster, else KBATCH_CLUSTER, else the
// config's default_cluster — the default only when no brokers were given
// by flag or environment, so `kbatch -b localhost:9092` never picks up a
// production profile's credentials.
func (g *globalOptions) connection() (config.Connection, error) {
	cfg, err := g.config()
	if err != nil {
		return config.Connection{}, err
	}
	flags := g.flagLayer()
	env, err := g.envLayer()
	if err != nil {
		return config.Connection{}, err
	}
	if g.profileOnly {
		// Switched on the screen (c): the profile's brokers, not the
		// ones the command line or the environment gave at start.
		flags.Brokers, env.Brokers = nil, nil
	}
	name := g.cluster
	if name == "" {
		name = g.env("KBATCH_CLUSTER")
	}
	if name == "" && len(flags.Brokers) == 0 && len(env.Brokers) == 0 {
		name = cfg.DefaultCluster
	}
	var profile config.Connection
	if name != "" {
		if profile, err = cfg.Cluster(name); err != nil {
			return config.Connection{}, usageError{err}
		}
	}
	conn := config.Merge(flags, env, profile)
	if len(conn.Brokers) == 0 {
		return conn, usageError{errNoBrokers}
	}
	if err := conn.Check(); err != nil {
		return conn, usageError{err}
	}
	return conn, nil
}

func (g *globalOptions) flagLayer() config.Connection {
	c := config.Connection{Brokers: g.brokers, KafkaVersion: g.kafkaVersion, Rack: g.rack}
	t := &c.TLS
	if g.changed("tls") {
		t.Enabled = &g.tls.enabled
	}
	t.CAFile, t.CertFile, t.KeyFile, t.ServerName = g.tls.caFile, g.tls.certFile, g.tls.keyFile, g.tls.serverName
	if g.changed("tls-insecure-skip-verify") {
		t.InsecureSkipVerify = &g.tls.insecureSkipVerify
	}
	c.SASL = config.SASL{Mechanism: g.sasl.mechanism, User: g.sasl.user,
		PasswordEnv: g.sasl.passwordEnv, PasswordFile: g.sasl.passwordFile}
	return c
}

func (g *globalOptions) envLayer() (config.Connection, error) {
	c := config.Connection{KafkaVersion: g.env("KBATCH_KAFKA_VERSION"), Rack: g.env("KBATCH_RACK")}
	if b := g.env("KBATCH_BROKERS"); b != "" {
		brokers, err := config.ParseBrokers(strings.Split(b, ","))
		if err != nil {
			return c, usagef("KBATCH_BROKERS: %v", err)
		}
		c.Brokers = brokers
	}
	c.SASL = config.SASL{Mechanism: g.env("KBATCH_SASL_MECHANISM"), User: g.env("KBATCH_SASL_USER"),
		Password: config.Secret(g.env("KBATCH_SASL_PASSWORD"))}
	return c, nil
}

// password finds the SASL password of conn, prompting on the terminal when
// no source gives one.
func (g *globalOptions) password(conn config.Connection) (config.Secret, error) {
	pw, warnings, err := conn.SASL.ResolvePassword(g.env)
	for _, w := range warnings {
		g.warn(w)
	}
	if !errors.Is(err, config.ErrNoPassword) {
		if err != nil {
			return "", usageError{err}
		}
		return pw, nil
	}
	where := ""
	if conn.Name != "" {
		where = " (cluster " + conn.Name + ")"
	}
	if g.prompt != nil {
		pw, err = g.prompt(record.String(fmt.Sprintf("SASL password for %s%s: ", conn.SASL.User, where)))
		if err == nil {
			return pw, nil
		}
		if !errors.Is(err, config.ErrNoTerminal) {
			return "", err
		}
	}
	hint := "pass --sasl-password-env VAR or --sasl-password-file FILE, or set KBATCH_SASL_PASSWORD"
	if conn.Name != "" {
		hint = "set password_env or password_file in [clusters." + conn.Name + ".sasl], " + hint
	}
	return "", usagef("SASL user %s%s needs a password and there is no terminal to ask on: %s", conn.SASL.User, where, hint)
}

// switchProfile makes the next connection use profile name (the screen's
// c): its brokers win over -b and KBATCH_BROKERS, and the stream name is
// derived again from the topics picked.
func (g *globalOptions) switchProfile(name string) {
	g.cluster, g.brokers, g.name, g.profileOnly = name, nil, "", true
}

// probeProfile is the screen's ProbeProfile: it connects to profile name's
// cluster (metadata only) on a copy of the options, without warnings on
// stderr (the screen is drawn there) and without a password prompt: a
// profile whose password is typed at the terminal is not tried.
func (g *globalOptions) probeProfile(ctx context.Context, name string) error {
	h := *g
	h.stderr, h.warned = io.Discard, map[string]bool{}
	asked := false
	h.prompt = func(string) (config.Secret, error) {
		asked = true
		return "", config.ErrNoTerminal
	}
	h.switchProfile(name)
	cc, err := h.clientConfig()
	if asked {
		return tui.ErrProbeSkipped
	}
	if err != nil {
		return err
	}
	cc.FailFast = true
	_, err = dialWithin(ctx, cc, func(*kafka.Client) (struct{}, error) { return struct{}{}, nil })
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return errors.New("its brokers did not answer in time")
	}
	return err
}
