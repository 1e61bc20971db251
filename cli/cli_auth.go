package cli

import (
	"context"

	"os"
	"strings"
	"time"

	"github.com/kbatch-dev/kbatch/config"
	"github.com/kbatch-dev/kbatch/kafka"
)

// saslConfig builds the client's SASL settings for conn (whose SASL is
// on): the password for the mechanisms that use one (prompting on a
// terminal if it must), the token provider of OAUTHBEARER and
// AWS_MSK_IAM, the Kerberos settings of GSSAPI. Files named by the
// profile are checked here, so a typo is one usage line before any
// connection; tokens are fetched when the first connection needs one.
func (g *globalOptions) saslConfig(conn config.Connection) (*kafka.SASL, error) {
	s := conn.SASL
	out := &kafka.SASL{Mechanism: s.Mechanism, User: s.User}
	if s.NeedsPassword() {
		pw, err := g.password(conn)
		if err != nil {
			return nil, err
		}
		out.Password = string(pw)
	}
	switch s.Mechanism {
	case "OAUTHBEARER":
		o := s.OAuth
		if o.Token.Set() {
			what := "OAUTHBEARER token (" + sourceKey("token", o.Token) + ")"
			if err := g.checkSecretFile(o.Token.File, "OAUTHBEARER token"); err != nil {
				return nil, err
			}
			src := o.Token
			fetch := func(context.Context) (string, time.Time, error) {
				tok, _, err := src.Resolve(what, g.env)
				return string(tok), time.Time{}, err
			}
			out.TokenProvider = kafka.NewTokenProvider(what, fetch, o.Extensions)
			break
		}
		if err := g.checkSecretFile(o.ClientSecret.File, "OAUTHBEARER client secret"); err != nil {
			return nil, err
		}
		what := "OAUTHBEARER client secret (" + sourceKey("client_secret", o.ClientSecret) + ")"
		cs := o.ClientSecret
		secret := func() (string, error) {
			v, _, err := cs.Resolve(what, g.env)
			return string(v), err
		}
		tlsConf, err := o.TokenEndpointTLS()
		if err != nil {
			return nil, usageError{err} // as a broker ca_file that cannot be read
		}
		out.TokenProvider = kafka.NewTokenProvider("OAUTHBEARER token from the token endpoint",
			kafka.ClientCredentials(o.TokenEndpoint, o.ClientID, secret, o.Scope, tlsConf), o.Extensions)
	case "AWS_MSK_IAM":
		region := s.AWS.Region
		for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
			if region == "" {
				region = g.env(v)
			}
		}
		if region == "" {
			return nil, usagef("SASL AWS_MSK_IAM needs the cluster's AWS region: set aws_region in the profile's sasl table, or AWS_REGION")
		}
		what := "AWS_MSK_IAM token (region " + region
		if s.AWS.Profile != "" {
			what += ", AWS profile " + s.AWS.Profile
		}
		out.TokenProvider = kafka.NewTokenProvider(what+")", kafka.MSKIAMToken(region, s.AWS.Profile), nil)
	case "GSSAPI":
		k := s.Kerberos
		kc := &kafka.Kerberos{ConfigPath: k.Config, ServiceName: k.ServiceName, Realm: k.Realm,
			Keytab: k.Keytab, CCache: k.CCache, DisableFAST: k.DisableFAST != nil && *k.DisableFAST}
		if kc.ConfigPath == "" {
			kc.ConfigPath = "/etc/krb5.conf"
		}
		if kc.ServiceName == "" {
			kc.ServiceName = "kafka"
		}
		for _, f := range []struct{ path, what string }{
			{kc.ConfigPath, "kerberos_config"}, {kc.Keytab, "kerberos_keytab"}, {kc.CCache, "kerberos_ccache"},
		} {
			if f.path == "" {
				continue
			}
			if _, err := os.Stat(f.path); err != nil {
				return nil, usagef("SASL GSSAPI: %s %s cannot be read: %v", f.what, f.path, cause(err))
			}
		}
		out.Kerberos = kc
	}
	return out, nil
}

// sourceKey names the key a secret source was given with.
func sourceKey(prefix string, s config.SecretSource) string {
	switch {
	case s.Env != "":
		return prefix + "_env"
	case s.File != "":
		return prefix + "_file"
	}
	return prefix + "_command"
}

// checkSecretFile reads a secret file once at start, for its warnings (a
// file others can read) and errors (missing, empty); path "" is fine.
func (g *globalOptions) checkSecretFile(path, what string) error {
	if path == "" {
		return nil
	}
	_, warnings, err := config.ReadSecretFile(path, what)
	for _, w := range warnings {
		g.warn(w)
	}
	if err != nil {
		return usageError{err}
	}
	return nil
}

// saslHelp lists the mechanisms for --sasl-mechanism's help.
var saslHelp = "SASL mechanism: " + strings.Join(config.Mechanisms, ", ") + " (env KBATCH_SASL_MECHANISM; the last three are set up in a config profile)"
