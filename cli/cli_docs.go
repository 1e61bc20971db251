package cli

import "github.com/spf13/cobra"

// CommandTree returns kbatch's command tree, as the binary runs it, for
// internal/gendocs: the command reference (docs/cli), the man pages and
// the completion scripts are generated from it at build time, so they
// cannot drift from --help, and the generator is not in the binary.
func CommandTree() *cobra.Command { return newRootCommandFor(&globalOptions{}) }

// DisplayVersion is the version kbatch reports ("dev" outside a release
// or a go install of a version), for a man page's header.
func DisplayVersion() string { return displayVersion() }
