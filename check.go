package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs, c := newFlagSet("mcpgate check [flags]", "Validates the config, connects to every upstream (initialize only),\nprints one line per server, and exits 1 if any failed.", stderr)
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
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	failed := 0
	for _, st := range g.Statuses() {
		if st.Connected {
			fmt.Fprintf(tw, "%s\t%s\tok\t%s\t%s\t%v\n", st.Name, st.Transport, st.Protocol, st.Server, st.InitTime.Round(time.Millisecond))
		} else {
			failed++
			fmt.Fprintf(tw, "%s\t%s\tFAILED\t%s\n", st.Name, st.Transport, st.Reason)
		}
	}
	for _, s := range cfg.Servers {
		if s.Disabled {
			fmt.Fprintf(tw, "%s\t%s\tdisabled\n", s.Name, s.Type)
		}
	}
	tw.Flush()
	if failed > 0 {
		fmt.Fprintf(stderr, "mcpgate check: %d of %d servers failed\n", failed, len(g.Statuses()))
		return 1
	}
	return 0
}

func runTools(args []string, stdout, stderr io.Writer) int {
	fs, c := newFlagSet("mcpgate tools [flags]", "Connects to every upstream, asks each for its tools, and prints them\nas clients see them. Exits 1 if any server could not answer.", stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	refresh := fs.Bool("refresh", false, "wait for every server and ask it, never the discovery cache (what they answer updates it)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	g, _, _, ok := setup(c, stderr, true)
	if !ok {
		return 1
	}
	g.Start()
	if *refresh {
		<-g.Ready()
	} else {
		<-g.Warm() // a server still starting answers from the discovery cache
	}
	defer g.Close()
	tools, errs := g.Tools(context.Background())
	cachedNoted := map[string]bool{}
	for _, t := range tools {
		if !t.Cached.IsZero() && !cachedNoted[t.Server] {
			cachedNoted[t.Server] = true
			fmt.Fprintf(stderr, "mcpgate tools: %s: still starting; its tools are from the discovery cache, %v old (-refresh waits for it)\n", t.Server, time.Since(t.Cached).Round(time.Second))
		}
	}
	if *asJSON {
		type entry struct {
			Name         string          `json:"name"`
			Server       string          `json:"server"`
			UpstreamName string          `json:"upstream_name"`
			Description  string          `json:"description,omitempty"`
			InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
		}
		out := make([]entry, 0, len(tools))
		for _, t := range tools {
			var schema struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			json.Unmarshal(t.Raw, &schema)
			out = append(out, entry{t.Name, t.Server, t.Original, t.Description, schema.InputSchema})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tSERVER\tDESCRIPTION")
		for _, t := range tools {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Server, firstLine(t.Description, 70))
		}
		tw.Flush()
	}
	for _, err := range errs {
		fmt.Fprintln(stderr, "mcpgate tools:", err)
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > max {
		s = s[:max-1] + "…"
	}
	return s
}
