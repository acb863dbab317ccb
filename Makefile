# The two commands a newcomer needs are `make run` and `make test`; both install what is
# missing first. `make bench` measures us beside our references (release build).

SWIFT       ?= swift
BENCH_OUT   ?= bench-results
# Where `make run` serves the gallery; PORT=0 picks a free port (the address is printed).
PORT        ?= 8080
# How long `make fuzz` runs each fuzz target, in seconds.
FUZZ_SECONDS ?= 60
SERVE_HOST  ?= 127.0.0.1
# Release builds link the Swift runtime and Foundation statically: a `webimage` start, and each
# renderer child it spawns, then loads 13 fewer shared libraries and ICU's (5 ms less a start;
# docs/benchmarks.md). Every release build here uses the same flags, so no two of them rebuild
# each other's objects.
RELEASE     ?= -c release --static-swift-stdlib

# Where `make gallery` writes the window when there is no display (README's screenshot:
# GALLERY_SHOT=docs/gtk-gallery.png).
GALLERY_SHOT ?= .build/gallery.png

.PHONY: all deps test-deps build run gallery test snippets docs bench bench-yuv fuzz sanitize clean

all: build

# What the main job needs (the codec libraries' -dev packages); `test-deps` adds GTK 4, the
# formats' reference tools and the test servers (scripts/deps.sh lists them).
deps:
	@bash scripts/deps.sh

test-deps:
	@bash scripts/deps.sh --test

build: test-deps
	$(SWIFT) build

# The main job, offline, in the release configuration (the figures it prints are a user's, not a
# debug build's). First the library's report: an origin on loopback serves the demo
# images kept in the repository; the pipeline prefetches them (progress bar), then loads each as
# a 256 px thumbnail twice (from disk, then from memory). Then the image proxy, `webimage serve`,
# with the demo images as its origin: open the printed address for the gallery; Ctrl-C (or
# SIGTERM) stops it gracefully. `exec` makes the server make's own child, so a signal sent to
# it (by .ci/run) is answered by its graceful exit status.
run: deps
	$(SWIFT) build $(RELEASE) --product webimage
	"$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" demo --images Demo/images
	@echo
	@echo "Starting the image proxy over Demo/images: open the address below for the gallery (Ctrl-C stops it)."
	@exec "$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" serve --origin-dir Demo/images --host $(SERVE_HOST) --port $(PORT) --cache-dir .build/serve-cache

# The desktop gallery, webimage-gtk, over the demo images. Without a display ($DISPLAY and
# $WAYLAND_DISPLAY unset) it says so, and renders the window under Xvfb into GALLERY_SHOT
# instead (`--screenshot`: once the thumbnails on screen have loaded); the cairo renderer,
# since Xvfb has no GL.
gallery: test-deps
	$(SWIFT) build --product webimage-gtk
	@bin="$$($(SWIFT) build --show-bin-path)/webimage-gtk"; \
	if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
	  exec "$$bin" Demo/images; \
	else \
	  echo "make gallery: no display (DISPLAY is not set), so no window: rendering it under Xvfb into $(GALLERY_SHOT) instead."; \
	  GSK_RENDERER=cairo NO_AT_BRIDGE=1 xvfb-run -a -s "-screen 0 1280x800x24" \
	    "$$bin" Demo/images --no-disk-cache --size 800x400 --cell 120 --screenshot $(GALLERY_SHOT); \
	fi

# `swift build --build-tests` also builds WebImageSnippets: every ```swift example of README.md,
# the DocC catalogs and the public API's `///` comments, regenerated first from the documentation
# (scripts/extract-snippets.py), so a wrong example fails here, pointing at its line in the doc;
# the README's Package.swift example is evaluated in a scratch folder, and its install lists are
# checked against scripts/deps.sh (scripts/check-readme.py), and no function of Sources/ is over
# 80 lines nor more than 6 over 60 (scripts/function-lengths.py lists them). Then every suite,
# the consumer package (Examples/Consumer) even when a suite failed, and one summary
# (scripts/test.sh).
test: test-deps snippets
	@python3 scripts/extract-snippets.py --check-manifests
	$(SWIFT) build --build-tests
	@python3 scripts/check-readme.py --binary "$$($(SWIFT) build --show-bin-path)/webimage"
	@python3 scripts/function-lengths.py --check
	@SWIFT=$(SWIFT) bash scripts/test.sh

# Regenerates Tests/Snippets/Generated from the documentation (commit the result; CI checks it).
snippets:
	@python3 scripts/extract-snippets.py
	@python3 scripts/extract-snippets.py --stats | head -1

# Hostile input (docs/reliability.md). `make fuzz` builds the libFuzzer targets in Fuzz/ (in
# .build-asan: ASan, UBSan for C, coverage) and runs each for FUZZ_SECONDS; a finding fails it
# and is saved under Fuzz/.artifacts/ (FUZZ_BUILD=release for an optimised build in .build-fuzz).
# `make sanitize` runs the test suite under ASan (+ UBSan for C, sharing .build-asan) and TSan
# (.build-tsan); the normal .build is untouched.
fuzz: deps
	@bash scripts/fuzz.sh build
	@bash scripts/fuzz.sh run $(FUZZ_SECONDS)

sanitize: test-deps
	@bash scripts/sanitize.sh all

# The WebImage product's DocC documentation (Sources/WebImage/WebImage.docc and every public
# `///` comment of the modules it re-exports), warnings as errors: a broken link or symbol
# reference fails. Writes .build/docs/WebImage.doccarchive; see scripts/docs.sh for why it runs
# docc itself rather than through swift-docc-plugin.
docs: deps
	@bash scripts/docs.sh

bench: test-deps
	@bash scripts/bench-deps.sh
	@mkdir -p $(BENCH_OUT)
	$(SWIFT) build $(RELEASE) --product WebImageBenchmarks
	$(SWIFT) build $(RELEASE) --product webimage
	$(SWIFT) build $(RELEASE) --product webimage-gtk-probe
	$(SWIFT) build $(RELEASE) --product webimage-gtk
	BENCH_JSON=$(BENCH_OUT)/latest.json "$$($(SWIFT) build $(RELEASE) --show-bin-path)/WebImageBenchmarks" $(GROUPS) | tee $(BENCH_OUT)/latest.md
	@if [ -z "$(GROUPS)" ] || echo " $(GROUPS) " | grep -q " proxy "; then \
	  echo; echo "The image proxy under wrk, beside nginx image_filter, thumbor and nginx static (see docs/benchmarks.md):"; \
	  python3 Benchmarks/scripts/proxy_bench.py "$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" ../shared/corpus/photos | tee -a $(BENCH_OUT)/latest.md; \
	fi
	@if [ -z "$(GROUPS)" ] || echo " $(GROUPS) " | grep -q " warm "; then \
	  echo; echo "A cached variant beside nginx serving the same bytes, paired rounds (see docs/benchmarks.md):"; \
	  python3 Benchmarks/scripts/warm_bench.py "$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" ../shared/corpus/photos | tee -a $(BENCH_OUT)/latest.md; \
	fi
	@if [ -z "$(GROUPS)" ] || echo " $(GROUPS) " | grep -q " cold "; then \
	  echo; echo "Cold renders at 512 px beside a libvips server, by the original's format (see docs/benchmarks.md):"; \
	  python3 Benchmarks/scripts/cold_bench.py "$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" ../shared/corpus/photos | tee -a $(BENCH_OUT)/latest.md; \
	fi
	@if [ -z "$(GROUPS)" ] || echo " $(GROUPS) " | grep -q " media "; then \
	  echo; echo "Video posters and PDF pages beside ffmpeg and pdftocairo, whole processes (see docs/benchmarks.md):"; \
	  python3 Benchmarks/scripts/media_bench.py "$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" ../shared/corpus/photos | tee -a $(BENCH_OUT)/latest.md; \
	fi
	@if [ -z "$(GROUPS)" ] || echo " $(GROUPS) " | grep -q " memory "; then \
	  echo; echo "webimage serve's memory before, during and 30 s after a 90 s burst of new variants (see docs/benchmarks.md):"; \
	  python3 Benchmarks/scripts/memory_bench.py "$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" ../shared/corpus/photos | tee -a $(BENCH_OUT)/latest.md; \
	fi
	@if [ -z "$(GROUPS)" ] || echo " $(GROUPS) " | grep -q " tracing "; then \
	  echo; echo "What tracing costs the proxy: no tracer, and every request exported over OTLP (see docs/benchmarks.md):"; \
	  python3 Benchmarks/scripts/tracing_bench.py "$$($(SWIFT) build $(RELEASE) --show-bin-path)/webimage" ../shared/corpus/photos | tee -a $(BENCH_OUT)/latest.md; \
	fi
	@if [ -z "$(GROUPS)" ]; then \
	  echo; echo "The disk cache's index design, the SQLite alternative (see docs/benchmarks.md):"; \
	  python3 Benchmarks/scripts/sqlite_index.py | tee -a $(BENCH_OUT)/latest.md; \
	fi

# wi_webp.c's SSE2 RGBA → YUV 4:2:0 beside libyuv's ABGRToI420 and libwebp's own import: the
# planes' differences, an encode's PSNR and size, and the times (docs/benchmarks.md, "RGBA to
# YUV for the WebP encoder"). C only, no Swift build; PHOTO= (a JPEG or PNG) and ROUNDS= to vary.
bench-yuv: deps
	@BENCH_OUT="$(BENCH_OUT)" PHOTO="$(PHOTO)" ROUNDS="$(ROUNDS)" bash Benchmarks/rgba-to-yuv/run.sh

clean:
	$(SWIFT) package clean
