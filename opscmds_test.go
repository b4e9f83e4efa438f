package main

import (
	"io"
	"net/http"
	"regexp"

	"github.com/rogpeppe/go-internal/testscript"
)

// Registered here rather than in main_test.go's table, so that the
// operations scripts' commands stay beside each other.
func init() {
	scriptCmds["waitbody"] = cmdWaitBody
}

// cmdWaitBody: waitbody URL REGEXP... — waits (up to 20s) for a GET of URL
// to answer 200 with a body that matches every REGEXP (multi-line mode: ^
// and $ match at line breaks), e.g. a gauge on a metrics page reaching a
// value. On timeout it shows the last body.
func cmdWaitBody(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: waitbody URL REGEXP...")
	}
	var res []*regexp.Regexp
	for _, a := range args[1:] {
		re, err := regexp.Compile("(?m)" + a)
		ts.Check(err)
		res = append(res, re)
	}
	last := ""
	ok := func() bool {
		resp, err := http.Get(args[0])
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		last = string(body)
		if resp.StatusCode != http.StatusOK {
			return false
		}
		for _, re := range res {
			if !re.Match(body) {
				return false
			}
		}
		return true
	}
	defer func() {
		if r := recover(); r != nil {
			ts.Logf("last body of %s:\n%s", args[0], last)
			panic(r)
		}
	}()
	waitFor(ts, args[0]+" to match", ok)
}
