package cli

import (
	"os"
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
