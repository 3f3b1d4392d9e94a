# backfill-bench: see README.md.
GO ?= go
PKGS ?= ./...
BENCH ?= BenchmarkBackfill
BENCHTIME ?= 1x
COUNT ?= 1

ARGS ?=

BASE ?=
HEAD ?=
NIGHTLY_ARGS ?= --rows 20000 --count 3

.PHONY: test bench bench-gotest bench-all compare nightly crashtest lint fuzz mutants

## test: vet and run every test (the CI command)
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 $(PKGS)

## bench: the main job: the quick suite (or the matrix in ARGS) into results/runs/, with a summary
bench:
	$(GO) run ./cmd/benchrun run $(ARGS)

## compare: compare BASE (a ref or results) with HEAD (default: the working tree): make compare BASE=main [MEASURE=instructions]
MEASURE ?= time
compare:
	@test -n "$(BASE)" || { echo "usage: make compare BASE=<ref or results> [HEAD=<ref or results>] [MEASURE=time|instructions] [ARGS=...]"; exit 2; }
	$(GO) run ./cmd/benchrun compare --measure $(MEASURE) $(ARGS) $(BASE) $(HEAD)

## nightly: the nightly matrix (small by default: NIGHTLY_ARGS), recorded in results/history
nightly:
	$(GO) run ./cmd/benchrun nightly $(NIGHTLY_ARGS)

## crashtest: random power losses on small jobs, every scan and persist mode (ARGS: e.g. --points 200 --seed 7)
crashtest:
	$(GO) run ./cmd/benchrun crashtest $(ARGS)

## mutants: apply each executor mutant (bench/mutation/testdata) to a copy of the tree and require the suite to catch it; logs the score (slow: nightly)
mutants:
	$(GO) test -count=1 -timeout 120m -v -run TestMutants ./bench/mutation -mutants

## bench-gotest: the backfill benchmarks straight from go test, benchfmt on stdout
bench-gotest:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count $(COUNT) ./bench/

## bench-all: every benchmark, including micro-benchmarks and the raw-copy baseline
bench-all:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count $(COUNT) ./bench/...

## lint: formatting and vet
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "not gofmt-ed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## fuzz: fuzz the key encoding and the results reader for a short while
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzRoundTrip -fuzztime 30s ./bench/memcmp
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./bench/memcmp
	$(GO) test -run '^$$' -fuzz FuzzReadFiles -fuzztime 30s ./contract
	$(GO) test -run '^$$' -fuzz FuzzReadTraces -fuzztime 30s ./contract
