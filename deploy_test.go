package main

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDeploySystemdUnit checks deploy/mcpgate.service with systemd's own
// parser, where the machine has one: any complaint (an unknown key, a value
// it cannot parse, which it would ignore at run time) is a failure. The
// ExecStart binary must exist for the check: the test binary stands in.
func TestDeploySystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze here")
	}
	unit, err := os.ReadFile("deploy/mcpgate.service")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(unit, []byte("ExecStart=/usr/local/bin/mcpgate ")) {
		t.Fatal("deploy/mcpgate.service: ExecStart no longer runs /usr/local/bin/mcpgate; update this test")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit = bytes.ReplaceAll(unit, []byte("/usr/local/bin/mcpgate"), []byte(self))
	path := filepath.Join(t.TempDir(), "mcpgate.service")
	if err := os.WriteFile(path, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, analyze, "verify", "--man=no", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify deploy/mcpgate.service: %v\n%s", err, out)
	}
}

// TestDeployContainerImage builds the binary as deploy/Dockerfile says (a
// static one: it runs on an empty base), the image, and runs it: where a
// Docker daemon answers (the build takes a while, so not otherwise).
func TestDeployContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpgate: not with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command here")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker here")
	}
	if err := exec.CommandContext(ctx, docker, "info").Run(); err != nil {
		t.Skip("the Docker daemon does not answer: not building the image")
	}
	build := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "mcpgate"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(filepath.Join(dir, "mcpgate"))
	if err == nil { // ELF: Linux and the like
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("the binary built with CGO_ENABLED=0 asks for a dynamic loader: it would not run FROM scratch")
			}
		}
		f.Close()
	}

	for _, name := range []string{"Dockerfile"} {
		data, err := os.ReadFile(filepath.Join("deploy", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	certs, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		certs = nil // an empty bundle builds as well
	}
	os.WriteFile(filepath.Join(dir, "ca-certificates.crt"), certs, 0o644)
	tag := "mcpgate-deploy-test:" + strings.ToLower(filepath.Base(dir))
	if out, err := exec.CommandContext(ctx, docker, "build", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	defer exec.Command(docker, "rmi", "-f", tag).Run()
	out, err := exec.CommandContext(ctx, docker, "run", "--rm", tag, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "mcpgate ") {
		t.Errorf("docker run %s version: %v\n%s", tag, err, out)
	}
}
