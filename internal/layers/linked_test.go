package layers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// notLinked are the packages (by import path, or a prefix ending in '/')
// the kbatch binary
// must not link. Every Tab of a shell completion starts kbatch again, and
// what is linked is mapped and initialised at each start:
//   - gRPC, OpenTelemetry and arrow-go: kbatch uses none of them; they
//     came with cloud SDKs (gocloud.dev, Google's API and storage clients,
//     Azure's storage SDK), which offsets/spark/objstore does without;
//   - cobra's document generator and its markdown and man renderers:
//     docs and man pages are written by internal/gendocs at build time;
//   - santhosh-tekuri/jsonschema compiles every JSON Schema draft's
//     meta-schemas in its init (1.7 MB and 21,000 allocations at every
//     start); schema/ checks JSON Schema values with a library that does
//     its work when a schema is compiled;
//   - hamba/avro and what it brings (json-iterator, modern-go/reflect2,
//     go-viper/mapstructure): reflect2's types embed reflect.Type and are
//     converted to interfaces, so their MethodByName turns off the
//     linker's dead-code elimination of methods (knownMethodLookups);
//     schema/avro is kbatch's Avro, and hamba/avro is a test oracle only.
var notLinked = []string{
	"google.golang.org/grpc",
	"go.opentelemetry.io/",
	"github.com/apache/arrow-go/",
	"gocloud.dev",
	"google.golang.org/api/",
	"cloud.google.com/go/storage",
	"github.com/Azure/azure-sdk-for-go/sdk/storage/",
	"github.com/spf13/cobra/doc",
	"github.com/cpuguy83/go-md2man/",
	"github.com/russross/blackfriday/",
	"github.com/santhosh-tekuri/jsonschema/",
	"github.com/hamba/avro/",
	"github.com/json-iterator/go",
	"github.com/modern-go/",
	"github.com/go-viper/mapstructure/",
}

// linkViolations lists the packages of deps (import paths) that notLinked
// names.
func linkViolations(deps []string) []string {
	var out []string
	for _, d := range deps {
		for _, p := range notLinked {
			// "a/b" names a/b and what is under it; "a/" also a/bc.
			if d == p || strings.HasPrefix(d, p+"/") || strings.HasSuffix(p, "/") && strings.HasPrefix(d, p) {
				out = append(out, fmt.Sprintf("the kbatch binary links %s (%s is not to be linked)", d, p))
			}
		}
	}
	sort.Strings(out)
	return out
}

// goCommand runs the go command with args in the module's root and
// returns what it printed; the test is skipped where there is no go
// command.
func goCommand(t *testing.T, args ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, args...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestBinaryLinksOnlyWhatItUses: the main package's dependencies, as the
// go command resolves them for a build, hold nothing of notLinked.
func TestBinaryLinksOnlyWhatItUses(t *testing.T) {
	out := goCommand(t, "list", "-deps", "-f", "{{.ImportPath}}", ".")
	deps := strings.Fields(out)
	if len(deps) < 100 || !strings.Contains(out, module+"/cli") {
		t.Fatalf("go list -deps named %d packages, without %s/cli: not kbatch's", len(deps), module)
	}
	for _, v := range linkViolations(deps) {
		t.Error(v)
	}
}

func TestLinkViolationsCatchEachKind(t *testing.T) {
	deps := []string{
		"fmt", "google.golang.org/grpc", "google.golang.org/grpc/credentials", "google.golang.org/grpcx",
		"go.opentelemetry.io/otel", "github.com/apache/arrow-go/v18/arrow", "gocloud.dev/blob",
		"github.com/spf13/cobra", "github.com/spf13/cobra/doc", "golang.org/x/oauth2/google",
		"github.com/hamba/avro/v2", "github.com/modern-go/reflect2", "github.com/kbatch-dev/kbatch/schema/avro",
	}
	want := []string{
		"the kbatch binary links github.com/apache/arrow-go/v18/arrow (github.com/apache/arrow-go/ is not to be linked)",
		"the kbatch binary links github.com/hamba/avro/v2 (github.com/hamba/avro/ is not to be linked)",
		"the kbatch binary links github.com/modern-go/reflect2 (github.com/modern-go/ is not to be linked)",
		"the kbatch binary links github.com/spf13/cobra/doc (github.com/spf13/cobra/doc is not to be linked)",
		"the kbatch binary links go.opentelemetry.io/otel (go.opentelemetry.io/ is not to be linked)",
		"the kbatch binary links gocloud.dev/blob (gocloud.dev is not to be linked)",
		"the kbatch binary links google.golang.org/grpc (google.golang.org/grpc is not to be linked)",
		"the kbatch binary links google.golang.org/grpc/credentials (google.golang.org/grpc is not to be linked)",
	}
	wantLines(t, "link violations", linkViolations(deps), want)
}

// linkerGraph builds kbatch as make build does and returns the linker's
// reachability graph (-ldflags=-dumpdep): one "from -> to" line per edge.
// It is skipped under -short: the link takes seconds.
func linkerGraph(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("links the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "kbatch"), ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var graph strings.Builder
	cmd.Stderr = &graph
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%.2000s", err, graph.String())
	}
	lines := strings.Split(graph.String(), "\n")
	if len(lines) < 1000 || !strings.Contains(graph.String(), module+"/cli.") {
		t.Fatalf("the linker's graph has %d lines, none of %s/cli: not kbatch's", len(lines), module)
	}
	return lines
}

// templateViolations lists the edges of graph by which kbatch's own code
// reaches text/template or the cobra setters that parse a template.
// text/template looks methods up by name, so wherever it is reachable
// the linker keeps every exported method of every type in an interface
// (some megabytes of kbatch); cobra prints usage, help and the version
// without it unless a template is set.
func templateViolations(graph []string) []string {
	var out []string
	for _, l := range graph {
		from, to, ok := strings.Cut(l, " -> ")
		if !ok || !strings.HasPrefix(from, module+"/") && !strings.HasPrefix(from, "main.") {
			continue
		}
		if strings.HasPrefix(to, "text/template.") || strings.HasPrefix(to, "html/template.") ||
			strings.HasPrefix(to, "github.com/spf13/cobra.(*Command).Set") && strings.Contains(to, "Template") {
			out = append(out, fmt.Sprintf("%s reaches %s", from, to))
		}
	}
	sort.Strings(out)
	return out
}

// knownMethodLookups are the packages whose reachable functions may look
// a method up by a name not known at build time (the linker marks them
// <ReflectMethod>). Any such function turns off the linker's dead-code
// elimination of methods: the linker then keeps every exported method of
// every type in an interface, with text/template and reflect's method
// iterators, some 7.5 MB (BENCHMARKS.md). The kbatch binary has none, so
// the list is empty and any function that looks methods up by name fails
// TestBinaryKeepsNoTemplateOrNewMethodLookup.
var knownMethodLookups []string

// methodLookupViolations lists the functions of graph marked
// <ReflectMethod> outside knownMethodLookups.
func methodLookupViolations(graph []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range graph {
		for _, side := range strings.Split(l, " -> ") {
			fn, ok := strings.CutSuffix(strings.TrimSpace(side), " <ReflectMethod>")
			if !ok || seen[fn] || slices.ContainsFunc(knownMethodLookups, func(p string) bool { return strings.HasPrefix(fn, p) }) {
				continue
			}
			seen[fn] = true
			out = append(out, fn+" looks methods up by a name not known at build time")
		}
	}
	sort.Strings(out)
	return out
}

// TestBinaryKeepsNoTemplateOrNewMethodLookup: in the linker's graph of
// the kbatch binary, kbatch's code reaches no template, and no function
// beyond knownMethodLookups looks methods up by name.
func TestBinaryKeepsNoTemplateOrNewMethodLookup(t *testing.T) {
	graph := linkerGraph(t)
	for _, v := range templateViolations(graph) {
		t.Error(v)
	}
	for _, v := range methodLookupViolations(graph) {
		t.Error(v)
	}
}

func TestGraphViolationsCatchEachKind(t *testing.T) {
	graph := []string{
		module + "/cli.newRoot -> github.com/spf13/cobra.(*Command).SetVersionTemplate",
		module + "/cli.newRoot -> github.com/spf13/cobra.(*Command).SetFlagErrorFunc",
		module + "/tui.render -> text/template.(*Template).Execute",
		"github.com/spf13/cobra.(*Command).SetUsageTemplate.tmpl.func1 -> text/template.New",
		"github.com/modern-go/reflect2.safeType.MethodByName <ReflectMethod> -> reflect.(*rtype).MethodByName",
		"text/template.(*state).evalField <ReflectMethod> -> reflect.Value.Method",
		"example.com/lib.Call -> example.com/lib.lookup <ReflectMethod>",
		"example.com/lib.lookup <ReflectMethod> -> reflect.Value.MethodByName",
	}
	wantLines(t, "template violations", templateViolations(graph), []string{
		module + "/cli.newRoot reaches github.com/spf13/cobra.(*Command).SetVersionTemplate",
		module + "/tui.render reaches text/template.(*Template).Execute",
	})
	wantLines(t, "method lookup violations", methodLookupViolations(graph), []string{
		"example.com/lib.lookup looks methods up by a name not known at build time",
		"github.com/modern-go/reflect2.safeType.MethodByName looks methods up by a name not known at build time",
		"text/template.(*state).evalField looks methods up by a name not known at build time",
	})
}
