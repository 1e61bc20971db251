package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakeFuzzTargetsExist: every PACKAGE:FuzzName in the Makefile's
// FUZZ_TARGETS names a fuzz target of that package, and every fuzz target
// of the repository is listed there (`make fuzz` runs them all, as
// CONTRIBUTING.md and SECURITY.md say). go test -fuzz with a pattern that
// matches nothing passes with a warning, so a renamed or moved target
// would silently drop out of `make fuzz` (FuzzAppendRecordJSON did when it
// moved from consumer/ to record/ as FuzzAppendJSON).
func TestMakeFuzzTargetsExist(t *testing.T) {
	t.Chdir("..") // the repository root
	mk := readFile(t, "Makefile")
	var targets []string
	for _, line := range strings.Split(string(mk), "\n") {
		if rest, ok := strings.CutPrefix(line, "FUZZ_TARGETS :="); ok {
			targets = append(targets, strings.Fields(rest)...)
		} else if rest, ok := strings.CutPrefix(line, "FUZZ_TARGETS +="); ok {
			targets = append(targets, strings.Fields(rest)...)
		}
	}
	if len(targets) == 0 {
		t.Fatal("no FUZZ_TARGETS in the Makefile")
	}
	for _, tg := range targets {
		pkg, name, ok := strings.Cut(tg, ":")
		if !ok {
			t.Errorf("FUZZ_TARGETS entry %q: want PACKAGE:FuzzName", tg)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(pkg, "*_test.go"))
		def := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(name) + `\(f \*testing\.F\)`)
		found := false
		for _, f := range files {
			src := readFile(t, f)
			if def.Match(src) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("FUZZ_TARGETS entry %q: no func %s(f *testing.F) in %s/*_test.go", tg, name, pkg)
		}
	}
	anyFuzz := regexp.MustCompile(`(?m)^func (Fuzz\w*)\(f \*testing\.F\)`)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range anyFuzz.FindAllSubmatch(src, -1) {
			want := filepath.ToSlash(filepath.Dir(path)) + ":" + string(m[1])
			if !slices.Contains(targets, want) {
				t.Errorf("%s: fuzz target %s is not in the Makefile's FUZZ_TARGETS (want %s)", path, m[1], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
