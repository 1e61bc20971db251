package cli

import (
	"strings"
	"testing"
)

// TestInputsAcceptedButWrong: values that parse but make no sense, and
// arguments a command does not take, are usage errors (exit 2) with one
// line that says which input is wrong.
func TestInputsAcceptedButWrong(t *testing.T) {
	for _, tc := range []struct {
		label string
		args  []string
		want  []string
	}{
		{"negative --dial-timeout", []string{"topics", "-b", "127.0.0.1:1", "--dial-timeout", "-1s"}, []string{"--dial-timeout", "-1s"}},
		{"zero --dial-timeout", []string{"topics", "-b", "127.0.0.1:1", "--dial-timeout", "0s"}, []string{"--dial-timeout", "0s"}},
		{"unknown command", []string{"frobnicate"}, []string{"frobnicate"}},
		{"watch with an argument", []string{"watch", "extra", "-b", "127.0.0.1:1"}, []string{"extra"}},
		{"version with an argument", []string{"version", "extra"}, []string{"extra"}},
		{"completion for an unknown shell", []string{"completion", "tcsh"}, []string{"tcsh"}},
		{"completion with an extra argument", []string{"completion", "bash", "extra"}, []string{"extra"}},
		{"help on an unknown topic", []string{"help", "frob"}, []string{"frob"}},
		{"help on an unknown subcommand", []string{"help", "offsets", "nosuch"}, []string{"nosuch"}},
		{"broker port out of range", []string{"topics", "-b", "localhost:99999"}, []string{"localhost:99999", "port"}},
		{"broker port zero", []string{"topics", "-b", "localhost:0"}, []string{"localhost:0", "port"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			checkOneLine(t, execKbatch(t, nil, tc.args...), exitUsage, tc.want)
		})
	}
}

// TestSecretsNotEchoed: a password put where a name is expected (the
// variable of password_env, the file of password_file) is never printed
// back; a name that looks like a conventional variable name is.
func TestSecretsNotEchoed(t *testing.T) {
	const secret = "S3cret-Pa55word!"
	dir := t.TempDir()
	sasl := []string{"topics", "-b", "127.0.0.1:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u"}
	envCfg := writeFile(t, dir, "env.toml", "[clusters.a]\nbrokers = [\"127.0.0.1:1\"]\n[clusters.a.sasl]\nmechanism = \"PLAIN\"\nusername = \"u\"\npassword_env = \"S3cretPa55word\"\n", 0o600)
	fileCfg := writeFile(t, dir, "file.toml", "[clusters.a]\nbrokers = [\"127.0.0.1:1\"]\n[clusters.a.sasl]\nmechanism = \"PLAIN\"\nusername = \"u\"\npassword_file = \""+secret+"\"\n", 0o600)
	for _, tc := range []struct {
		label  string
		args   []string
		code   int
		secret string
		want   []string
	}{
		{"--sasl-password-env given a password", append(sasl, "--sasl-password-env", secret), exitUsage, secret, []string{"--sasl-password-env"}},
		{"password_env holding a password", []string{"topics", "--config", envCfg, "--cluster", "a"}, exitUsage, "S3cretPa55word", []string{"password_env"}},
		{"--sasl-password-file given a password", append(sasl, "--sasl-password-file", secret), exitUsage, secret, []string{"--sasl-password-file"}},
		{"password_file holding a password", []string{"topics", "--config", fileCfg, "--cluster", "a"}, exitUsage, secret, []string{"password_file"}},
		{"--sasl-mechanism given a password", []string{"topics", "-b", "127.0.0.1:1", "--sasl-mechanism", secret}, exitUsage, secret, []string{"--sasl-mechanism"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			r := execKbatch(t, nil, tc.args...)
			checkOneLine(t, r, tc.code, tc.want, tc.secret, "S3cret")
			if strings.Contains(strings.ToUpper(r.stderr), "S3CRET") {
				t.Errorf("stderr shows the secret in another case: %s", r.stderr)
			}
		})
	}
	t.Run("a variable name is shown", func(t *testing.T) {
		r := execKbatch(t, nil, append(sasl, "--sasl-password-env", "KAFKA_PASSWORD")...)
		checkOneLine(t, r, exitUsage, []string{"KAFKA_PASSWORD"})
	})
	t.Run("an existing file is named", func(t *testing.T) {
		empty := writeFile(t, dir, "empty.pw", "", 0o600)
		r := execKbatch(t, nil, append(sasl, "--sasl-password-file", empty)...)
		checkOneLine(t, r, exitUsage, []string{empty, "empty"})
		if strings.Contains(r.stderr, "warning") {
			t.Errorf("unexpected warning: %s", r.stderr)
		}
	})
}
