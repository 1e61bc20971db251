// Command startpages shows where the memory of a short kbatch command
// goes: it builds kbatch as make build does but with its symbol table,
// runs one command (by default `kbatch version`) with its standard output
// on a full pipe, so the process stops at its first write, after every
// package init and the command's work, and reads which of the binary's
// pages are resident (/proc/PID/pagemap), after a first run that reads
// them into the page cache. It prints the resident MiB of each section
// and, for the code, of each module (the standard library by top-level
// package), beside the module's code size. Linux only.
//
//	go run ./internal/startpages
//	go run ./internal/startpages -top 40 -- __complete watch -t ""
package main

import (
	"bufio"
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const pageSize = 4096

func main() {
	top := flag.Int("top", 25, "modules to list")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		args = []string{"version"}
	}
	if err := run(args, *top); err != nil {
		fmt.Fprintln(os.Stderr, "startpages:", err)
		os.Exit(1)
	}
}

func run(args []string, top int) error {
	dir, err := os.MkdirTemp("", "startpages-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "kbatch")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	if err := settle(bin, args); err != nil {
		return err
	}
	pages, anonKiB, err := residentPages(bin, args)
	if err != nil {
		return err
	}
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return err
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	modules := []string{info.Main.Path}
	for _, d := range info.Deps {
		modules = append(modules, d.Path)
	}
	module := func(sym string) string { return moduleOf(modules, packageOf(sym)) }
	fmt.Printf("kbatch %q: %.1f MiB of the binary resident, %.1f MiB anonymous\n",
		args, mib(len(pages)*pageSize), float64(anonKiB)/1024)
	counted := map[uint64]bool{}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size < pageSize {
			continue
		}
		n := 0
		for _, p := range pages {
			if p+pageSize > s.Addr && p < s.Addr+s.Size && !counted[p] {
				counted[p] = true
				n++
			}
		}
		fmt.Printf("  %-12s %6.1f of %6.1f MiB\n", s.Name, mib(n*pageSize), mib(int(s.Size)))
	}
	fmt.Printf("  %-12s %6.1f MiB\n", "the rest", mib((len(pages)-len(counted))*pageSize))
	text := f.Section(".text")
	resident, size := map[string]int{}, map[string]int{}
	var code []elf.Symbol
	for _, s := range syms {
		if s.Size > 0 && s.Value >= text.Addr && s.Value < text.Addr+text.Size {
			code = append(code, s)
			size[module(s.Name)] += int(s.Size)
		}
	}
	sort.Slice(code, func(i, j int) bool { return code[i].Value < code[j].Value })
	for _, p := range pages {
		i := sort.Search(len(code), func(i int) bool { return code[i].Value+code[i].Size > p })
		for ; i < len(code) && code[i].Value < p+pageSize; i++ {
			lo, hi := max(code[i].Value, p), min(code[i].Value+code[i].Size, p+pageSize)
			resident[module(code[i].Name)] += int(hi - lo)
		}
	}
	list("module", resident, size, top)
	owners, ownerSize := map[string]int{}, map[string]int{}
	for m, n := range resident {
		owners[owner(m)] += n
	}
	for m, n := range size {
		ownerSize[owner(m)] += n
	}
	list("owner (a module path's first two elements)", owners, ownerSize, top)
	return nil
}

// list prints the top entries of resident, largest first, beside size.
func list(by string, resident, size map[string]int, top int) {
	names := make([]string, 0, len(resident))
	for m := range resident {
		names = append(names, m)
	}
	sort.Slice(names, func(i, j int) bool { return resident[names[i]] > resident[names[j]] })
	fmt.Printf("resident code by %s (MiB resident of MiB of code):\n", by)
	for _, m := range names[:min(top, len(names))] {
		fmt.Printf("  %5.2f of %5.2f  %s\n", mib(resident[m]), mib(size[m]), m)
	}
}

// owner is a module path's first two elements (github.com/aws), or the
// standard library's package as it is.
func owner(module string) string {
	parts := strings.SplitN(module, "/", 3)
	return strings.Join(parts[:min(2, len(parts))], "/")
}

// packageOf is the import path of the package that defines sym, as far
// as its name tells.
func packageOf(sym string) string {
	for _, p := range []string{"type:", "go:itab.", "go:link."} {
		sym = strings.TrimPrefix(sym, p)
	}
	sym = strings.TrimLeft(sym, "*")
	// An itab names its type, then its interface; an instance of a
	// generic function its type arguments in brackets.
	sym, _, _ = strings.Cut(sym, ",")
	sym, _, _ = strings.Cut(sym, "[")
	slash := max(strings.LastIndex(sym, "/"), 0)
	if j := strings.Index(sym[slash:], "."); j >= 0 {
		return sym[:slash+j]
	}
	return sym
}

// moduleOf is the longest of modules that holds pkg, else pkg's first
// element (the standard library's top-level package).
func moduleOf(modules []string, pkg string) string {
	best := ""
	for _, m := range modules {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		best, _, _ = strings.Cut(pkg, "/")
	}
	return best
}

// settle puts bin's pages in the page cache as a binary installed long
// ago has them: it drops them (a file just written is cached in large
// folios, and a process maps up to 4 MiB more of it) and runs the command
// once, which reads them back in.
func settle(bin string, args []string) error {
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("dropping %s from the page cache: %w", bin, err)
	}
	return exec.Command(bin, args...).Run()
}

func mib(b int) float64 { return float64(b) / (1 << 20) }

// residentPages runs bin with args, its standard output a pipe filled to
// capacity, waits until the process blocks writing to it, and returns the
// addresses of the resident pages of bin's mappings and the anonymous
// memory's KiB.
func residentPages(bin string, args []string) ([]uint64, int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	if err := fill(w); err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	w.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	pid := cmd.Process.Pid
	if err := waitForWrite(pid); err != nil {
		return nil, 0, err
	}
	pages, err := mappedResident(pid, bin)
	if err != nil {
		return nil, 0, err
	}
	anon, err := rollup(pid, "Anonymous:")
	return pages, anon, err
}

// fill writes to w until the pipe is full, then makes it blocking again.
func fill(w *os.File) error {
	fd := int(w.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return err
	}
	buf := make([]byte, pageSize)
	for {
		if _, err := syscall.Write(fd, buf); err != nil {
			if errors.Is(err, syscall.EAGAIN) {
				break
			}
			return err
		}
	}
	return syscall.SetNonblock(fd, false)
}

// waitForWrite waits until a thread of pid is in write(2) on fd 1.
func waitForWrite(pid int) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err == nil && strings.HasPrefix(string(b), "1 0x1 ") {
				return nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("the command did not write to its standard output within 30 s")
}

// mappedResident lists the resident pages of pid's mappings of bin.
func mappedResident(pid int, bin string) ([]uint64, error) {
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer maps.Close()
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	var pages []uint64
	sc := bufio.NewScanner(maps)
	entry := make([]byte, 8)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != bin {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("maps line %q", sc.Text())
		}
		for p := a; p < b; p += pageSize {
			if _, err := pm.ReadAt(entry, int64(p/pageSize*8)); err != nil {
				return nil, err
			}
			if binary.LittleEndian.Uint64(entry)>>63 == 1 { // present
				pages = append(pages, p)
			}
		}
	}
	return pages, sc.Err()
}

// rollup is the KiB of one field of /proc/PID/smaps_rollup.
func rollup(pid int, field string) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in smaps_rollup", field)
}
