# backfill-bench: see README.md.
GO ?= go
PKGS ?= ./...
BENCH ?= BenchmarkBackfill
BENCHTIME ?= 1x
COUNT ?= 1

.PHONY: test bench bench-all lint fuzz

## test: vet and run every test (the CI command)
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 $(PKGS)

## bench: run the backfill benchmarks once each, persist on and off, in benchfmt
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count $(COUNT) ./bench/

## bench-all: every benchmark, including micro-benchmarks and the raw-copy baseline
bench-all:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count $(COUNT) ./bench/...

## lint: formatting and vet
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "not gofmt-ed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## fuzz: fuzz the key encoding for a short while
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzRoundTrip -fuzztime 30s ./bench/memcmp
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./bench/memcmp
