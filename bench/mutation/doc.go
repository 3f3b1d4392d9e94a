// Package mutation keeps executor mutants (patch files in testdata) and the test
// that applies each to a copy of the tree and requires the suite to catch it.
package mutation
