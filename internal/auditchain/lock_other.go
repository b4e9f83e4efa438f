//go:build !unix

package auditchain

import "os"

// Without flock, nothing keeps two processes from writing one file: each
// would write its own chain into it. One mcpgate per audit file there.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }

const lockable = false
