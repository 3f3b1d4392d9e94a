package callgrind

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Costs are the instructions (event Ir) of one callgrind output file by function:
// each function's own (Self), and the inclusive cost of its calls by callee (Calls).
type Costs struct {
	Self  map[string]uint64
	Calls map[string]map[string]uint64 // caller → callee → inclusive instructions
}

// ReadFunctions reads the instructions of a callgrind output file by function,
// each function's own (not those of what it called).
func ReadFunctions(name string) (map[string]uint64, error) {
	c, err := ReadCosts(name)
	return c.Self, err
}

// ReadCosts reads a callgrind output file's costs by function: the cost lines
// under each fn= line are its own, except the line after each calls= line, which
// is the inclusive cost of a call to the function the cfn= line before it named.
// Compressed names ("fn=(12)") resolve to their first spelling.
func ReadCosts(name string) (Costs, error) {
	c := Costs{Self: map[string]uint64{}, Calls: map[string]map[string]uint64{}}
	f, err := os.Open(name)
	if err != nil {
		return c, fmt.Errorf("callgrind output: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	names := map[string]string{} // "(12)" → name
	fn, callee, call := "", "", false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		switch ch := line[0]; {
		case ch >= '0' && ch <= '9' || ch == '+' || ch == '-' || ch == '*':
			fields := strings.Fields(line)
			if len(fields) < 2 || fn == "" {
				call = false
				continue // a position without costs
			}
			v, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return c, fmt.Errorf("callgrind output %s:%d: %q: %w", name, n, line, err)
			}
			if call {
				call = false // the call's inclusive cost: the callee's, not fn's own
				if c.Calls[fn] == nil {
					c.Calls[fn] = map[string]uint64{}
				}
				c.Calls[fn][callee] += v
				continue
			}
			c.Self[fn] += v
		case strings.HasPrefix(line, "fn="):
			fn = resolve(names, line[len("fn="):])
		case strings.HasPrefix(line, "cfn="):
			callee = resolve(names, line[len("cfn="):])
		case strings.HasPrefix(line, "calls="):
			call = true
		}
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("callgrind output %s: %w", name, err)
	}
	return c, nil
}

// Within is the instructions spent in the functions that in selects: their own,
// and those of their calls to the functions that leaf selects (inclusive). Other
// calls are left out: callgrind's call tree takes a goroutine switch inside a call
// (a preemption at a function's stack check) for part of that call, and a return
// to another goroutine for a call, so only calls that cannot switch (leaf
// functions: a compare, a copy) are safe to attribute.
func (c Costs) Within(in, leaf func(fn string) bool) uint64 {
	var sum uint64
	for fn, v := range c.Self {
		if in(fn) {
			sum += v
		}
	}
	for fn, callees := range c.Calls {
		if !in(fn) {
			continue
		}
		for callee, v := range callees {
			if !in(callee) && leaf(callee) {
				sum += v
			}
		}
	}
	return sum
}

// Unrecursed is a function's name without the recursion depth callgrind appends
// ("f'2" is f called from within f).
func Unrecursed(fn string) string {
	i := strings.LastIndexByte(fn, '\'')
	if i < 0 || i == len(fn)-1 {
		return fn
	}
	if _, err := strconv.Atoi(fn[i+1:]); err != nil {
		return fn
	}
	return fn[:i]
}

// resolve reads "(id) name", "(id)" or "name", remembering ids' names.
func resolve(names map[string]string, s string) string {
	if !strings.HasPrefix(s, "(") {
		return s
	}
	id, name, ok := strings.Cut(s, ")")
	id += ")"
	if !ok {
		return s
	}
	if name = strings.TrimSpace(name); name != "" {
		names[id] = name
		return name
	}
	if known, ok := names[id]; ok {
		return known
	}
	return "fn" + id
}
