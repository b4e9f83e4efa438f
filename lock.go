package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/mcpgate/mcpgate/internal/pin"
)

// runLock pins the servers' tool and prompt definitions (see package pin):
// it writes the lock file when there is none, or with -update; -diff shows
// what changed since. Without -update an existing lock is only compared:
// accepting a changed definition is a decision the operator makes after
// reading the diff.
func runLock(args []string, stdout, stderr io.Writer) int {
	fs, c := newFlagSet("mcpgate lock [flags]", "Connects to every server, lists its tools and prompts, and pins their definitions\nin mcpgate.lock beside the config (or where \"pin\": {\"lock\": ...} says).\nWith a lock already there, it says whether the definitions still match it.", stderr)
	diff := fs.Bool("diff", false, "show, per changed definition, which fields changed and how")
	update := fs.Bool("update", false, "accept the current definitions: write them to the lock")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	g, cfg, _, ok := setup(c, stderr, true)
	if !ok {
		return 1
	}
	g.Start()
	<-g.Ready()
	defer g.Close()
	defs, errs := g.Definitions(context.Background())
	for _, err := range errs {
		fmt.Fprintln(stderr, "mcpgate lock:", err)
	}
	now := pin.New()
	for _, d := range defs {
		e, err := pin.Pin(d.Server, d.Kind, d.Raw)
		if err != nil {
			fmt.Fprintf(stderr, "mcpgate lock: server %q: %v\n", d.Server, err)
			continue
		}
		now.Add(e)
	}
	old, err := pin.Read(cfg.LockPath)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(stderr, "mcpgate lock:", err)
		return 1
	}
	if len(errs) > 0 {
		// A server that did not answer keeps what the lock had for it:
		// its definitions are neither accepted nor forgotten.
		for _, e := range old.Entries() {
			if !now.HasServer(e.Server) {
				now.Add(e)
			}
		}
	}
	changes := compare(old, now)
	if *diff || (exists && !*update) {
		for _, ch := range changes {
			fmt.Fprintln(stdout, ch.summary())
			if *diff && ch.was != nil && ch.now != nil {
				fmt.Fprint(stdout, pin.Diff(*ch.was, *ch.now))
			}
		}
	}
	switch {
	case !exists || *update:
		if err := now.Write(cfg.LockPath); err != nil {
			fmt.Fprintln(stderr, "mcpgate lock:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: %d definitions pinned\n", cfg.LockPath, len(now.Entries()))
	case len(changes) > 0:
		fmt.Fprintf(stderr, "mcpgate lock: %d definitions differ from %s; review them with mcpgate lock -diff, accept them with mcpgate lock -update\n", len(changes), cfg.LockPath)
		return 1
	default:
		fmt.Fprintf(stdout, "%s: all %d definitions as pinned\n", cfg.LockPath, len(now.Entries()))
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}

// change is one definition that differs between the lock and now.
type change struct {
	was, now *pin.Entry
}

func (ch change) summary() string {
	switch {
	case ch.was == nil:
		return fmt.Sprintf("new      %s %s %q", ch.now.Server, ch.now.Kind, ch.now.Name)
	case ch.now == nil:
		return fmt.Sprintf("removed  %s %s %q", ch.was.Server, ch.was.Kind, ch.was.Name)
	}
	return fmt.Sprintf("changed  %s %s %q: %v", ch.now.Server, ch.now.Kind, ch.now.Name, pin.ChangedFields(*ch.was, *ch.now))
}

// compare lists the definitions that are new, changed or gone, sorted.
func compare(old, now *pin.Lock) []change {
	var out []change
	for _, e := range now.Entries() {
		was, ok := old.Entry(e.Server, e.Kind, e.Name)
		switch {
		case !ok:
			out = append(out, change{now: &e})
		case was.SHA256 != e.SHA256:
			out = append(out, change{was: &was, now: &e})
		}
	}
	for _, e := range old.Entries() {
		if _, ok := now.Entry(e.Server, e.Kind, e.Name); !ok {
			out = append(out, change{was: &e})
		}
	}
	slices.SortStableFunc(out, func(a, b change) int {
		ea, eb := a.now, b.now
		if ea == nil {
			ea = a.was
		}
		if eb == nil {
			eb = b.was
		}
		return cmpEntries(*ea, *eb)
	})
	return out
}

func cmpEntries(a, b pin.Entry) int {
	for _, p := range [][2]string{{a.Server, b.Server}, {a.Kind, b.Kind}, {a.Name, b.Name}} {
		if p[0] != p[1] {
			if p[0] < p[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}
