package main

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// BenchmarkPerfColdStart: the time from starting ten local servers to the
// first answered tools/list. Directly, ten clients each start one server,
// all at once, and the time is the slowest one's: a server's own start, on
// a machine as busy as mcpgate's would be. Through mcpgate, one client
// starts mcpgate in front of the ten; then mcpgate's resident memory, the
// ten servers idle, is reported as rss-MiB.
func BenchmarkPerfColdStart(b *testing.B) {
	dir := b.TempDir()
	var servers []perfServer
	for s := range 10 {
		tools := make([]string, 10)
		for i := range tools {
			tools[i] = perfToolDefinition(s, i)
		}
		name := fmt.Sprintf("s%d", s)
		servers = append(servers, perfServer{name, writeFile(b, dir, name+".json",
			`{"name": "`+name+`", "tools": [`+strings.Join(tools, ", ")+`]}`)})
	}
	b.Run(perfDirect, func(b *testing.B) {
		for range b.N {
			peers := make([]*perfPeer, len(servers))
			errs := make([]error, len(servers))
			var wg sync.WaitGroup
			for i, s := range servers {
				wg.Go(func() {
					peers[i], errs[i] = launchPerfPeer(exec.Command("fakeupstream", s.spec), perfDirect)
					if errs[i] == nil {
						errs[i] = peers[i].client.call("tools/list", nil, make(chan perfAnswer, 1)).err
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			for _, p := range peers {
				if p != nil {
					p.stop()
				}
			}
			if err := errors.Join(errs...); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	for _, variant := range []string{perfGate, perfPolicies} {
		b.Run(variant, func(b *testing.B) {
			var rss float64
			measured := 0 // iterations with an RSS: none without /proc
			for range b.N {
				b.StopTimer()
				cmd := perfGateCommand(b, variant, servers, "", "-log-level", "error")
				b.StartTimer()
				p, err := launchPerfPeer(cmd, variant)
				if err == nil {
					err = p.client.call("tools/list", nil, make(chan perfAnswer, 1)).err
				}
				b.StopTimer()
				if err == nil {
					if now, merr := procMemory(p.hopPID, "VmRSS"); merr == nil {
						rss += now
						measured++
					}
				}
				if p != nil {
					p.stop()
				}
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if measured > 0 {
				b.ReportMetric(rss/float64(measured), "rss-MiB")
			}
		})
	}
}
