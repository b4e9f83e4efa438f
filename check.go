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
	asJSON := fs.Bool("json", false, "print a JSON array, an object per server, instead of a table")
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
	var report []checkEntry
	failed := 0
	for _, st := range g.Statuses() {
		e := checkEntry{Name: st.Name, Transport: st.Transport, Status: "ok"}
		if st.Connected {
			e.Protocol, e.Server, e.InitMS, e.initTime = st.Protocol, st.Server, st.InitTime.Milliseconds(), st.InitTime
		} else {
			failed++
			e.Status, e.Reason = "failed", st.Reason
		}
		report = append(report, e)
	}
	for _, s := range cfg.Servers {
		if s.Disabled {
			report = append(report, checkEntry{Name: s.Name, Transport: s.Type, Status: "disabled"})
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(report)
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, e := range report {
			switch e.Status {
			case "ok":
				fmt.Fprintf(tw, "%s\t%s\tok\t%s\t%s\t%v\n", e.Name, e.Transport, e.Protocol, e.Server, e.initTime.Round(time.Millisecond))
			case "failed":
				fmt.Fprintf(tw, "%s\t%s\tFAILED\t%s\n", e.Name, e.Transport, e.Reason)
			default:
				fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Transport, e.Status)
			}
		}
		tw.Flush()
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "mcpgate check: %d of %d servers failed\n", failed, len(g.Statuses()))
		return 1
	}
	return 0
}

// checkEntry is one server in mcpgate check's report.
type checkEntry struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`          // stdio, http or sse
	Status    string `json:"status"`             // ok, failed or disabled
	Protocol  string `json:"protocol,omitempty"` // ok: the version negotiated
	Server    string `json:"server,omitempty"`   // ok: the name and version it reported
	InitMS    int64  `json:"init_ms,omitempty"`  // ok: how long the handshake took
	Reason    string `json:"reason,omitempty"`   // failed: why

	initTime time.Duration // for the table, which shows it as a duration
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
