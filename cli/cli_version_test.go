package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	info := func(mainVersion string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/kbatch-dev/kbatch", Version: mainVersion}, Settings: s}
	}
	rev := "d678b5230dece34c29991cf15dd26c736750454d"
	cases := []struct {
		name                string
		ldVersion, ldCommit string
		info                *debug.BuildInfo
		want                string
	}{
		{"goreleaser sets both", "0.1.0", "d678b5230dece34c", info("(devel)", nil),
			"kbatch 0.1.0 (commit d678b5230dece34c, go1.26.8, linux/amd64)"},
		{"go install @v0.1.0: the module version, no vcs", "", "", info("v0.1.0", nil),
			"kbatch v0.1.0 (commit unknown, go1.26.8, linux/amd64)"},
		{"go install @commit: the pseudo-version's revision", "", "", info("v0.0.0-20261201192950-d678b5230dec", nil),
			"kbatch v0.0.0-20261201192950-d678b5230dec (commit d678b5230dec, go1.26.8, linux/amd64)"},
		{"pre-release pseudo-version", "", "", info("v0.1.1-0.20261201192950-d678b5230dec+dirty", nil),
			"kbatch v0.1.1-0.20261201192950-d678b5230dec+dirty (commit d678b5230dec, go1.26.8, linux/amd64)"},
		{"go build in a checkout: vcs settings", "", "", info("v0.0.0-20261201192950-d678b5230dec", settings("vcs.revision", rev, "vcs.modified", "false")),
			"kbatch v0.0.0-20261201192950-d678b5230dec (commit d678b5230dec, go1.26.8, linux/amd64)"},
		{"a modified checkout", "", "", info("(devel)", settings("vcs.revision", rev, "vcs.modified", "true")),
			"kbatch dev (commit d678b5230dec+dirty, go1.26.8, linux/amd64)"},
		{"make build without tags: ldflags commit, module (devel)", "", "d678b5230dec", info("(devel)", nil),
			"kbatch dev (commit d678b5230dec, go1.26.8, linux/amd64)"},
		{"a release tag that ends like a hash is no pseudo-version", "", "", info("v1.0.0-abcdefabcdef", nil),
			"kbatch v1.0.0-abcdefabcdef (commit unknown, go1.26.8, linux/amd64)"},
	}
	for _, c := range cases {
		if got := versionLine(c.ldVersion, c.ldCommit, c.info, "linux/amd64"); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	if got, want := versionLine("", "", nil, "linux/amd64"), "kbatch dev (commit unknown, "+runtime.Version()+", linux/amd64)"; got != want {
		t.Errorf("no build info: %s, want %s", got, want)
	}
}

// TestVersionFlagAndCommand: --version and the version command print the
// same line, with the version, the commit and the Go version.
func TestVersionFlagAndCommand(t *testing.T) {
	a := execKbatch(t, nil, "--version")
	b := execKbatch(t, nil, "version")
	if a.code != 0 || b.code != 0 || a.stderr != "" || b.stderr != "" {
		t.Fatalf("--version: exit %d %q; version: exit %d %q", a.code, a.stderr, b.code, b.stderr)
	}
	if a.stdout != b.stdout {
		t.Errorf("--version %q and version %q differ", a.stdout, b.stdout)
	}
	if !strings.HasPrefix(a.stdout, "kbatch ") || !strings.Contains(a.stdout, "(commit ") || !strings.Contains(a.stdout, runtime.Version()) ||
		strings.Count(a.stdout, "\n") != 1 {
		t.Errorf("version line %q", a.stdout)
	}
}

// TestNoBrokersAnywhere: a first run with no -b, no KBATCH_BROKERS and no
// config profile says in one line how to give brokers, suggests the demo,
// and exits 2 — for the TUI and headless alike.
func TestNoBrokersAnywhere(t *testing.T) {
	for _, args := range [][]string{nil, {"-t", "events"}, {"--no-tui"}, {"watch", "--no-tui", "-t", "events"}, {"topics"}} {
		r := execKbatch(t, nil, args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("kbatch %v: exit %d, stdout %q", args, r.code, r.stdout)
		}
		if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "-b host:port") ||
			!strings.Contains(r.stderr, "KBATCH_BROKERS") || !strings.Contains(r.stderr, "kbatch demo") {
			t.Errorf("kbatch %v: stderr %q", args, r.stderr)
		}
	}
}
