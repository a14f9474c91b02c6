# CogniGate. The two commands a fresh machine needs:
#   make dev    run the gateway locally (offline: demo tenant, mock provider, wrangler dev)
#   make test   run every test (host tests of the pure core, then the end-to-end suite on workerd)

SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
# worker-build would otherwise download these from GitHub.
export WASM_BINDGEN_BIN := $(HOME)/.cargo/bin/wasm-bindgen
export ESBUILD_BIN := $(CURDIR)/node_modules/@esbuild/linux-x64/bin/esbuild
# npm's binaryen: offline, run on the final module (about 15% off the gzipped size).
WASM_OPT := $(CURDIR)/node_modules/binaryen/bin/wasm-opt
WASM_OPT_FLAGS := -Os --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
	--enable-mutable-globals --enable-reference-types --enable-multivalue --enable-exception-handling
export WRANGLER_SEND_METRICS := false
# wasm-opt's last output and what it was made from (the input's sha256 and the flags): a build
# whose worker-build output is unchanged copies it instead of running wasm-opt again (about 40 s).
WASM_OPT_CACHE := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)/wasm-opt
# The most gzip -9 bytes of build/index_bg.wasm `make test` accepts (size-check): set a little
# above the measured size, so growth past it is a decision, not an accident. 916,300 after the
# hot-path work; 947,085 after the hardening (fifteen rules: a ledger that renews holds and
# stores settled ids, an iterative cache digest, the image-part scan, the private-host check,
# the fair tenant tables), raised to 955,000 as that decision; 1,000,593 with the cloud platforms
# served (Bedrock's Converse with SigV4 and the AWS event stream, Gemini's generateContent, their
# stream translators, the kinds' fields and key forms), raised to 1,010,000 as that decision;
# 1,010,676 with Vertex's token exchange and Gemini embeddings, raised to 1,015,000 as that decision;
# 1,070,168 with trace export (spans, their JSON and protobuf, the otel setting: +32.0 KB),
# credentials by remaining quota (+12.9 KB), task, agent and restrictions (+15.7 KB), raised to
# 1,075,000 as that decision (docs/benchmark.md, "Module size"). The hot-path goal, 500,000 bytes,
# is not met: see docs/benchmark.md for where the bytes are. 1,075,502 with prompt-cache write
# prices (cache writes split by TTL in the token counts, Anthropic's and Bedrock's breakdowns
# read, the chat translation's write fields, net savings in records, roll-ups and the usage API,
# and their OpenAPI text: +5.9 KB), raised to 1,080,000 as that decision; 1,118,171 with the
# whole stage (prompt-cache breakpoints for Anthropic and Bedrock, cache-write prices, the cached
# share in the cost order, chain presets, fallback links, provider health for callers, the
# platform order: +48.6 KB, most of it serde's readers of the new fields and bodies, the
# breakpoint writer and the OpenAPI text), raised to 1,125,000 as that decision
# (docs/benchmark.md, "Prompt caching, links and platform order, measured").
WASM_GZ_BUDGET := 1125000

.PHONY: setup build size-check dev test test-long schemathesis bench profile print-wasm-opt-flags lint host-test e2e clean

setup:
	@.ci/setup

# Also wrangler's [build] command, so `wrangler dev` and `wrangler deploy` build the same way.
build: setup
	@worker-build --release
	@mkdir -p $(WASM_OPT_CACHE); \
	stamp="$$(sha256sum < build/index_bg.wasm | cut -d' ' -f1) $$($(WASM_OPT) --version) $(WASM_OPT_FLAGS)"; \
	if [[ -f $(WASM_OPT_CACHE)/index_bg.wasm && "$$(cat $(WASM_OPT_CACHE)/input.sha256 2>/dev/null)" == "$$stamp" ]]; then \
		echo "wasm-opt: input unchanged, its last output reused"; \
	else \
		rm -f $(WASM_OPT_CACHE)/input.sha256 && \
		$(WASM_OPT) build/index_bg.wasm -o $(WASM_OPT_CACHE)/index_bg.wasm.tmp $(WASM_OPT_FLAGS) && \
		mv $(WASM_OPT_CACHE)/index_bg.wasm.tmp $(WASM_OPT_CACHE)/index_bg.wasm && \
		echo "$$stamp" > $(WASM_OPT_CACHE)/input.sha256; \
	fi && cp $(WASM_OPT_CACHE)/index_bg.wasm build/index_bg.wasm

# Fails when the built module's gzip -9 size is over WASM_GZ_BUDGET.
size-check: build
	@size=$$(gzip -9 -c build/index_bg.wasm | wc -c); \
	echo "build/index_bg.wasm: $$size bytes gzip -9 (budget $(WASM_GZ_BUDGET))"; \
	if (( size > $(WASM_GZ_BUDGET) )); then \
		echo "over the budget: shrink the module, or raise WASM_GZ_BUDGET in the Makefile as a decision" >&2; \
		exit 1; \
	fi

lint: setup
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings

# The unit tests in src/ and tests/host (the core over fakes, the checks): seconds, no wasm build.
host-test:
	cargo test --lib --test host

# tests/e2e: one binary on workerd, against the built worker.
e2e: build
	cargo test --test e2e

# Every test, then the OpenAPI conformance run (schemathesis, about 2 minutes): the document
# must tell tools the truth on every change, not only in the long mode.
test: lint build size-check
	cargo test
	tests/harness/schemathesis.sh

# The long mode: property tests at 50,000 cases each and the load-with-faults run for 60 s.
test-long: build
	PROPTEST_CASES=50000 cargo test --release --test host properties::
	COGNIGATE_LOAD_SECS=60 cargo test --test e2e load::under_faults:: -- --nocapture

# Schemathesis against the built gateway, every check, from src/api/openapi.json (about 2 minutes).
schemathesis: build
	tests/harness/schemathesis.sh

# Side by side with the floor, LiteLLM and Portkey; writes bench/RESULTS.md (about 10 minutes).
bench: build
	python3 bench/run.py

# V8's CPU profile of the gateway under the bench's load, through workerd's inspector: writes
# target/profile/*.cpuprofile and prints the top 15 functions, the CPU per request by part, the
# boundary crossings per request and what a fresh isolate's first request compiles.
profile: setup
	python3 bench/profile.py

print-wasm-opt-flags:
	@echo $(WASM_OPT_FLAGS)

dev: build
	@.ci/dev

clean:
	rm -rf build target .wrangler
