//go:build unix

package main

import (
	"fmt"
	"os"
)

// writableWarning warns about a config file that group or others may
// write: the config names the commands mcpgate runs, with the secrets it is
// given, so whoever can write it can run anything as this user. It is a
// warning, not a refusal: shared setups (a group-owned directory of
// configs) exist, and the operator should hear of it, not be stopped.
func writableWarning(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o022 == 0 {
		return ""
	}
	return fmt.Sprintf("the file is writable by group or others (mode %v): whoever can write it chooses the commands mcpgate runs; fix with: chmod go-w %s", fi.Mode().Perm(), path)
}
