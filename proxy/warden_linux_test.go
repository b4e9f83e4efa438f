package proxy

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		stat string
		want proc
		ok   bool
	}{
		{"42 (node) S 7 42 42 0 -1 4194560", proc{pid: 42, ppid: 7, pgrp: 42}, true},
		{"42 (a) b (c)) Z 7 9 9 0", proc{pid: 42, ppid: 7, pgrp: 9, zombie: true}, true},
		{"42 (my server) R 1 1", proc{pid: 42, ppid: 1, pgrp: 1}, true},
		{"42 (cut", proc{}, false},
		{"42 (x) S 7", proc{}, false},
		{"42 (x) S seven 9", proc{}, false},
	}
	for _, tt := range tests {
		got, ok := parseStat(42, []byte(tt.stat))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tt.stat, got, ok, tt.want, tt.ok)
		}
	}
}

// TestDescendants finds a child and a grandchild.
func TestDescendants(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var grandchild int
	if _, err := fmt.Fscan(out, &grandchild); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(grandchild, syscall.SIGKILL)
	var pids []int
	for _, p := range descendants(os.Getpid()) {
		pids = append(pids, p.pid)
	}
	if !slices.Contains(pids, cmd.Process.Pid) || !slices.Contains(pids, grandchild) {
		t.Errorf("descendants = %v; want the child %d and the grandchild %d among them", pids, cmd.Process.Pid, grandchild)
	}
}
