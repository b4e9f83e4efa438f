package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgate/mcpgate/internal/auditchain"
)

const auditUsage = `Usage: mcpgate audit verify FILE...

Checks that the audit files hold one unbroken hash chain: one file, or a
rotated series in any order (mcpgate-audit*.jsonl). Prints the count of
records verified, or the first line that is broken or missing, by file
and line number, and exits 1. A FILE with * ? or [ in it that names no
file is expanded, for shells that do not.
`

func runAudit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprint(stderr, auditUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("mcpgate audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, auditUsage) }
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	files, err := expandFiles(fs.Args())
	if err == nil {
		var rep *auditchain.Report
		if rep, err = auditchain.Verify(files); err == nil {
			printReport(stdout, rep)
			return 0
		}
	}
	fmt.Fprintln(stderr, "mcpgate audit verify:", err)
	return 1
}

func printReport(w io.Writer, rep *auditchain.Report) {
	for _, n := range rep.Notes {
		fmt.Fprintln(w, n)
	}
	for i, f := range rep.Files {
		fmt.Fprintf(w, "%s: %d records", f.Name, f.Records)
		switch {
		case i > 0:
		case f.Genesis:
			fmt.Fprint(w, ", from the start of the chain")
		case f.Continues != "":
			fmt.Fprintf(w, ", continuing %s (not given)", f.Continues)
		default:
			fmt.Fprint(w, ", continuing a file not given")
		}
		fmt.Fprintln(w)
	}
	files := "files"
	if len(rep.Files) == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "verified: %d records in %d %s; last hash %s\n", rep.Records, len(rep.Files), files, rep.LastHash)
}

// expandFiles expands the arguments that are glob patterns naming no file
// (shells on Windows do not), and drops repeats.
func expandFiles(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		names := []string{a}
		if _, err := os.Lstat(a); err != nil && strings.ContainsAny(a, "*?[") {
			matches, err := filepath.Glob(a)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", a, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%s: no file matches", a)
			}
			names = matches
		}
		for _, n := range names {
			if !seen[filepath.Clean(n)] {
				seen[filepath.Clean(n)] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}
