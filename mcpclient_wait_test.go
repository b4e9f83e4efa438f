package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mcpclient's wait-file waits as long as -timeout says: a client that waits
// for the script while another phase runs long is given the time it needs
// (review 1, finding 9: http_stream_unread failed under -race when the
// wait was fixed at 20s).
func TestMcpclientWaitFileHonoursTimeout(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("needs cat as a command to speak to")
	}
	dir := t.TempDir()
	session := filepath.Join(dir, "session.txt")
	os.WriteFile(session, []byte("wait-file "+filepath.Join(dir, "never-created")+"\n"), 0o644)
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	savedStdout, savedStderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = stderr, stderr
	code := mcpClientMain([]string{"-timeout", "100ms", session, "cat"})
	os.Stdout, os.Stderr = savedStdout, savedStderr
	stderr.Close()
	out, _ := os.ReadFile(stderr.Name())
	if code == 0 || !strings.Contains(string(out), "after 100ms") {
		t.Fatalf("mcpclient -timeout 100ms: exit %d, output:\n%s\nwant wait-file to give up after 100ms", code, out)
	}
}
