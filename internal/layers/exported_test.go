package layers

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
)

// libraryPath reports whether a package path is an outside library's:
// neither the standard library (no dot in its first element) nor
// kbatch's own.
func libraryPath(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return strings.Contains(first, ".") && path != module && !strings.HasPrefix(path, module+"/")
}

// leaks lists the exported identifiers of pkg whose types name an outside
// library's type: the types of exported vars and consts, the parameters
// and results of exported funcs, and, for an exported type, its
// underlying type (exported fields and interface methods) and its
// exported methods. A type of pkg's own met on the way is looked into the
// same way, once.
func leaks(pkg *types.Package) []string {
	var out []string
	seen := map[*types.TypeName]bool{}
	var walk func(where string, t types.Type)
	walkNamed := func(where string, n *types.Named) {
		obj := n.Obj()
		if obj.Pkg() == nil {
			return
		}
		if libraryPath(obj.Pkg().Path()) {
			out = append(out, fmt.Sprintf("%s carries %s.%s", where, obj.Pkg().Path(), obj.Name()))
			return
		}
		for i := 0; i < n.TypeArgs().Len(); i++ {
			walk(where, n.TypeArgs().At(i))
		}
		if obj.Pkg() != pkg || seen[obj] {
			return
		}
		seen[obj] = true
		walk(obj.Name(), n.Underlying())
		for i := 0; i < n.NumMethods(); i++ {
			if m := n.Method(i); m.Exported() {
				walk(obj.Name()+"."+m.Name(), m.Type())
			}
		}
	}
	walk = func(where string, t types.Type) {
		switch t := types.Unalias(t).(type) {
		case *types.Named:
			walkNamed(where, t)
		case *types.Pointer:
			walk(where, t.Elem())
		case *types.Slice:
			walk(where, t.Elem())
		case *types.Array:
			walk(where, t.Elem())
		case *types.Chan:
			walk(where, t.Elem())
		case *types.Map:
			walk(where, t.Key())
			walk(where, t.Elem())
		case *types.Signature:
			for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
				for i := 0; i < tup.Len(); i++ {
					walk(where, tup.At(i).Type())
				}
			}
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				if f := t.Field(i); f.Exported() || f.Embedded() {
					walk(where+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := 0; i < t.NumEmbeddeds(); i++ {
				walk(where, t.EmbeddedType(i))
			}
			for i := 0; i < t.NumExplicitMethods(); i++ {
				if m := t.ExplicitMethod(i); m.Exported() {
					walk(where+"."+m.Name(), m.Type())
				}
			}
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		if tn, ok := obj.(*types.TypeName); ok {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok && n.Obj() == tn {
				walkNamed(name, n)
				continue
			}
		}
		walk(name, obj.Type())
	}
	sort.Strings(out)
	return out
}

// typeCheck loads the compiled package path of the module (with the
// export data the go command builds) and returns its types.
func typeCheck(t *testing.T, path string) *types.Package {
	t.Helper()
	out := goCommand(t, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", path)
	export := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if p, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			export[p] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(p string) (io.ReadCloser, error) {
		file, ok := export[p]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(file)
	})
	pkg, err := imp.Import(path)
	if err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	return pkg
}

// TestKafkaExportsNoLibraryType: package kafka is the one door to the
// client libraries (docs/design.md §5), so what it exports is kbatch's own
// types and the standard library's; a sarama or franz-go type in its API
// would make every caller depend on that library.
func TestKafkaExportsNoLibraryType(t *testing.T) {
	pkg := typeCheck(t, module+"/kafka")
	if pkg.Scope().Lookup("Client") == nil {
		t.Fatalf("package %s has no Client: not kbatch's kafka package", pkg.Path())
	}
	for _, l := range leaks(pkg) {
		t.Error(l)
	}
}

// TestLeaksCatchEachKind runs the check on a made-up package over a
// made-up library: each way a library type can leave is found, and what
// stays inside is not.
func TestLeaksCatchEachKind(t *testing.T) {
	fset := token.NewFileSet()
	check := func(path, src string, imp types.Importer) *types.Package {
		f, err := parser.ParseFile(fset, path+".go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pkg
	}
	lib := check("example.com/lib", `package lib
type Config struct{}
type Token struct{}
type Version int`, nil)
	pkg := check(module+"/kafka", `package kafka
import (
	"time"
	"example.com/lib"
)
var DefaultVersion = lib.Version(1)
const Name = "kafka"
var Timeout time.Duration
func Dial(c *lib.Config) error { return nil }
func Build() (map[string][]lib.Token, error) { return nil, nil }
func dial(c *lib.Config) {}
type SASL struct {
	Provider func() *lib.Token
	token    lib.Token
}
type Client struct{ c *lib.Config }
func (c *Client) Config() *lib.Config { return c.c }
func (c *Client) config() *lib.Config { return c.c }
type Options struct{ inner inner }
type inner struct{ C lib.Config }
type Versions []lib.Version
type Provider interface{ Token() (lib.Token, error) }
type Alias = lib.Config
type Fine struct{ D time.Duration; S *SASL }`, importerFunc(func(string) (*types.Package, error) { return lib, nil }))
	want := []string{
		"Alias carries example.com/lib.Config",
		"Build carries example.com/lib.Token",
		"Client.Config carries example.com/lib.Config",
		"DefaultVersion carries example.com/lib.Version",
		"Dial carries example.com/lib.Config",
		"Provider.Token carries example.com/lib.Token",
		"SASL.Provider carries example.com/lib.Token",
		"Versions carries example.com/lib.Version",
	}
	wantLines(t, "leaks", leaks(pkg), want)
}

// importerFunc gives the made-up library to the made-up package, and the
// standard library's packages from source.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) {
	if path == "example.com/lib" {
		return f(path)
	}
	return importer.ForCompiler(token.NewFileSet(), "source", nil).Import(path)
}
