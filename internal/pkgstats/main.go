// Command pkgstats prints, for each package directory given, its non-test
// Go line count and its exported identifiers: top-level constants,
// variables, functions and types, and the exported methods (Type.Method).
// It reads the source with go/parser, so it needs no build: go run
// ./internal/pkgstats ./store ./store/claimsstore … (-names lists them).
//
// It exists for the closing notes of refactorings, which state what moved
// where with these figures before and after.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	names := flag.Bool("names", false, "list the exported identifiers")
	flag.Parse()
	fmt.Printf("%-32s %7s %8s\n", "package", "lines", "exported")
	for _, dir := range flag.Args() {
		lines, exported, err := stats(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%-32s %7d %8d\n", dir, lines, len(exported))
		if *names {
			fmt.Printf("    %s\n", strings.Join(exported, " "))
		}
	}
}

// stats returns the lines of dir's non-test .go files and its exported
// identifiers, sorted.
func stats(dir string) (int, []string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, nil, err
	}
	fset := token.NewFileSet()
	lines := 0
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return 0, nil, err
		}
		lines += strings.Count(string(src), "\n")
		af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return 0, nil, err
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					recv := receiver(d.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue
					}
					name = recv + "." + name
				}
				out = append(out, name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							out = append(out, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								out = append(out, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return lines, out, nil
}

// receiver returns the name of a method's receiver type.
func receiver(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
