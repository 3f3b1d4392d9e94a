//go:build linux && (amd64 || arm64)

package callgrind

// Supported says whether this build can issue client requests.
const Supported = true

// request issues the client request in args (the code, then up to five
// arguments) and returns Valgrind's answer, 0 outside Valgrind.
//
//go:noescape
func request(args *[6]uintptr) uintptr
