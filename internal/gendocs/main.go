// Command gendocs writes kbatch's command reference (markdown, docs/cli),
// man pages (section 1) and shell completion scripts, all from the command
// tree of package cli, so they cannot drift from --help. It runs at build
// time (make docs, make man, the release's before hook); the kbatch binary
// does not carry the generator.
//
//	go run ./internal/gendocs [--markdown DIR] [--man DIR] [--completions DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/kbatch-dev/kbatch/cli"
)

func main() {
	fs := flag.NewFlagSet("gendocs", flag.ContinueOnError)
	markdown := fs.String("markdown", "", "write one markdown page per command into `DIR`")
	man := fs.String("man", "", "write man pages (section 1) into `DIR`")
	completions := fs.String("completions", "", "write kbatch.bash, kbatch.zsh and kbatch.fish into `DIR`")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := run(*markdown, *man, *completions, fs.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(2)
	}
}

// run writes what the non-empty folders ask for; at least one must be
// given, and no argument.
func run(markdown, man, completions string, args []string) error {
	if len(args) > 0 || markdown == "" && man == "" && completions == "" {
		return fmt.Errorf("pass --markdown DIR, --man DIR or --completions DIR, and nothing else")
	}
	if markdown != "" {
		if err := genMarkdown(cli.CommandTree(), markdown); err != nil {
			return err
		}
	}
	if man != "" {
		if err := genMan(cli.CommandTree(), man); err != nil {
			return err
		}
	}
	if completions != "" {
		return genCompletions(cli.CommandTree(), completions)
	}
	return nil
}

// docTree prepares root for generated documents: no date stamp (so the
// output is reproducible), and the --version flag and the completion and
// help commands that cobra otherwise adds only when it runs.
func docTree(root *cobra.Command) {
	root.DisableAutoGenTag = true
	root.InitDefaultVersionFlag()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
}

func genMarkdown(root *cobra.Command, dir string) error {
	docTree(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return doc.GenMarkdownTree(root, dir)
}

func genMan(root *cobra.Command, dir string) error {
	docTree(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return doc.GenManTree(root, &doc.GenManHeader{
		Title:   "KBATCH",
		Section: "1",
		Source:  "kbatch " + cli.DisplayVersion(),
		Manual:  "kbatch manual",
	}, dir)
}

func genCompletions(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, gen := range map[string]func(*os.File) error{
		"kbatch.bash": func(f *os.File) error { return root.GenBashCompletionV2(f, true) },
		"kbatch.zsh":  func(f *os.File) error { return root.GenZshCompletion(f) },
		"kbatch.fish": func(f *os.File) error { return root.GenFishCompletion(f, true) },
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = gen(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
