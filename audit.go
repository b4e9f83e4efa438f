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
rotated series in any order (mcpgate-audit*.jsonl). The files of several
replicas (each writes its own chain, its name in every file's header) may
be given together: each chain is checked on its own. Prints the count of
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
		var chains []auditchain.Chain
		if chains, err = auditchain.VerifyChains(files); err == nil {
			printChains(stdout, chains)
			return 0
		}
	}
	fmt.Fprintln(stderr, "mcpgate audit verify:", err)
	return 1
}

// printChains prints one chain as printReport does, and several each
// under its replica's name, then their sum.
func printChains(w io.Writer, chains []auditchain.Chain) {
	if len(chains) == 1 && chains[0].Replica == "" {
		printReport(w, chains[0].Report)
		return
	}
	records, files := 0, 0
	for _, c := range chains {
		name := c.Replica
		if name == "" {
			name = "(none named)"
		}
		fmt.Fprintf(w, "replica %s:\n", name)
		printReport(w, c.Report)
		records += c.Records
		files += len(c.Files)
	}
	fmt.Fprintf(w, "verified: %d chains, %d records in %d files\n", len(chains), records, files)
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
