//go:build !linux || !(amd64 || arm64)

package callgrind

// Supported says whether this build can issue client requests.
const Supported = false

// request does nothing where client requests are not built: such a process never
// runs under the harness's callgrind (Check refuses the platform).
func request(*[6]uintptr) uintptr { return 0 }
