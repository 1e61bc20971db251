package config

import (
	"fmt"
	"sort"
	"strings"
)

// Merge combines connection layers, highest precedence first (flags, then
// environment, then the chosen profile): each field comes from the first
// layer that sets it. The SASL password source (Password, PasswordEnv,
// PasswordFile) is taken whole from the first layer that sets any of them,
// so --sasl-password-file replaces a profile's password_env instead of
// conflicting with it. Name is the first non-empty Name.
func Merge(layers ...Connection) Connection {
	var out Connection
	passwordSet := false
	for _, l := range layers {
		if out.Name == "" {
			out.Name = l.Name
		}
		if len(out.Brokers) == 0 {
			out.Brokers = l.Brokers
		}
		if out.KafkaVersion == "" {
			out.KafkaVersion = l.KafkaVersion
		}
		if out.DialTimeout == 0 {
			out.DialTimeout = l.DialTimeout
		}
		first(&out.Rack, l.Rack)
		first(&out.MaxRecordBytes, l.MaxRecordBytes)
		t := &out.TLS
		if t.Enabled == nil {
			t.Enabled = l.TLS.Enabled
		}
		first(&t.CAFile, l.TLS.CAFile)
		first(&t.CertFile, l.TLS.CertFile)
		first(&t.KeyFile, l.TLS.KeyFile)
		if !t.KeyPassword.Set() {
			t.KeyPassword = l.TLS.KeyPassword
		}
		first(&t.ServerName, l.TLS.ServerName)
		if t.InsecureSkipVerify == nil {
			t.InsecureSkipVerify = l.TLS.InsecureSkipVerify
		}
		s := &out.SASL
		first(&s.Mechanism, strings.ToUpper(strings.TrimSpace(l.SASL.Mechanism)))
		first(&s.User, l.SASL.User)
		if !passwordSet && l.SASL.hasPasswordSource() {
			s.Password, s.PasswordEnv, s.PasswordFile, s.PasswordCommand = l.SASL.Password, l.SASL.PasswordEnv, l.SASL.PasswordFile, l.SASL.PasswordCommand
			passwordSet = true
		}
		if out.Topics == nil {
			out.Topics = l.Topics
		}
		// The settings of a mechanism come whole from one layer (only
		// profiles have them).
		if s.OAuth.zero() {
			s.OAuth = l.SASL.OAuth
		}
		if s.AWS == (AWS{}) {
			s.AWS = l.SASL.AWS
		}
		if s.Kerberos.zero() {
			s.Kerberos = l.SASL.Kerberos
		}
		if out.Registry.URL == "" {
			out.Registry = l.Registry // whole: a user and password belong to their URL
		}
	}
	return out
}

func first(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// Check reports what is wrong with a merged connection before any file or
// network is touched: no brokers, a bad broker address, an unknown SASL
// mechanism, SASL without a user, or half a client certificate. Messages
// are one line and name the flag or key to fix.
func (c Connection) Check() error {
	if len(c.Brokers) == 0 {
		return fmt.Errorf("no brokers: pass -b host:port, set KBATCH_BROKERS, or pick a config profile with --cluster NAME")
	}
	if _, err := ParseBrokers(c.Brokers); err != nil {
		return err
	}
	if c.SASL.On() {
		if _, err := normalizeMechanism(c.SASL.Mechanism); err != nil {
			return fmt.Errorf("--sasl-mechanism: %w", err)
		}
		if err := c.SASL.checkSettings(); err != nil {
			return fmt.Errorf("SASL: %w", err)
		}
		if err := c.SASL.checkMechanism(); err != nil {
			return err
		}
	} else if c.SASL.User != "" || c.SASL.hasPasswordSource() {
		return fmt.Errorf("SASL user or password given without a mechanism: pass --sasl-mechanism (one of %s)", strings.Join(Mechanisms, ", "))
	}
	if c.TLS.On() && (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return fmt.Errorf("TLS client certificate and key go together: pass both --tls-cert and --tls-key")
	}
	return nil
}

// Cluster returns the profile called name, or an error naming the
// profiles there are.
func (f *File) Cluster(name string) (Connection, error) {
	if c, ok := f.Clusters[name]; ok {
		return c, nil
	}
	names := make([]string, 0, len(f.Clusters))
	for n := range f.Clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	switch {
	case f.Path == "" && f.missing != "":
		return Connection{}, fmt.Errorf("unknown cluster %q: there is no config file %s (pass --config FILE)", name, f.missing)
	case f.Path == "":
		return Connection{}, fmt.Errorf("unknown cluster %q: no config file (pass --config FILE)", name)
	case len(names) == 0:
		return Connection{}, fmt.Errorf("unknown cluster %q: %s defines no [clusters.NAME]", name, f.Path)
	}
	return Connection{}, fmt.Errorf("unknown cluster %q: %s defines %s", name, f.Path, strings.Join(names, ", "))
}
