package layers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
//     its work when a schema is compiled.
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
	}
	want := []string{
		"the kbatch binary links github.com/apache/arrow-go/v18/arrow (github.com/apache/arrow-go/ is not to be linked)",
		"the kbatch binary links github.com/spf13/cobra/doc (github.com/spf13/cobra/doc is not to be linked)",
		"the kbatch binary links go.opentelemetry.io/otel (go.opentelemetry.io/ is not to be linked)",
		"the kbatch binary links gocloud.dev/blob (gocloud.dev is not to be linked)",
		"the kbatch binary links google.golang.org/grpc (google.golang.org/grpc is not to be linked)",
		"the kbatch binary links google.golang.org/grpc/credentials (google.golang.org/grpc is not to be linked)",
	}
	wantLines(t, "link violations", linkViolations(deps), want)
}
