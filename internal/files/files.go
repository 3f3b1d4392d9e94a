// Package files writes output files whole or not at all and names them safely.
package files

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// WriteAtomic writes data to a temporary file beside name and renames it over
// name, so readers see the old file or the new one, never a part.
func WriteAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// SafeName turns a ref, a path or a profile name into a file or directory name.
func SafeName(s string) string {
	s = strings.Trim(unsafeChars.ReplaceAllString(s, "-"), "-.")
	if s == "" {
		return "x"
	}
	return s
}
