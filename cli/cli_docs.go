package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newGenDocsCommand is the hidden "kbatch gen-docs": the markdown command
// reference (docs/cli/, checked by TestCLIReferenceIsCurrent), man pages
// (make man) and shell completion scripts (the release archives), all
// generated from root's command tree, so they cannot drift from --help.
func newGenDocsCommand(root *cobra.Command) *cobra.Command {
	var markdown, man, completions string
	cmd := &cobra.Command{
		Use:    "gen-docs [--markdown DIR] [--man DIR] [--completions DIR]",
		Short:  "Write the command reference, man pages and completion scripts",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if markdown == "" && man == "" && completions == "" {
				return usagef("gen-docs: pass --markdown DIR, --man DIR or --completions DIR")
			}
			if markdown != "" {
				if err := genMarkdown(root, markdown); err != nil {
					return err
				}
			}
			if man != "" {
				if err := genMan(root, man); err != nil {
					return err
				}
			}
			if completions != "" {
				return genCompletions(root, completions)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&markdown, "markdown", "", "write one markdown page per command into DIR")
	f.StringVar(&man, "man", "", "write man pages (section 1) into DIR")
	f.StringVar(&completions, "completions", "", "write kbatch.bash, kbatch.zsh and kbatch.fish into DIR")
	return cmd
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
		Source:  "kbatch " + displayVersion(),
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
