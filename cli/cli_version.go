package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version and commit are set at build time by the Makefile and goreleaser
// (-ldflags "-X github.com/kbatch-dev/kbatch/cli.version=...
// -X github.com/kbatch-dev/kbatch/cli.commit=..."). When they are empty,
// versionLine falls back to what the Go toolchain recorded in the binary,
// so `go install github.com/kbatch-dev/kbatch@v0.1.0` reports v0.1.0.
var (
	version string
	commit  string
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kbatch's version, commit and Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), currentVersionLine())
		},
	}
}

// currentVersionLine is versionLine of this binary.
func currentVersionLine() string {
	info, _ := debug.ReadBuildInfo()
	return versionLine(version, commit, info, runtime.GOOS+"/"+runtime.GOARCH)
}

// versionLine is the one line of `kbatch version` and `kbatch --version`:
//
//	kbatch 0.1.0 (commit 3f2c1a9e0b7d, go1.26.8, linux/amd64)
//
// The version is ldVersion when the build set it, else the main module's
// version from info (v0.1.0 for `go install ...@v0.1.0`; a pseudo-version
// such as v0.0.0-20261201193000-3f2c1a9e0b7d for a build inside a git
// checkout), else "dev". The commit is ldCommit, else info's vcs.revision
// (cut to 12 hex digits, "+dirty" when vcs.modified), else the revision a
// pseudo-version ends in, else "unknown". info may be nil.
func versionLine(ldVersion, ldCommit string, info *debug.BuildInfo, platform string) string {
	ver, rev, goVer := ldVersion, ldCommit, runtime.Version()
	if info != nil {
		goVer = info.GoVersion
		if ver == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			ver = info.Main.Version
		}
		if rev == "" {
			var modified bool
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" && modified {
				rev += "+dirty"
			}
		}
		if rev == "" {
			rev = pseudoVersionRevision(info.Main.Version)
		}
	}
	if ver == "" {
		ver = "dev"
	}
	if rev == "" {
		rev = "unknown"
	}
	return fmt.Sprintf("kbatch %s (commit %s, %s, %s)", ver, rev, goVer, platform)
}

// displayVersion is the version part of currentVersionLine.
func displayVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// pseudoVersionRevision is the 12-digit revision that ends a Go
// pseudo-version (vX.Y.Z-yyyymmddhhmmss-abcdefabcdef, maybe +incompatible
// or +dirty), or "" for a release version.
func pseudoVersionRevision(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	rev := v[i+1:]
	if strings.Trim(rev, "0123456789abcdef") != "" {
		return ""
	}
	// The segment before the revision is a 14-digit timestamp.
	rest := v[:i]
	j := strings.LastIndexAny(rest, "-.")
	if j < 0 || len(rest)-j-1 != 14 || strings.Trim(rest[j+1:], "0123456789") != "" {
		return ""
	}
	return rev
}
