package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// TLSConfig builds the client TLS configuration: nil when TLS is off;
// otherwise TLS 1.2 or newer, the CA file's certificates as roots (the
// system roots without one), the client certificate and key when given.
// Errors name the file and never quote its content.
func (t TLS) TLSConfig() (*tls.Config, error) { return t.TLSConfigEnv(os.Getenv) }

// TLSConfigEnv is TLSConfig with the environment (for key_password_env)
// read through getenv.
func (t TLS) TLSConfigEnv(getenv func(string) string) (*tls.Config, error) {
	if !t.On() {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.Insecure() {
		c.InsecureSkipVerify = true
	}
	if t.CAFile != "" {
		pool, err := caPool(t.CAFile, "TLS CA file")
		if err != nil {
			return nil, err
		}
		c.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		if t.CertFile == "" || t.KeyFile == "" {
			return nil, errors.New("TLS client certificate and key go together: give both cert_file and key_file (--tls-cert, --tls-key)")
		}
		certPEM, err := readSmallFile(t.CertFile, "TLS certificate file")
		if err != nil {
			return nil, err
		}
		keyPEM, err := readSmallFile(t.KeyFile, "TLS key file")
		if err != nil {
			return nil, err
		}
		if keyPEM, err = decryptKey(keyPEM, t, getenv); err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate %s with key %s: %s", t.CertFile, t.KeyFile, firstLine(err.Error()))
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// maxSmallFile bounds certificate, key and password files.
const maxSmallFile = 1 << 20

// caPool reads a PEM file of CA certificates; what names it in errors.
func caPool(path, what string) (*x509.CertPool, error) {
	pem, err := readSmallFile(path, what)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s holds no PEM certificate", what, path)
	}
	return pool, nil
}

func readSmallFile(path, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, describeOSError(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSmallFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s cannot be read: %w", what, path, describeOSError(err))
	}
	if len(data) > maxSmallFile {
		return nil, fmt.Errorf("%s %s is larger than 1 MiB", what, path)
	}
	return data, nil
}

func describeOSError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return errors.New("does not exist")
		case errors.Is(err, os.ErrPermission):
			return errors.New("permission denied")
		}
		return pe.Err
	}
	return err
}

// ErrNoPassword is returned by ResolvePassword when SASL needs a password and no
// source gave one; the caller may prompt, or report it.
var ErrNoPassword = errors.New("no SASL password given")

// ResolvePassword finds the SASL password: Password itself, else the variable
// named by PasswordEnv (looked up with getenv), else the first line of
// PasswordFile, else the first line PasswordCommand prints. Warnings name a password file other users can read. With
// no source it returns ErrNoPassword. Errors name the variable or file,
// never the password.
func (s SASL) ResolvePassword(getenv func(string) string) (Secret, []string, error) {
	switch {
	case s.Password != "":
		return s.Password, nil, nil
	case s.PasswordEnv != "":
		v := getenv(s.PasswordEnv)
		if v == "" {
			if looksLikeVariableName(s.PasswordEnv) {
				return "", nil, fmt.Errorf("SASL password variable %s (--sasl-password-env, password_env) is not set or empty", s.PasswordEnv)
			}
			return "", nil, errors.New("SASL password: the variable named by --sasl-password-env (password_env) is not set or empty; " +
				"the name is not shown, as it does not look like a variable name (a password put there by mistake?)")
		}
		return Secret(v), nil, nil
	case s.PasswordFile != "":
		var warnings []string
		if _, err := os.Lstat(s.PasswordFile); errors.Is(err, os.ErrNotExist) {
			return "", nil, errors.New("SASL password: the file named by --sasl-password-file (password_file) does not exist; " +
				"the name is not shown, in case a password was put there by mistake")
		}
		if info, err := os.Stat(s.PasswordFile); err == nil && info.Mode().Perm()&0o077 != 0 {
			warnings = append(warnings, fmt.Sprintf("SASL password file %s can be read by other users (mode %04o); run chmod 600 %s",
				s.PasswordFile, info.Mode().Perm(), s.PasswordFile))
		}
		data, err := readSmallFile(s.PasswordFile, "SASL password file")
		if err != nil {
			return "", warnings, err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return "", warnings, fmt.Errorf("SASL password file %s is empty", s.PasswordFile)
		}
		return Secret(line), warnings, nil
	case s.PasswordCommand != "":
		pw, err := RunSecretCommand(s.PasswordCommand, "SASL password (password_command)")
		return pw, nil, err
	}
	return "", nil, ErrNoPassword
}

// looksLikeVariableName reports whether name is a conventional environment
// variable name, upper-case letters, digits and underscores, at most 64
// characters (KAFKA_PASSWORD), and so safe to show in an error. Anything
// else (lower case, punctuation) may be a password typed where the name of
// its variable belongs, and is never printed: passwords are rarely written
// in upper case only with underscores, and names almost always are.
func looksLikeVariableName(name string) bool {
	if name == "" || len(name) > 64 || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ReadSecretFile reads a secret (a password, a token) from the first line
// of the file at path; what names it in messages ("registry password").
// Warnings name a file other users can read. Errors never quote the
// content, nor the path when it does not exist (a secret put where its
// file name belongs).
func ReadSecretFile(path, what string) (Secret, []string, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("%s: the file named for it does not exist; the name is not shown, in case a secret was put there by mistake", what)
	}
	var warnings []string
	if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o077 != 0 {
		warnings = append(warnings, fmt.Sprintf("%s file %s can be read by other users (mode %04o); run chmod 600 %s",
			what, path, info.Mode().Perm(), path))
	}
	data, err := readSmallFile(path, what+" file")
	if err != nil {
		return "", warnings, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", warnings, fmt.Errorf("%s file %s is empty", what, path)
	}
	return Secret(line), warnings, nil
}
