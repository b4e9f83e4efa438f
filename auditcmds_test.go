package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// The audit trail's script commands, registered here so that the list in
// main_test.go stays as it is.
func init() {
	scriptCmds["edit-line"] = cmdEditLine
	scriptCmds["audit-answered"] = cmdAuditAnswered
}

// cmdEditLine: edit-line FILE N OP — changes line N (from 1) of FILE, as
// someone tampering with an audit trail would: "delete"; "swap" (with line
// N+1); "replace OLD NEW" (the first OLD in it); "cut BYTES" (it keeps its
// first BYTES bytes and no newline, and the lines after it go: a write cut
// short by a crash).
func cmdEditLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: edit-line FILE N delete|swap|replace OLD NEW|cut BYTES")
	}
	file := ts.MkAbs(args[0])
	lines := strings.SplitAfter(ts.ReadFile(args[0]), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 || n > len(lines) {
		ts.Fatalf("edit-line: line %s: %s has %d lines", args[1], args[0], len(lines))
	}
	i := n - 1
	switch op := args[2]; {
	case op == "delete" && len(args) == 3:
		lines = slices.Delete(lines, i, i+1)
	case op == "swap" && len(args) == 3 && n < len(lines):
		lines[i], lines[i+1] = lines[i+1], lines[i]
	case op == "replace" && len(args) == 5:
		if !strings.Contains(lines[i], args[3]) {
			ts.Fatalf("edit-line: line %d has no %q", n, args[3])
		}
		lines[i] = strings.Replace(lines[i], args[3], args[4], 1)
	case op == "cut" && len(args) == 4:
		keep, err := strconv.Atoi(args[3])
		ts.Check(err)
		lines = append(lines[:i], lines[i][:keep])
	default:
		ts.Fatalf("usage: edit-line FILE N delete|swap|replace OLD NEW|cut BYTES")
	}
	ts.Check(os.WriteFile(file, []byte(strings.Join(lines, "")), 0o600))
}

// cmdAuditAnswered: audit-answered ANSWERS AUDIT... — succeeds if every
// answer in ANSWERS (JSON-RPC responses, one per line, as mcpclient prints
// them) has the record of its request, by id, in the AUDIT files (glob
// patterns), and prints how many answers there were.
func cmdAuditAnswered(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: audit-answered ANSWERS AUDIT...")
	}
	recorded := map[string]bool{}
	var files []string
	for _, pattern := range args[1:] {
		matches, err := filepath.Glob(ts.MkAbs(pattern))
		ts.Check(err)
		if len(matches) == 0 {
			ts.Fatalf("audit-answered: no file %s", pattern)
		}
		files = append(files, matches...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		ts.Check(err)
		for line := range strings.Lines(string(b)) {
			var r struct {
				Method string          `json:"method"`
				ID     json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Method != "" {
				recorded[string(r.ID)] = true
			}
		}
	}
	answers, missing := 0, []string{}
	for line := range strings.Lines(ts.ReadFile(args[0])) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.ID == nil || (m.Result == nil && m.Error == nil) {
			continue
		}
		answers++
		if !recorded[string(m.ID)] {
			missing = append(missing, string(m.ID))
		}
	}
	if len(missing) > 0 {
		ts.Fatalf("%d of %d answered requests have no record in the trail: %s", len(missing), answers, strings.Join(missing, " "))
	}
	fmt.Fprintf(ts.Stdout(), "%d answered requests, each with its record\n", answers)
}
