package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPath is $XDG_CONFIG_HOME/kbatch/config.toml, else
// ~/.config/kbatch/config.toml; "" when neither can be found.
func DefaultPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "kbatch", "config.toml")
}

// maxConfigSize bounds the configuration file.
const maxConfigSize = 1 << 20

// Load reads and parses the file at path. A missing file is an empty
// configuration unless explicit (it was named with --config or
// KBATCH_CONFIG), when it is an error. File names in it starting with "~/"
// are expanded; a file holding a SASL password that other users can read
// gets a warning in File.Warnings. Every error is an *Error.
func Load(path string, explicit bool) (*File, error) {
	if path == "" {
		return &File{Clusters: map[string]Connection{}}, nil
	}
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return &File{Clusters: map[string]Connection{}, missing: path}, nil
	}
	if err != nil {
		return nil, &Error{Path: path, Msg: describeOSError(err).Error(), Err: err}
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, &Error{Path: path, Msg: "cannot be read: " + describeOSError(err).Error(), Err: err}
	}
	if info.IsDir() {
		return nil, &Error{Path: path, Msg: "is a folder, not a file"}
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxConfigSize+1))
	if err != nil {
		return nil, &Error{Path: path, Msg: "cannot be read: " + describeOSError(err).Error(), Err: err}
	}
	if len(data) > maxConfigSize {
		return nil, &Error{Path: path, Msg: "is larger than 1 MiB; is it the right file?"}
	}
	f, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	if home, err := os.UserHomeDir(); err == nil {
		f.expandHome(home)
	}
	if f.hasSecret && info.Mode().Perm()&0o077 != 0 {
		f.Warnings = append(f.Warnings, fmt.Sprintf("config %s holds a SASL password and can be read by other users (mode %04o); run chmod 600 %s",
			path, info.Mode().Perm(), path))
	}
	return f, nil
}

// expandHome replaces a leading "~/" in every file name with home.
func (f *File) expandHome(home string) {
	exp := func(p *string) {
		if strings.HasPrefix(*p, "~/") {
			*p = filepath.Join(home, (*p)[2:])
		}
	}
	exp(&f.Store.Path)
	for name, c := range f.Clusters {
		exp(&c.TLS.CAFile)
		exp(&c.TLS.CertFile)
		exp(&c.TLS.KeyFile)
		exp(&c.SASL.PasswordFile)
		exp(&c.TLS.KeyPassword.File)
		exp(&c.SASL.OAuth.Token.File)
		exp(&c.SASL.OAuth.ClientSecret.File)
		exp(&c.SASL.OAuth.TokenEndpointCA)
		exp(&c.SASL.Kerberos.Config)
		exp(&c.SASL.Kerberos.Keytab)
		exp(&c.SASL.Kerberos.CCache)
		f.Clusters[name] = c
	}
}
