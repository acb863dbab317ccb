# The two commands a newcomer needs are `make run` and `make test`; both install what is
# missing first. `make bench` measures us beside our references (release build).

SWIFT       ?= swift
BENCH_OUT   ?= bench-results

.PHONY: all deps build run test bench clean

all: build

deps:
	@bash scripts/deps.sh

build: deps
	$(SWIFT) build

# The main job, offline: an origin on loopback serves the demo images kept in the repository;
# the pipeline prefetches them (progress bar), then loads each as a 256 px thumbnail twice (from
# disk, then from memory) and prints a report. The thumbnails land in .build/demo-thumbnails.
run: deps
	$(SWIFT) build --product webimage
	$(SWIFT) run --skip-build webimage demo --images Demo/images
	@$(SWIFT) run --skip-build webimage info .build/demo-thumbnails/*.webp

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: deps
	@bash scripts/bench-deps.sh
	@mkdir -p $(BENCH_OUT)
	$(SWIFT) build -c release --product WebImageBenchmarks
	BENCH_JSON=$(BENCH_OUT)/latest.json $(SWIFT) run -c release --skip-build WebImageBenchmarks $(GROUPS) | tee $(BENCH_OUT)/latest.md
	@echo; echo "The disk cache's index design, the SQLite alternative (see docs/benchmarks.md):"
	@python3 Benchmarks/scripts/sqlite_index.py | tee -a $(BENCH_OUT)/latest.md

clean:
	$(SWIFT) package clean
