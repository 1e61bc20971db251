// Package config reads kbatch's TOML configuration file (cluster profiles
// with TLS and SASL, [watch] and [store] defaults), merges connection
// settings by precedence (flags, then environment, then the file), builds
// the TLS configuration and finds SASL passwords.
//
// Parsing is strict: a key kbatch does not know, a value of the wrong type
// or a bad value is an *Error that names the file, the line and the key.
// Secrets are held in Secret, which never prints, and no error message of
// this package contains one.
//
// Parse and Merge are pure; Load reads the file and checks its
// permissions; PromptPassword talks to the terminal.
package config
