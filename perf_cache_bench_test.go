package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// perfSlowStart is how long each server of BenchmarkPerfDiscoveryCache
// takes to answer initialize: an npx server's start is often seconds.
const perfSlowStart = "500ms"

// BenchmarkPerfDiscoveryCache: the time from starting mcpgate in front of
// five servers slow to start to its first answered tools/list, cold (an
// empty cache directory: the first start ever, or after the config
// changed) and warm (the directory as the previous start left it: the
// lists come from the discovery cache while the servers start).
func BenchmarkPerfDiscoveryCache(b *testing.B) {
	dir := b.TempDir()
	var servers []perfServer
	for s := range 5 {
		tools := make([]string, 10)
		for i := range tools {
			tools[i] = perfToolDefinition(s, i)
		}
		name := fmt.Sprintf("s%d", s)
		servers = append(servers, perfServer{name, writeFile(b, dir, name+".json",
			`{"name": "`+name+`", "init_delay": "`+perfSlowStart+`", "tools": [`+strings.Join(tools, ", ")+`]}`)})
	}
	// firstList starts mcpgate with its cache in cacheDir, initializes it
	// and has it list the tools; the timer runs only for that.
	firstList := func(b *testing.B, cacheDir string) int {
		b.StopTimer()
		cmd := perfGateCommand(b, perfGate, servers, fmt.Sprintf(`"cache_dir": %q`, cacheDir), "-log-level", "error")
		b.StartTimer()
		p, err := launchPerfPeer(cmd, perfGate)
		var a perfAnswer
		if err == nil {
			a = p.client.call("tools/list", nil, make(chan perfAnswer, 1))
			err = a.err
		}
		b.StopTimer()
		if p != nil {
			p.stop()
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return a.size
	}
	var coldSize int
	b.Run("cold", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			empty, err := os.MkdirTemp(dir, "cold")
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			coldSize = firstList(b, empty)
		}
	})
	b.Run("warm", func(b *testing.B) {
		cache := b.TempDir()
		firstList(b, cache) // what the previous start left
		b.ResetTimer()
		for range b.N {
			if size := firstList(b, cache); coldSize > 0 && size <= coldSize {
				// The same list plus _meta "mcpgate/cached": more bytes.
				b.Fatalf("the warm start's list (%d bytes) was not answered from the cache (cold: %d bytes)", size, coldSize)
			}
		}
	})
}
