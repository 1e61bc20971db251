package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kbatch-dev/kbatch/cli"
)

// TestCLIReferenceIsCurrent: docs/cli holds exactly what gendocs writes
// for today's command tree; a changed flag or help text without `make
// docs` fails here.
func TestCLIReferenceIsCurrent(t *testing.T) {
	t.Chdir(filepath.Join("..", "..")) // the repository root
	dir := t.TempDir()
	if err := genMarkdown(cli.CommandTree(), dir); err != nil {
		t.Fatal(err)
	}
	want := readDir(t, dir)
	have := readDir(t, filepath.Join("docs", "cli"))
	for name, w := range want {
		h, ok := have[name]
		switch {
		case !ok:
			t.Errorf("docs/cli/%s is missing: run make docs", name)
		case !bytes.Equal(h, w):
			t.Errorf("docs/cli/%s is stale: run make docs", name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/cli/%s documents no command: run make docs", name)
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}

// TestGenDocsWritesManPagesAndCompletions: make man and the release
// archives get a page per command and the three completion scripts.
func TestGenDocsWritesManPagesAndCompletions(t *testing.T) {
	dir := t.TempDir()
	if err := run("", filepath.Join(dir, "man"), filepath.Join(dir, "completions"), nil); err != nil {
		t.Fatalf("gendocs: %v", err)
	}
	for _, name := range []string{"man/kbatch.1", "man/kbatch-watch.1", "man/kbatch-replay.1", "man/kbatch-offsets-set.1",
		"completions/kbatch.bash", "completions/kbatch.zsh", "completions/kbatch.fish"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(data) == 0 {
			t.Errorf("%s: %v (%d bytes)", name, err, len(data))
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "man", "kbatch-replay.1")); !bytes.Contains(data, []byte("TOPIC:PARTITIONS:FROM-UNTIL")) {
		t.Errorf("kbatch-replay.1 lacks replay's help")
	}
	if err := run("", "", "", nil); err == nil {
		t.Error("gendocs without a folder: no error")
	}
	if err := run(dir, "", "", []string{"extra"}); err == nil {
		t.Error("gendocs with an argument: no error")
	}
}
