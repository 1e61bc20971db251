package atomicfile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// notThroughAtomicfile names, by file (relative to the module root), the
// product code that may write a file with its own calls, and why.
var notThroughAtomicfile = map[string]string{
	// A private copy of a store that another process holds, in the OS
	// temporary folder, opened read-only and removed when closed: no one
	// reads it after kbatch, so a crash needs no complete file.
	"offsets/store_snapshot.go": "private copy",
}

// fileCalls are the calls that put a file under a name: outside the
// files above, only this package makes them.
var fileCalls = map[string]bool{"Rename": true, "CreateTemp": true, "WriteFile": true, "Link": true, "Create": true}

// TestEveryFileKbatchWritesGoesThroughAtomicfile fails when product code
// (not tests, not the tools under internal/) calls os.Rename,
// os.CreateTemp, os.WriteFile, os.Link or os.Create itself.
func TestEveryFileKbatchWritesGoesThroughAtomicfile(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || rel == "internal" || rel == "atomicfile") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || notThroughAtomicfile[rel] != "" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		osName := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"os"` {
				osName = "os"
				if imp.Name != nil {
					osName = imp.Name.Name
				}
			}
		}
		if osName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == osName && fileCalls[sel.Sel.Name] {
				t.Errorf("%s: os.%s: write files through atomicfile (or say why not in notThroughAtomicfile)", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
