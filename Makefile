# The two commands a newcomer needs are `make run` and `make test`; both install what is
# missing first. `make bench` measures us beside our references (release build).

SWIFT       ?= swift
DEMO_IMAGES := $(sort $(wildcard Demo/images/*))
BENCH_OUT   ?= bench-results

.PHONY: all deps build run test bench clean

all: build

deps:
	@bash scripts/deps.sh

build: deps
	$(SWIFT) build

DEMO_OUT    ?= .build/demo-thumbnails

# The main job at this stage: inspect the demo images the repository ships, then make a 256 px
# WebP thumbnail of each (decoded at reduced scale where the format allows, oriented, resized).
run: deps
	$(SWIFT) build --product webimage
	$(SWIFT) run --skip-build webimage info $(DEMO_IMAGES)
	@mkdir -p $(DEMO_OUT)
	@echo; echo "256 px thumbnails in $(DEMO_OUT):"
	@for image in $(DEMO_IMAGES); do \
		name=$$(basename "$${image%.*}"); \
		$(SWIFT) run --skip-build webimage convert "$$image" "$(DEMO_OUT)/$$name.webp" --resize 256x256 --quality 80 || exit 1; \
	done
	@$(SWIFT) run --skip-build webimage info $(DEMO_OUT)/*.webp

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
