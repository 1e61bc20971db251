package cli

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mdLink matches inline markdown links and images: [text](target).
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocLinksResolve: every relative link in README.md, the top-level
// *.md files and docs/ (the generated reference included) names a file or
// folder of the repository, and a #fragment of a markdown file names one
// of its headings.
func TestDocLinksResolve(t *testing.T) {
	t.Chdir("..") // the repository root
	files, _ := filepath.Glob("*.md")
	more, _ := filepath.Glob(filepath.Join("docs", "*.md"))
	cli, _ := filepath.Glob(filepath.Join("docs", "cli", "*.md"))
	files = append(append(files, more...), cli...)
	if !slices.Contains(files, "README.md") || len(more) == 0 {
		t.Fatalf("found %v: run from the repository root", files)
	}
	checked := 0
	for _, f := range files {
		data := readFile(t, f)
		for _, m := range mdLink.FindAllStringSubmatch(stripCode(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			resolved := f
			if path != "" {
				resolved = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: link %s: %s does not exist", f, target, resolved)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(resolved, ".md") {
				if !slices.Contains(headingAnchors(t, resolved), frag) {
					t.Errorf("%s: link %s: %s has no heading #%s", f, target, resolved, frag)
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found")
	}
}

// stripCode drops fenced code blocks and inline code, where [x](y) is
// not a link.
func stripCode(s string) string {
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(stripFences(s), "")
}

// stripFences drops fenced code blocks.
func stripFences(s string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line)
		}
	}
	return b.String()
}

// headingAnchors lists the GitHub anchors of a markdown file's headings:
// lower case, spaces to '-', punctuation other than '-' and '_' dropped.
func headingAnchors(t *testing.T, path string) []string {
	t.Helper()
	data := readFile(t, path)
	var out []string
	for _, line := range strings.Split(stripFences(string(data)), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var a strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
				a.WriteRune(r)
			}
		}
		out = append(out, a.String())
	}
	return out
}

// TestReadmeStaysShort: the README sells and orients; details live in
// docs/. It stays under 15 KB.
func TestReadmeStaysShort(t *testing.T) {
	t.Chdir("..") // the repository root
	fi, err := os.Stat("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= 15*1024 {
		t.Errorf("README.md is %d bytes; keep it under 15 KB and move details to docs/", fi.Size())
	}
}

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

// TestPngTextFindsPicturesWithoutText: scripts/pngtext.go, which make
// screenshots runs on every picture, fails on a window freeze drew
// without glyphs (its font family not found) and passes a screen of text.
func TestPngTextFindsPicturesWithoutText(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := t.TempDir()
	write := func(name string, text bool) string {
		img := image.NewRGBA(image.Rect(0, 0, 200, 100))
		bg, fg := color.RGBA{0x17, 0x17, 0x17, 0xff}, color.RGBA{0xc4, 0xc4, 0xc4, 0xff}
		for y := 0; y < 100; y++ {
			for x := 0; x < 200; x++ {
				img.Set(x, y, bg)
				// Rows of "glyphs": 2-pixel strokes on every other cell.
				if text && y%10 < 7 && x%6 < 2 && (x/6+y/10)%3 != 0 {
					img.Set(x, y, fg)
				}
			}
		}
		// The window's corner controls, drawn with or without text.
		for y := 4; y < 8; y++ {
			for x := 4; x < 8; x++ {
				img.Set(x, y, color.RGBA{0xff, 0x5f, 0x57, 0xff})
			}
		}
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	withText, blank := write("text.png", true), write("blank.png", false)
	run := func(paths ...string) (string, error) {
		cmd := exec.Command("go", append([]string{"run", "scripts/pngtext.go"}, paths...)...)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(withText); err != nil {
		t.Fatalf("a picture of text was refused: %v\n%s", err, out)
	}
	out, err := run(withText, blank)
	if err == nil || !strings.Contains(out, "blank.png has no text drawn") || strings.Contains(out, "text.png has") {
		t.Fatalf("a picture without text passed (err %v):\n%s", err, out)
	}
}
